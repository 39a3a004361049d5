"""Drift between two commits (``slimebook.drift``), ``sources diff`` / ``sources repin``, the source-check page.

The fixture upstream is built here: commit ``old`` and commit ``new`` that pushes functions down,
edits one, deletes one, renames a file and deletes another.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import textwrap
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from conftest import commit_all, copy_root, git
from slimebook.cli import main
from slimebook.drift import (
    Cited,
    Drift,
    DriftChecker,
    Edit,
    RevisionError,
    Status,
    apply_edits,
    book_citations,
    format_runs,
    plan_edits,
    resolve_commit,
    summarize,
)
from slimebook.drift.model import compress_lines
from slimebook.drift.notes import NOTE_LINE, NOTE_PLACE, note_citations
from slimebook.drift.relocate import map_line, map_range, occurrences, places, relocate, shift_emphasize
from slimebook.lock import LockError, SourceLock, load_lock, repin_lock_text, update_lock_file
from slimebook.names import SourceNames
from slimebook.store import SourceStore

SLIME = SourceNames("slime")

CORE_OLD = textwrap.dedent('''\
    def first():
        return 0


    def alpha():
        return 1


    def beta(x):
        y = x + 1
        return y


    class Box:
        def get(self):
            return self.value

        def put(self, v):
            self.value = v


    def doomed():
        pass
    ''')

# Two comment lines pushed in above alpha (everything below moves by 4), beta edited, doomed
# deleted, fresh added.
CORE_NEW = textwrap.dedent('''\
    def first():
        return 0


    # a comment
    # pushed in


    def alpha():
        return 1


    def beta(x):
        y = x + 2
        return y


    class Box:
        def get(self):
            return self.value

        def put(self, v):
            self.value = v


    def fresh():
        return 3
    ''')

#: The lone-CR case (tests/fixtures/cases/lone-cr.py): ``target`` is lines 7–8 once the CR (line 4) ends a line.
CR_FILE = (Path(__file__).parent / "fixtures" / "cases" / "lone-cr.py").read_bytes()

DUP_OLD = "a = 0\nx = 1\nb = 0\nc = 0\nd = 0\nx = 1\n"
DUP_NEW = "x = 1\na = 0\nb = 0\nc = 0\nd = 0\ne = 0\nx = 1\n"
#: Edited in place: the same number of lines, one of them different.
INPLACE_OLD = "a = 1\nb = 2\nc = 3\n"
INPLACE_NEW = "a = 1\nb = 20\nc = 3\n"
KEEP = 'def keep():\n    return "same"\n\n\ndef other():\n    return "also"\n'
#: Renamed (pkg/old_name.py → pkg/new_name.py) and edited: keep stays, edited and lowered change (to a text that sorts
#: after the old one, and before it: the texts are compared for equality, not order), dropped goes.
OLD_NAME = ('def keep():\n    return "the same text in both"\n\n\ndef edited():\n    return 1\n\n\n'
            'def dropped():\n    return 2\n\n\ndef lowered():\n    return 1\n')
NEW_NAME = ('def keep():\n    return "the same text in both"\n\n\ndef edited():\n    return 2\n\n\n'
            'def lowered():\n    return 0\n')
#: A method whose class was renamed (C → B, A → Z): the symbol is gone, a definition with its last name remains; a
#: property that gained a setter: its name became ambiguous.
NAMES_OLD = ("class C:\n    def run(self):\n        return 1\n\n\nclass P:\n    @property\n    def x(self):\n"
             "        return 1\n\n\ndef g():\n    return 2\n\n\nclass A:\n    def stop(self):\n        pass\n")
NAMES_NEW = ("class B:\n    def run(self):\n        return 1\n\n\nclass P:\n    @property\n    def x(self):\n"
             "        return 1\n\n    @x.setter\n    def x(self, v):\n        pass\n\n\ndef g():\n    return 1\n"
             "\n\nclass Z:\n    def stop(self):\n        pass\n")
#: Renamed (pkg/encoded.py → pkg/recoded.py) and no longer valid UTF-8 at the new commit.
ENCODED = "".join(f"line_{i} = {i}\n" for i in range(20)).encode()
#: 70 one-line functions (210 lines); the new commit deletes f10 (old lines 31-33).
LONG_OLD = "".join(f"def f{k}():\n    pass\n\n" for k in range(70))
LONG_NEW = "".join(f"def f{k}():\n    pass\n\n" for k in range(70) if k != 10)


@dataclasses.dataclass
class Upstream:
    path: Path
    old: str
    new: str
    third: str  # a later commit never fetched by the tests

    def lock_text(self, commit: str, previous: str | None = None) -> str:
        prev = f'previous_commit = "{previous}"\n' if previous else ""
        return (
            "# The source lock: a comment that must survive a re-pin.\n\n"
            "[slime]\n"
            f'url = "{self.path.as_posix()}"\n'
            f'commit = "{commit}"  # the pin\n'
            f"{prev}"
            'license = "Apache-2.0"\n'
            "# permalink template\n"
            'blob_url = "https://example.invalid/slime/blob/{commit}/{path}{anchor}"\n'
        )


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    base = tmp_path_factory.mktemp("drift-git")
    repo = base / "upstream"
    (repo / "pkg").mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "pkg" / "core.py").write_text(CORE_OLD)
    (repo / "pkg" / "dup.py").write_text(DUP_OLD)
    (repo / "pkg" / "renamed.py").write_text(KEEP)
    (repo / "pkg" / "deleted.py").write_text("def bye():\n    pass\n")
    (repo / "pkg" / "README.md").write_text("# pkg\n")
    (repo / "pkg" / "cr.py").write_bytes(CR_FILE)
    (repo / "pkg" / "inplace.py").write_text(INPLACE_OLD)
    (repo / "pkg" / "old_name.py").write_text(OLD_NAME)
    (repo / "pkg" / "names.py").write_text(NAMES_OLD)
    (repo / "pkg" / "unparsable.py").write_text("def f(:\n    pass\n")
    (repo / "pkg" / "empty.py").write_text("")
    (repo / "pkg" / "grows.py").write_text("")
    (repo / "pkg" / "emptied.py").write_text("x = 1\n")
    (repo / "pkg" / "shrinks.py").write_text("a = 1\nb = 2\nc = 3\n")
    (repo / "pkg" / "encoded.py").write_bytes(ENCODED)
    (repo / "pkg" / "long.py").write_text(LONG_OLD)
    old = commit_all(repo, "old")
    (repo / "pkg" / "core.py").write_text(CORE_NEW)
    (repo / "pkg" / "cr.py").write_bytes(b"# one line pushes target down\n" + CR_FILE)
    (repo / "pkg" / "dup.py").write_text(DUP_NEW)
    (repo / "pkg" / "inplace.py").write_text(INPLACE_NEW)
    (repo / "pkg" / "names.py").write_text(NAMES_NEW)
    (repo / "pkg" / "grows.py").write_text("x = 1\n")
    (repo / "pkg" / "emptied.py").write_text("")
    (repo / "pkg" / "shrinks.py").write_text("a = 1\nc = 3\n")
    git("mv", "pkg/old_name.py", "pkg/new_name.py", cwd=repo)
    (repo / "pkg" / "new_name.py").write_text(NEW_NAME)
    git("mv", "pkg/encoded.py", "pkg/recoded.py", cwd=repo)
    (repo / "pkg" / "recoded.py").write_bytes(ENCODED + b"# caf\xe9 in Latin-1\n")
    (repo / "pkg" / "long.py").write_text(LONG_NEW)
    git("mv", "pkg/renamed.py", "pkg/moved_here.py", cwd=repo)
    git("rm", "--quiet", "pkg/deleted.py", cwd=repo)
    new = commit_all(repo, "new")
    (repo / "pkg" / "README.md").write_text("# pkg, later\n")
    third = commit_all(repo, "third")
    return Upstream(repo, old, new, third)


def _fetched(upstream: Upstream, root: Path | None = None) -> tuple[SourceStore, SourceStore]:
    lock = SourceLock("slime", upstream.path.as_posix(), upstream.old, "Apache-2.0", "https://x/{commit}/{path}{anchor}")
    old, new = SourceStore(lock, root=root), SourceStore(dataclasses.replace(lock, commit=upstream.new), root=root)
    old.fetch()
    new.fetch()
    return old, new


@pytest.fixture
def stores(cache: Path, upstream: Upstream) -> tuple[SourceStore, SourceStore]:
    """Both commits fetched into the test's own cache (``SLIMEBOOK_CACHE``)."""
    return _fetched(upstream)


@pytest.fixture(scope="module")
def module_stores(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream):
    """Both commits fetched once for the module's checker tests (they only read)."""
    old, new = _fetched(upstream, tmp_path_factory.mktemp("drift-cache"))
    yield old, new
    old.close()
    new.close()


@pytest.fixture
def checker(module_stores: tuple[SourceStore, SourceStore]) -> DriftChecker:
    return DriftChecker(*module_stores)


def check(checker: DriftChecker, path: str = "pkg/core.py", **kw: str):
    kind = kw.pop("kind", "directive")
    return checker.check(Cited(kind=kind, path=path, **kw))


# -- the model, without a store ---------------------------------------------------------------------------
def test_compress_lines_joins_consecutive_numbers_only() -> None:
    assert compress_lines([50, 46, 48, 47, 46]) == "46-48,50"
    assert compress_lines([1, 3, 4]) == "1,3-4"  # the second run grows, not the first
    assert compress_lines([3, 5, 7]) == "3,5,7"
    assert compress_lines([7]) == "7" and compress_lines([]) == ""
    assert compress_lines([300, 301, 302, 304]) == "300-302,304"  # numbers above 256: equal, not identical


def test_format_runs_writes_one_line_runs_as_one_number() -> None:
    assert format_runs([(81, 104)]) == "81-104"
    assert format_runs([(81, 90), (95, 95)]) == "81-90,95"
    # line numbers above 256 are distinct int objects when read from text: equal, not identical
    assert format_runs([(int("300"), int("300")), (int("301"), int("310"))]) == "300,301-310"


#: Opcodes of an old file of 7 lines and a new one of 6 (0-based, half-open): lines 1-2 equal, 3-4 deleted, 5-6
#: equal (now 3-4), 7 replaced by two lines (now 5-6).
OPCODES = [("equal", 0, 2, 0, 2), ("delete", 2, 4, 2, 2), ("equal", 4, 6, 2, 4), ("replace", 6, 7, 4, 6)]


@pytest.mark.parametrize(("line", "edge", "new"), [
    (1, "start", 1), (2, "end", 2),  # equal: the twin line
    (3, "start", 3), (3, "end", 2), (4, "end", 2),  # deleted: after the gap / one before it
    (5, "start", 3), (6, "end", 4),
    (7, "start", 5), (7, "end", 6),  # replaced: the first / last line of the replacement
    (8, "start", 7),  # past the old end: after the new end
])
def test_map_line(line: int, edge: str, new: int) -> None:
    assert map_line(OPCODES, line, edge) == new


def test_map_line_without_opcodes_and_map_range() -> None:
    assert map_line([], 9, "start") == 9
    assert map_range(OPCODES, 3, 4) == (3, 2)  # a deleted range: start after end
    assert map_range(OPCODES, 2, 7) == (2, 6)


def test_occurrences() -> None:
    assert occurrences(["x", "a", "b", "a", "b", "a"], ["a", "b"]) == [2, 4]
    assert occurrences(["a", "b", "a"], ["a"]) == [1, 3]  # the last line too
    assert occurrences(["a"], ["a", "a"]) == [] and occurrences(["a"], []) == []
    assert occurrences(["a", "a", "c"], ["a", "b"]) == []  # the first line alone is not a match


def test_places_shows_at_most_six() -> None:
    assert places([1, 7]) == "L1, L7"
    assert places(range(1, 7)) == "L1, L2, L3, L4, L5, L6"
    assert places(range(1, 8)) == "L1, L2, L3, L4, L5, L6, …"


def _opcodes(old: list[str], new: list[str]):
    return difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


DUP_OLD_LINES = DUP_OLD.splitlines()  # a = 0, x = 1, b = 0, c = 0, d = 0, x = 1
DUP_NEW_LINES = DUP_NEW.splitlines()  # x = 1, a = 0, b = 0, c = 0, d = 0, e = 0, x = 1


@pytest.mark.parametrize(("runs", "found", "note"), [
    (((6, 6),), ((7, 7),), "the cited text occurs 2 times (L1, L7); chose L7, nearest to the old position "
                           "(L6 → L7 by line diff)"),
    # line 2 was deleted where it stood: the line diff carries it to L3, nearer to L1 than to L7
    (((2, 2),), ((1, 1),), "the cited text occurs 2 times (L1, L7); chose L1, nearest to the old position "
                           "(L2 → L3 by line diff)"),
    (((2, 2), (6, 6)), ((1, 1), (7, 7)), "runs moved separately; L2 occurs 2 times (L1, L7); chose L1, nearest "
                                         "to the old position; L6 occurs 2 times (L1, L7); chose L7, nearest to "
                                         "the old position"),
    (((3, 5),), ((3, 5),), ""),  # b, c, d: still in place
])
def test_relocate_notes(runs, found, note: str) -> None:
    assert relocate(DUP_OLD_LINES, DUP_NEW_LINES, runs, _opcodes(DUP_OLD_LINES, DUP_NEW_LINES)) == (found, note)


def test_relocate_ties_go_to_the_old_line_then_to_the_earliest() -> None:
    old = ["o", "o", "o", "x", "o", "o", "o"]
    new = ["x", "n", "n", "n", "x", "n", "n"]  # x at L1 and L5, not at its old L4
    # one line deleted above: the line diff carries L4 to L3, as far from L1 as from L5; L5 is nearer the old L4
    shifted = [("delete", 0, 1, 0, 0), ("equal", 1, 7, 0, 6), ("insert", 7, 7, 6, 7)]
    assert relocate(old, new, ((4, 4),), shifted) == (((5, 5),), "the cited text occurs 2 times (L1, L5); chose L5, "
                                                                 "nearest to the old position (L4 → L3 by line diff)")
    # L2 and L6 equally far from L4 both ways: the earliest
    new = ["n", "x", "n", "n", "n", "x", "n"]
    assert relocate(old, new, ((4, 4),), [("replace", 0, 3, 0, 3), ("equal", 3, 7, 3, 7)])[0] == ((2, 2),)


def test_relocate_two_runs_shifted_together_when_the_text_repeats() -> None:
    old = ["a", "b", "x", "c", "d"]
    twice = old + old
    assert relocate(old, twice, ((1, 2), (4, 5)), _opcodes(old, twice)) == (
        ((1, 2), (4, 5)), "the cited text occurs 2 times (L1, L6); kept in place, although the line diff carries L1 to "
                          "L1")
    # one line dropped above, then the whole text twice: the shift nearest to the first run's carried line wins
    old = ["q", "a", "b", "x", "y", "w", "c", "d"]
    new = old[1:] + old[1:]
    assert relocate(old, new, ((2, 3), (7, 8)), _opcodes(old, new)) == (
        ((1, 2), (6, 7)), "the cited text occurs 2 times (L1, L8); chose L1, nearest to the old position (L2 → L1 by "
                          "line diff)")


def test_relocate_refuses_runs_that_would_overlap_or_swap() -> None:
    assert relocate(["p", "q", "r"], ["r", "p"], ((1, 1), (3, 3)), _opcodes(["p", "q", "r"], ["r", "p"])) == (None, "")
    # both runs found only on the same line
    assert relocate(["a", "b", "a"], ["a"], ((1, 1), (3, 3)), _opcodes(["a", "b", "a"], ["a"])) == (None, "")
    assert relocate(["a", "b"], ["a"], ((1, 1), (2, 2)), _opcodes(["a", "b"], ["a"])) == (None, "")  # b is gone
    # the runs found separately would share line 3 (a, b, c and c, d): refused, though the second ends later
    old, new = ["a", "b", "c", "q", "c", "d"], ["a", "b", "c", "d"]
    assert relocate(old, new, ((1, 3), (5, 6)), _opcodes(old, new)) == (None, "")


@pytest.mark.parametrize(("spec", "new"), [
    ("1,6", "1,10"), ("5-6", "9-10"), ("1-2,5", "1-2,9"),
    ("2-5", "2,9"),  # a range across runs that moved apart: respelled line by line
    ("1-6", "1-2,9-10"),
    ("3", None), ("7", None),  # outside the runs
    ("", None), (None, None), ("x-y", None), ("6-5", None),  # empty or malformed
])
def test_shift_emphasize(spec: str | None, new: str | None) -> None:
    assert shift_emphasize(spec, ((1, 2), (5, 6)), ((1, 2), (9, 10))) == new


def test_shift_emphasize_keeps_a_range_across_runs_that_moved_together() -> None:
    assert shift_emphasize("1-6", ((1, 2), (5, 6)), ((3, 4), (7, 8))) == "3-8"


CITED = Cited(kind="directive", path="pkg/core.py", lines="5-6")


@pytest.mark.parametrize(("drift", "summary"), [
    (Drift(CITED, Status.UNCHANGED, old_runs=((5, 6),), new_runs=((5, 6),)), "unchanged L5–L6"),
    (Drift(CITED, Status.UNCHANGED, old_runs=(), new_runs=()), "unchanged"),  # an empty file, cited whole
    (Drift(CITED, Status.MOVED, old_runs=((5, 6),), new_runs=((9, 10),), note="n"), "moved L5–L6 → L9–L10 (n)"),
    (Drift(CITED, Status.CHANGED, old_runs=((5, 6),), new_runs=((9, 11),)), "changed L5–L6 → L9–L11"),
    (Drift(CITED, Status.CHANGED, old_runs=((5, 6),), note="its lines were deleted"),
     "changed (its lines were deleted)"),
    (Drift(CITED, Status.GONE, old_runs=((5, 6),), note="at abc1234: gone"), "gone (at abc1234: gone)"),
    (Drift(CITED, Status.BROKEN, note="bad"), "broken (bad)"),
])
def test_summary_lines_per_status(drift: Drift, summary: str) -> None:
    assert drift.summary() == summary


def test_new_lines_only_for_moved_or_unchanged_line_citations() -> None:
    runs = ((9, 10),)
    assert Drift(CITED, Status.MOVED, old_runs=((5, 6),), new_runs=runs).new_lines == "9-10"
    assert Drift(CITED, Status.UNCHANGED, old_runs=runs, new_runs=runs).new_lines == "9-10"
    assert Drift(CITED, Status.CHANGED, old_runs=((5, 6),), new_runs=runs).new_lines is None
    symbol = Cited(kind="directive", path="pkg/core.py", pyobject="alpha")
    assert Drift(symbol, Status.MOVED, old_runs=((5, 6),), new_runs=runs).new_lines is None
    assert Drift(CITED, Status.MOVED, old_runs=((5, 6),), new_runs=()).new_lines is None


def test_diff_has_two_lines_of_context() -> None:
    d = Drift(CITED, Status.CHANGED, old_runs=((1, 6),), new_runs=((1, 6),), old_text=tuple("abcdef"),
              new_text=("a", "b", "c", "D", "e", "f"), old_label="p@old", new_label="p@new")
    assert d.diff() == "--- p@old L1–L6\n+++ p@new L1–L6\n@@ -2,5 +2,5 @@\n b\n c\n-d\n+D\n e\n f"
    assert d.diff(reverse=True).startswith("--- p@new L1–L6\n+++ p@old L1–L6\n@@ -2,5 +2,5 @@\n b\n c\n-D\n+d\n")
    same = dataclasses.replace(d, new_text=d.old_text)
    assert same.diff() == "" and same.diff(reverse=True) == ""


def test_citations_and_drifts_are_frozen_and_hashable() -> None:
    drift = Drift(CITED, Status.MOVED)
    assert len({CITED, dataclasses.replace(CITED), drift, dataclasses.replace(drift)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        CITED.line = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        drift.note = "x"  # type: ignore[misc]


def test_where_and_describe() -> None:
    occurrence = Cited(kind="occurrence", path="pkg/core.py", pyobject="alpha", ident="occ-1")
    assert (occurrence.line, occurrence.index, occurrence.where) == (0, 0, "occ-1")
    assert Cited(kind="occurrence", path="p").where == "?"
    assert Cited(kind="role", path="p", file=Path("a.md"), line=7).where == "a.md:7"
    assert CITED.describe() == "pkg/core.py :lines: 5-6"
    assert occurrence.describe() == "pkg/core.py :pyobject: alpha"
    assert Cited(kind="role", path="pkg/README.md").describe() == "pkg/README.md"


# -- :lines: -------------------------------------------------------------------------------------------
def test_lines_unchanged(checker: DriftChecker) -> None:
    d = check(checker, lines="1-2")
    assert d.status is Status.UNCHANGED and d.new_runs == ((1, 2),) and d.diff() == ""


def test_lines_moved_with_emphasis(checker: DriftChecker) -> None:
    d = check(checker, lines="5-6,15-16", emphasize="6,15-16")
    assert d.status is Status.MOVED
    assert d.new_runs == ((9, 10), (19, 20)) and d.new_lines == "9-10,19-20"
    assert d.new_emphasize == "10,19-20"
    assert check(checker, lines="5-6", emphasize="5,6").new_emphasize == "9,10"  # the writer's spelling kept
    assert check(checker, lines="5-6", emphasize="7").new_emphasize is None  # outside: left alone
    assert d.note == ""


def test_lines_changed_has_a_unified_diff_and_a_counterpart(checker: DriftChecker) -> None:
    d = check(checker, lines="9-11")
    assert d.status is Status.CHANGED
    assert d.new_runs == ((13, 15),)  # the counterpart the line diff suggests
    assert d.summary() == "changed L9–L11 → L13–L15 (not found verbatim; → is the counterpart by line diff)"
    assert "-    y = x + 1\n+    y = x + 2" in d.diff()
    assert d.diff().startswith(f"--- pkg/core.py@{checker.old.lock.short} L9–L11\n+++ pkg/core.py@")
    assert "+    y = x + 1" in d.diff(reverse=True)


def test_multi_run_lines_whose_second_run_changed_is_changed(checker: DriftChecker) -> None:
    d = check(checker, lines="1-2,9-11")  # first() unchanged, beta's body edited
    assert d.status is Status.CHANGED
    assert d.old_runs == ((1, 2), (9, 11)) and d.new_runs == ((1, 2), (13, 15))
    assert d.note == "not found verbatim; → is the counterpart by line diff"
    d = check(checker, lines="9-11,15-16")  # the first run changed, the second (Box.get) only moved
    assert d.status is Status.CHANGED and d.new_runs == ((13, 15), (19, 20))


def test_multi_run_lines_moved_separately(checker: DriftChecker) -> None:
    d = check(checker, lines="1-2,5-6")  # first() stays at 1-2, alpha moves down by 4
    assert d.status is Status.MOVED and d.new_runs == ((1, 2), (9, 10)) and d.new_lines == "1-2,9-10"
    assert d.note == "runs moved separately"  # each run found once: nothing more to say


def test_file_edited_in_place_with_the_same_line_count(checker: DriftChecker) -> None:
    whole = check(checker, path="pkg/inplace.py")
    assert whole.status is Status.CHANGED
    assert whole.old_runs == ((1, 3),) and whole.new_runs == ((1, 3),)
    assert whole.new_text == ("a = 1", "b = 20", "c = 3")
    lines = check(checker, path="pkg/inplace.py", lines="2")
    assert lines.status is Status.CHANGED and lines.new_runs == ((2, 2),)
    kept = check(checker, path="pkg/inplace.py", lines="3")
    assert kept.status is Status.UNCHANGED and kept.new_runs == ((3, 3),)
    assert check(checker, path="pkg/moved_here.py").status is Status.BROKEN  # absent at the old commit


def test_lines_replaced_block_is_changed_not_gone(checker: DriftChecker) -> None:
    d = check(checker, lines="22-23")  # doomed, replaced by fresh
    assert d.status is Status.CHANGED and d.new_runs == ((26, 27),)
    assert "-def doomed():\n-    pass\n+def fresh():\n+    return 3" in d.diff()


def test_lines_ambiguous_match_takes_the_nearest_and_says_so(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/dup.py", lines="6")
    assert d.status is Status.MOVED and d.new_runs == ((7, 7),)
    assert "occurs 2 times (L1, L7)" in d.note and "chose L7" in d.note


def test_lines_still_in_place_stay_even_when_ambiguous(checker: DriftChecker) -> None:
    d = check(checker, lines="3-4")  # two blank lines: they occur everywhere
    assert d.status is Status.UNCHANGED and d.new_runs == ((3, 4),) and "kept in place" in d.note


def test_lines_past_the_end_at_the_old_commit_is_broken(checker: DriftChecker) -> None:
    d = check(checker, lines="90-99")
    assert d.status is Status.BROKEN and "past the end" in d.note


# -- :pyobject: ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("symbol", "status", "old_runs", "new_runs"),
    [
        ("first", Status.UNCHANGED, ((1, 2),), ((1, 2),)),
        ("alpha", Status.MOVED, ((5, 6),), ((9, 10),)),
        ("Box.put", Status.MOVED, ((18, 19),), ((22, 23),)),
        ("beta", Status.CHANGED, ((9, 11),), ((13, 15),)),
        ("doomed", Status.GONE, ((22, 23),), None),
    ],
)
def test_pyobject_statuses(checker: DriftChecker, symbol, status, old_runs, new_runs) -> None:
    d = check(checker, pyobject=symbol)
    assert (d.status, d.old_runs, d.new_runs) == (status, old_runs, new_runs)
    if status is Status.CHANGED:
        assert "+    y = x + 2" in d.diff()
    if status is Status.GONE:
        assert "no definition named 'doomed'" in d.note


def test_pyobject_moved_carries_emphasis(checker: DriftChecker) -> None:
    d = check(checker, pyobject="Box.put", emphasize="19")
    assert d.new_emphasize == "23"


def test_unknown_symbol_at_the_old_commit_is_broken(checker: DriftChecker) -> None:
    assert check(checker, pyobject="fresh").status is Status.BROKEN


# -- files -----------------------------------------------------------------------------------------------
def test_renamed_file_is_gone_with_a_hint(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/renamed.py", pyobject="keep")
    assert d.status is Status.GONE and d.renamed_to == "pkg/moved_here.py"
    assert "rename to pkg/moved_here.py (100% similar)" in d.note
    assert "keep is there at L1–L2 (same text)" in d.note
    d = check(checker, path="pkg/renamed.py", lines="5-6")
    assert d.status is Status.GONE and "the cited text is there at L5–L6" in d.note


def test_deleted_file_is_gone(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/deleted.py", pyobject="bye")
    assert d.status is Status.GONE and d.renamed_to is None and "does not exist" in d.note


def test_whole_file(checker: DriftChecker) -> None:
    assert check(checker, path="pkg/README.md", kind="role").status is Status.UNCHANGED
    d = check(checker, path="pkg/core.py", kind="role")
    assert d.status is Status.CHANGED and "+def fresh():" in d.diff()


def test_renamed_and_edited_file_hints(checker: DriftChecker) -> None:
    """A rename git detects is followed into the new file: where the selection is there, and whether it is the same."""
    short = checker.new.lock.short
    renamed = checker.renames()["pkg/old_name.py"]
    assert renamed[0] == "pkg/new_name.py" and 50 <= int(renamed[1]) < 100
    rename = f"at {short}: 'pkg/old_name.py' does not exist at slime@{short}; git detects a rename to " \
             f"pkg/new_name.py ({renamed[1]}% similar)"
    d = check(checker, path="pkg/old_name.py", pyobject="edited")
    assert (d.status, d.renamed_to, d.old_runs, d.new_runs) == (Status.GONE, "pkg/new_name.py", ((5, 6),), None)
    assert d.note == rename + "; edited is there at L5–L6 (text differs)"
    lowered = check(checker, path="pkg/old_name.py", pyobject="lowered")
    assert (lowered.old_runs, lowered.note) == (((13, 14),), rename + "; lowered is there at L9–L10 (text differs)")
    keep = check(checker, path="pkg/old_name.py", pyobject="keep")
    assert keep.note == rename + "; keep is there at L1–L2 (same text)"
    assert check(checker, path="pkg/old_name.py", pyobject="dropped").note == rename + "; dropped is not in it"
    assert check(checker, path="pkg/old_name.py", lines="5-6").note == rename + "; the cited text is not in it verbatim"
    assert check(checker, path="pkg/old_name.py", lines="1-2").note == rename + "; the cited text is there at L1–L2"
    whole = check(checker, path="pkg/old_name.py", kind="role")
    assert (whole.status, whole.note, whole.renamed_to) == (Status.GONE, rename, "pkg/new_name.py")


def test_a_gone_symbol_names_definitions_with_the_same_last_name(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/names.py", pyobject="C.run")
    short = checker.new.lock.short
    assert d.status is Status.GONE and d.old_runs == ((2, 3),)
    assert d.note == f"at {short}: no definition named 'C.run'; closest: B.run; same name: B.run (L2)"
    d = check(checker, path="pkg/names.py", pyobject="C")
    assert d.note == f"at {short}: no definition named 'C'"
    # a definition of the same last name whose qualified name sorts after the cited one (A → Z) is named too
    d = check(checker, path="pkg/names.py", pyobject="A.stop")
    assert (d.status, d.old_runs) == (Status.GONE, ((17, 18),))
    assert d.note == f"at {short}: no definition named 'A.stop'; closest: Z.stop; same name: Z.stop (L21)"
    # two definitions of the name now (a setter added): gone, and the hint does not repeat the name itself
    d = check(checker, path="pkg/names.py", pyobject="P.x")
    assert (d.status, d.old_runs) == (Status.GONE, ((7, 9),))
    assert d.note == f"at {short}: 'P.x' is ambiguous: 2 definitions at L7–L9, L11–L13"


def test_a_symbol_moved_up_or_made_shorter(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/long.py", pyobject="f11")
    assert (d.status, d.old_runs, d.new_runs) == (Status.MOVED, ((34, 35),), ((31, 32),))
    d = check(checker, path="pkg/names.py", pyobject="g")  # "return 2" became "return 1"
    assert (d.status, d.old_runs, d.new_runs) == (Status.CHANGED, ((12, 13),), ((16, 17),))


def test_a_renamed_file_that_no_longer_decodes_gives_no_hint(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/encoded.py", lines="1-2")
    renamed = checker.renames()["pkg/encoded.py"]
    assert (d.status, d.renamed_to, renamed[0]) == (Status.GONE, "pkg/recoded.py", "pkg/recoded.py")
    short = checker.new.lock.short
    assert d.note == (f"at {short}: 'pkg/encoded.py' does not exist at slime@{short}; git detects a rename to "
                      f"pkg/recoded.py ({renamed[1]}% similar)")


def test_the_line_diff_counts_every_line_in_long_files(checker: DriftChecker) -> None:
    """difflib without its popular-line heuristic (``autojunk=False``), also past 200 lines: the deleted f10 (old
    lines 31-33) is aligned where the first differing line is, so its counterpart is f9's last two lines (29-30).
    With the heuristic the blank and ``pass`` lines would be ignored and the citation reported as deleted."""
    d = check(checker, path="pkg/long.py", lines="31-33")
    assert (d.status, d.new_runs, d.new_text) == (Status.CHANGED, ((29, 30),), ("    pass", ""))
    assert check(checker, path="pkg/long.py", lines="34-36").new_runs == ((31, 33),)  # f11: moved up by three


def test_a_file_that_does_not_parse_at_the_old_commit_is_broken(checker: DriftChecker) -> None:
    first = check(checker, path="pkg/unparsable.py", pyobject="f")
    assert first.status is Status.BROKEN and first.old_runs is None
    assert first.note.startswith(f"at {checker.old.lock.short}: pkg/unparsable.py: does not parse: ")
    again = check(checker, path="pkg/unparsable.py", pyobject="g")  # the failed parse is kept: the same sentence
    assert again.status is Status.BROKEN and again.note == first.note
    assert check(checker, path="pkg/unparsable.py", lines="2").status is Status.UNCHANGED  # lines need no parse


def test_lines_and_pyobject_together_are_broken(checker: DriftChecker) -> None:
    d = check(checker, lines="1-2", pyobject="first")
    assert (d.status, d.old_runs) == (Status.BROKEN, None)
    assert d.note == f"at {checker.old.lock.short}: give either :lines: or :pyobject:, not both"
    d = check(checker, kind="role", path="pkg/core.py", error="malformed target 'x y'")
    assert d.note == f"at {checker.old.lock.short}: malformed target 'x y'"


@pytest.mark.parametrize(("path", "status", "old_runs", "new_runs", "new_text"), [
    ("pkg/empty.py", Status.UNCHANGED, (), (), ()),
    ("pkg/grows.py", Status.CHANGED, (), ((1, 1),), ("x = 1",)),
    ("pkg/emptied.py", Status.CHANGED, ((1, 1),), (), ()),
])
def test_whole_empty_files(checker: DriftChecker, path: str, status, old_runs, new_runs, new_text) -> None:
    d = check(checker, path=path, kind="role")
    assert (d.status, d.old_runs, d.new_runs, d.new_text) == (status, old_runs, new_runs, new_text)


def test_deleted_lines_have_no_counterpart(checker: DriftChecker) -> None:
    d = check(checker, path="pkg/shrinks.py", lines="2")
    assert (d.status, d.new_runs, d.new_text) == (Status.CHANGED, None, ())
    assert d.note == "not found verbatim; its lines were deleted"
    d = check(checker, path="pkg/shrinks.py", lines="3")  # moved up
    assert (d.status, d.new_runs) == (Status.MOVED, ((2, 2),))
    d = check(checker, path="pkg/shrinks.py", lines="1-2")  # the first line still maps
    assert (d.status, d.new_runs, d.new_text) == (Status.CHANGED, ((1, 1),), ("a = 1",))
    assert d.summary() == "changed L1–L2 → L1 (not found verbatim; → is the counterpart by line diff)"


# -- roles and citation sources ------------------------------------------------------------------------
def write_chapter(root: Path) -> Path:
    chapter = root / "chapters" / "a.md"
    chapter.parent.mkdir(parents=True)
    chapter.write_text(
        "# A\n"                                                                     # 1
        "\n"                                                                        # 2
        "```{slime-source} pkg/core.py\n"                                           # 3
        ":lines: 5-6,15-16\n"                                                       # 4
        ":emphasize-lines: 6,16\n"                                                  # 5
        ":caption: moved, two runs\n"                                               # 6
        "```\n"                                                                     # 7
        "\n"                                                                        # 8
        "```{slime-source} pkg/core.py\n"                                           # 9
        ":pyobject: Box.put\n"                                                      # 10
        ":emphasize-lines: 19\n"                                                    # 11
        "```\n"                                                                     # 12
        "\n"                                                                        # 13
        "Roles {slime}`pkg/core.py:1-2`, {slime}`alpha <pkg/core.py:5-6>` and {slime}`pkg/dup.py:6`.\n"  # 14
        "Changed {slime}`pkg/core.py:9-11`, gone {slime}`doomed <pkg/core.py>`, {slime}`beta <pkg/core.py>`.\n"
        "Broken {slime}`bad target <x y>`.\n"                                       # 16
    )
    return chapter


def test_roles_and_book_citations(tmp_path: Path, checker: DriftChecker) -> None:
    chapter = write_chapter(tmp_path)
    cited = list(book_citations([tmp_path / "chapters"], SLIME))
    assert [(c.kind, c.line, c.index) for c in cited] == [
        ("directive", 3, 0), ("directive", 9, 0),
        ("role", 14, 0), ("role", 14, 1), ("role", 14, 2),
        ("role", 15, 0), ("role", 15, 1), ("role", 15, 2), ("role", 16, 0),
    ]
    drifts = checker.check_all(cited)
    assert [str(d.status) for d in drifts] == [
        "moved", "moved", "unchanged", "moved", "moved", "changed", "gone", "changed", "broken",
    ]
    assert drifts[3].new_lines == "9-10"  # {slime}`alpha <pkg/core.py:5-6>`: the title is only text
    assert drifts[0].cited.where == f"{chapter}:3"
    assert summarize(drifts) == {Status.UNCHANGED: 1, Status.MOVED: 4, Status.CHANGED: 2, Status.GONE: 1,
                                 Status.BROKEN: 1}


def test_other_citation_sources_are_reported_not_rewritten(checker: DriftChecker) -> None:
    """The hook for the usage scanner: a citation without a file is checked like any other."""
    occurrence = Cited(kind="occurrence", path="pkg/core.py", pyobject="alpha", ident="occ:pkg/core.py:alpha")
    d = checker.check(occurrence)
    assert d.status is Status.MOVED and d.cited.where == "occ:pkg/core.py:alpha"
    assert plan_edits([d]) == []


# -- rewriting -------------------------------------------------------------------------------------------
def test_plan_and_apply_edits(tmp_path: Path, checker: DriftChecker) -> None:
    chapter = write_chapter(tmp_path)
    before = chapter.read_text()
    edits = plan_edits(checker.check_all(book_citations([chapter], SLIME)))
    assert [e.describe().split(": ", 1)[1] for e in edits] == [
        ":emphasize-lines: 6,16 → 10,20", ":lines: 5-6,15-16 → 9-10,19-20",
        ":emphasize-lines: 19 → 23",
        "role lines 5-6 → 9-10", "role lines 6 → 7",
    ]
    assert all(problem is None for _, problem in apply_edits(edits, SLIME))
    after = chapter.read_text().split("\n")
    expected = before.split("\n")
    expected[3], expected[4], expected[10] = ":lines: 9-10,19-20", ":emphasize-lines: 10,20", ":emphasize-lines: 23"
    expected[13] = "Roles {slime}`pkg/core.py:1-2`, {slime}`alpha <pkg/core.py:9-10>` and {slime}`pkg/dup.py:7`."
    assert after == expected


def test_apply_edits_skips_text_that_changed_since_the_report(tmp_path: Path) -> None:
    chapter = tmp_path / "c.md"
    chapter.write_bytes(b"```{slime-source} pkg/core.py\r\n:lines: 7-8\r\n```\r\n{slime}`pkg/core.py:1`\r\n")
    edits = [Edit(chapter, 1, "lines", 0, "pkg/core.py", "5-6", "9-10"),
             Edit(chapter, 4, "role", 0, "pkg/core.py", "1", "3")]
    results = apply_edits(edits, SLIME)
    assert "now reads '7-8', expected '5-6'" in results[0][1]
    assert results[1][1] is None
    assert chapter.read_bytes() == b"```{slime-source} pkg/core.py\r\n:lines: 7-8\r\n```\r\n{slime}`pkg/core.py:3`\r\n"


NOTES = (
    "# confirmed and left candidates (a comment that must survive)\r\n"       # 1
    "[[confirmed]]\r\n"                                                      # 2
    'path = "pkg/core.py"\r\n'                                               # 3
    "line = 5  # moves to 9\r\n"                                             # 4
    'api = "asyncio.Queue.put"\r\n'                                          # 5
    'lesson = "chapters/a"\r\n'                                              # 6
    'evidence = "e"\r\n'                                                     # 7
    "\r\n"                                                                    # 8
    "[[confirmed]]\r\n"                                                      # 9
    'evidence = "changed"\r\n'                                               # 10
    'path = "pkg/core.py"\r\n'                                               # 11
    "line = 10\r\n"                                                          # 12
    'api = "asyncio.Queue.get"\r\n'                                          # 13
    'lesson = "chapters/a"\r\n'                                              # 14
    "\r\n"                                                                    # 15
    "[[left]]\r\n"                                                           # 16
    'names = ["get"]\r\n'                                                    # 17
    'places = ["pkg/dup.py:6", "pkg/core.py:6",\r\n'                         # 18
    '          "pkg/core.py:1", "pkg/dup.py:6"]\r\n'                         # 19
    'reason = "r"\r\n'                                                       # 20
)


def test_the_candidate_notes_lines_are_citations(tmp_path: Path, checker: DriftChecker) -> None:
    notes = tmp_path / "notes.toml"
    notes.write_bytes(NOTES.encode())
    cited = list(note_citations(notes))
    assert [(c.kind, c.path, c.lines, c.line, c.index, c.error) for c in cited] == [
        (NOTE_LINE, "pkg/core.py", "5", 4, 0, None),
        (NOTE_LINE, "pkg/core.py", "10", 12, 0, None),
        (NOTE_PLACE, "pkg/dup.py", "6", 18, 0, None),
        (NOTE_PLACE, "pkg/core.py", "6", 18, 1, None),  # index: its position among the strings of its line
        (NOTE_PLACE, "pkg/core.py", "1", 19, 0, None),
        (NOTE_PLACE, "pkg/dup.py", "6", 19, 1, None),
    ]
    drifts = checker.check_all(cited)
    assert [str(d.status) for d in drifts] == ["moved", "changed", "moved", "moved", "unchanged", "moved"]
    edits = plan_edits(drifts)
    assert [e.describe().split(": ", 1)[1] for e in edits] == [
        "note line 5 → 9", "note place 6 → 7", "note place 6 → 10", "note place 6 → 7"]
    assert all(problem is None for _, problem in apply_edits(edits, SLIME))
    # the numbers moved; comments, the changed entry (left for the writer), layout and CRLF stay byte for byte
    assert notes.read_bytes() == NOTES.replace("line = 5  #", "line = 9  #").replace(
        '"pkg/dup.py:6", "pkg/core.py:6"', '"pkg/dup.py:7", "pkg/core.py:10"').replace(
        '"pkg/core.py:1", "pkg/dup.py:6"', '"pkg/core.py:1", "pkg/dup.py:7"').encode()


def test_a_note_that_changed_since_the_report_is_not_rewritten(tmp_path: Path) -> None:
    notes = tmp_path / "notes.toml"
    notes.write_text('[[confirmed]]\nline = 7\n[[left]]\nplaces = ["a.py:3"]\n')
    edits = [Edit(notes, 2, "note", 0, "a.py", "5", "9"), Edit(notes, 4, "place", 0, "a.py", "4", "8"),
             Edit(notes, 4, "place", 1, "a.py", "3", "8")]
    assert [problem for _, problem in apply_edits(edits, SLIME)] == [
        "line 2 now reads 'line = 7', expected 'line = 5'", 'line 4 no longer holds "a.py:4"',
        'line 4 no longer holds "a.py:3"']
    assert notes.read_text() == '[[confirmed]]\nline = 7\n[[left]]\nplaces = ["a.py:3"]\n'


@pytest.mark.parametrize(("text", "error"), [
    ('confirmed = [{path = "a.py", line = 3, api = "x.y", lesson = "l", evidence = "e"}]\n',
     "its 'line = 3' is not a decimal number on a line of a [[confirmed]] table"),
    ('[[confirmed]]\npath = "a.py"\nline = 0x3\napi = "x.y"\nlesson = "l"\nevidence = "e"\n',
     "its 'line = 3' is not a decimal number on a line of a [[confirmed]] table"),
    ('[[left]]\nplaces = ["a\\u002epy:3"]\nreason = "r"\n',
     "the place 'a.py:3' is not written as a plain quoted \"path:line\" string in a [[left]] table"),
    ("[[left]]\nplaces = [\"a.py\"]\nreason = 'r'\n", "'places' entries are \"path:line\", got 'a.py'"),
    ("[[confirmed]\n", "not valid TOML"),
])
def test_a_note_that_cannot_be_followed_is_reported_never_rewritten(tmp_path: Path, text: str, error: str) -> None:
    notes = tmp_path / "notes.toml"
    notes.write_text(text)
    (cited,) = note_citations(notes)
    assert error in cited.error and cited.file == notes and cited.line >= 1
    assert plan_edits([Drift(cited, Status.BROKEN)]) == []


def test_no_notes_file_no_citations(tmp_path: Path) -> None:
    assert list(note_citations(tmp_path / "none.toml")) == []


def test_places_moving_onto_each_others_old_numbers_each_get_their_own(tmp_path: Path, checker: DriftChecker) -> None:
    # pkg/core.py:5 moves to 9 and 9 to 13: the first rewrite must not become what the second one finds
    notes = tmp_path / "notes.toml"
    before = ('[[left]]\nplaces = ["pkg/core.py:5", "pkg/core.py:9", "pkg/core.py:5"]  # was "pkg/core.py:9"\n'
              'reason = "r"\n')
    notes.write_text(before)
    edits = plan_edits(checker.check_all(list(note_citations(notes))))
    assert [problem for _, problem in apply_edits(edits, SLIME)] == [None, None, None]
    assert notes.read_text() == before.replace('"pkg/core.py:5", "pkg/core.py:9", "pkg/core.py:5"',
                                               '"pkg/core.py:9", "pkg/core.py:13", "pkg/core.py:9"')


def _confirmed_entry(*keys: str) -> str:
    """A [[confirmed]] table of pkg/core.py with ``keys`` (lines) and the keys it lacks."""
    given = {key.split("=")[0].strip().strip("'\"") for key in keys if "=" in key}
    rest = [f'{k} = "{v}"' for k, v in (("path", "pkg/core.py"), ("api", "x.put"), ("lesson", "l"), ("evidence", "e"))
            if k not in given]
    return "\n".join(["[[confirmed]]", *keys, *rest]) + "\n"


#: ⟨5⟩ marks the one number a re-pin rewrites (5 → 9 in pkg/core.py); the same text elsewhere stays
@pytest.mark.parametrize("text", [
    _confirmed_entry('evidence = """', "line = 5", "[[confirmed]]", '"""', "line = ⟨5⟩"),  # a multi-line string
    _confirmed_entry('evidence = "made\u2028above"', "line = ⟨5⟩"),  # U+2028 ends no TOML line
    _confirmed_entry("line=⟨5⟩  # line = 5"),
    _confirmed_entry('"line" = ⟨5⟩'),
    '[[left]]\n# was "pkg/core.py:5"\nplaces = ["pkg/core.py:⟨5⟩"]\nreason = "r"\n',  # a comment above
    "[[left]]\nreason = 'not \"pkg/core.py:5\"'\nplaces = ['pkg/core.py:⟨5⟩']\n",  # another key, single quotes
    '[[left]]\nplaces = [\n  # "pkg/core.py:5" below\n  """pkg/core.py:⟨5⟩""",\n]\nreason = "r"\n',
], ids=["multi-line string", "U+2028", "no spaces", "quoted key", "comment", "other key", "array comment"])
def test_a_note_is_rewritten_where_toml_reads_the_number(tmp_path: Path, checker: DriftChecker, text: str) -> None:
    notes = tmp_path / "notes.toml"
    notes.write_text(text.replace("⟨5⟩", "5"))
    edits = plan_edits(checker.check_all(list(note_citations(notes))))
    assert [problem for _, problem in apply_edits(edits, SLIME)] == [None]
    assert notes.read_text() == text.replace("⟨5⟩", "9")


def test_a_notes_file_that_is_not_utf8_is_reported_at_its_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.toml"
    notes.write_bytes(b"[[left]]\n# caf\xe9\nnames = ['get']\nreason = 'r'\n")
    (cited,) = note_citations(notes)
    assert (cited.line, cited.error) == (2, "not UTF-8 text: invalid continuation byte")


def test_rst_directive_and_role_rewrite(tmp_path: Path, checker: DriftChecker) -> None:
    doc = tmp_path / "b.rst"
    doc.write_text("B\n=\n\n.. slime-source:: pkg/core.py\n   :lines: 5-6\n\nSee :slime:`pkg/core.py:5`.\n")
    apply_edits(plan_edits(checker.check_all(book_citations([doc], SLIME))), SLIME)
    assert doc.read_text() == "B\n=\n\n.. slime-source:: pkg/core.py\n   :lines: 9-10\n\nSee :slime:`pkg/core.py:9`.\n"


def _moved(kind: str = "directive", lines: str | None = "5-6", new_runs=((9, 10),), emphasize: str | None = None,
           new_emphasize: str | None = None, file: Path | None = Path("c.md"), line: int = 3, index: int = 0,
           status: Status = Status.MOVED) -> Drift:
    cited = Cited(kind=kind, path="pkg/core.py", lines=lines, emphasize=emphasize, file=file, line=line, index=index,
                  pyobject=None if lines else "alpha")
    return Drift(cited, status, old_runs=((5, 6),), new_runs=new_runs, new_emphasize=new_emphasize)


def test_plan_edits_only_for_moved_citations_in_files() -> None:
    c = Path("c.md")
    assert plan_edits([
        _moved(line=9, emphasize="6", new_emphasize="10"),
        _moved(kind="role", line=4, index=1),
        _moved(kind="role", line=4, index=0, emphasize="6", new_emphasize="10"),  # a role has no emphasis
        _moved(lines=None, line=2, emphasize="5", new_emphasize="9"),  # :pyobject: with emphasis
        _moved(file=None), _moved(kind="occurrence"), _moved(status=Status.UNCHANGED), _moved(status=Status.CHANGED),
        _moved(new_runs=((5, 6),)),  # moved, but the spec reads the same
        # the same emphasis, spelled by another string object
        _moved(emphasize="6,16", new_emphasize=",".join(["6", "16"]), line=20, new_runs=((5, 6),)),
        _moved(status=Status.CHANGED, emphasize="6", new_emphasize="10"),  # only moved citations are rewritten
        _moved(line=1, new_runs=((1, 2),)),  # moved up
    ]) == [
        Edit(c, 1, "lines", 0, "pkg/core.py", "5-6", "1-2"),
        Edit(c, 2, "emphasize-lines", 0, "pkg/core.py", "5", "9"),
        Edit(c, 4, "role", 0, "pkg/core.py", "5-6", "9-10"),
        Edit(c, 4, "role", 1, "pkg/core.py", "5-6", "9-10"),
        Edit(c, 9, "emphasize-lines", 0, "pkg/core.py", "6", "10"),
        Edit(c, 9, "lines", 0, "pkg/core.py", "5-6", "9-10"),
    ]
    assert Edit(c, 9, "lines", 0, "p", "5-6", "9-10").describe() == "c.md:9: :lines: 5-6 → 9-10"
    assert Edit(c, 4, "role", 1, "p", "5", "9").describe() == "c.md:4: role lines 5 → 9"
    edit = Edit(c, 4, "role", 1, "p", "5", "9")
    assert len({edit, dataclasses.replace(edit)}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        edit.new = "10"  # type: ignore[misc]


def _apply(tmp_path: Path, text: str, *edits: tuple, name: str = "c.md") -> tuple[list[str | None], str]:
    doc = tmp_path / name
    doc.write_bytes(text.encode())
    results = apply_edits([Edit(doc, *e) for e in edits], SLIME)
    return [problem for _, problem in results], doc.read_bytes().decode()


def test_apply_edits_says_why_an_edit_no_longer_fits(tmp_path: Path) -> None:
    text = ("```{slime-source} pkg/core.py\n:caption: c\n:lines: 5-6\n```\n\n:lines: 5-6\n"
            "See {slime}`x <pkg/other.py:5>`.\nAll of {slime}`pkg/core.py`.\n")
    problems, after = _apply(
        tmp_path, text,
        (10, "lines", 0, "pkg/core.py", "5-6", "9-10"),
        (7, "role", 1, "pkg/core.py", "5", "9"),
        (7, "role", 2, "pkg/core.py", "5", "9"),
        (7, "role", 0, "pkg/core.py", "5", "9"),
        (8, "role", 0, "pkg/core.py", "5", "9"),
        (6, "lines", 0, "pkg/core.py", "5-6", "9-10"),
        (1, "emphasize-lines", 0, "pkg/core.py", "5", "9"),
        (1, "lines", 0, "pkg/other.py", "5-6", "9-10"),
    )
    assert problems == [
        "line 10 is past the end of the file",
        "the role is no longer on that line",
        "the role is no longer on that line",
        "the role now reads 'x <pkg/other.py:5>', expected pkg/core.py:5",
        "the role now reads 'pkg/core.py', expected pkg/core.py:5",  # no line numbers to rewrite
        "line 6 is no longer a slime-source directive for pkg/core.py",
        "the directive has no :emphasize-lines: option any more",  # the options end at the closing fence
        "line 1 is no longer a slime-source directive for pkg/other.py",
    ]
    assert after == text


def test_apply_edits_reads_specs_as_runs_and_keeps_the_rest_of_the_line(tmp_path: Path) -> None:
    text = ("```{slime-source} pkg/core.py\n:lines: 5 - 6  \n```\n"
            "See {slime}`a <pkg/core.py:5-6 >` and {slime}`pkg/core.py:6`.\n")
    problems, after = _apply(
        tmp_path, text,
        (1, "lines", 0, "pkg/core.py", "5-6", "9-10"),  # ":lines: 5 - 6" is the same runs as "5-6"
        (4, "role", 0, "pkg/core.py", "5-6", "9-10"),
        (4, "role", 1, "pkg/core.py", "6", "10"),
    )
    assert problems == [None, None, None]
    assert after == ("```{slime-source} pkg/core.py\n:lines: 9-10  \n```\n"
                     "See {slime}`a <pkg/core.py:9-10 >` and {slime}`pkg/core.py:10`.\n")
    problems, _ = _apply(tmp_path, "```{slime-source} pkg/core.py\n:lines: 5-x\n```\n",
                         (1, "lines", 0, "pkg/core.py", "5-6", "9-10"))
    assert problems == [":lines: now reads '5-x', expected '5-6'"]  # a malformed spec is compared as text
    problems, after = _apply(tmp_path, "```{slime-source} pkg/core.py\n:lines: 5-x \n:emphasize-lines: 5-6\n```\n",
                             (1, "lines", 0, "pkg/core.py", "5-x", "9-10"),
                             (1, "emphasize-lines", 0, "pkg/core.py", "5-7", "9"))
    assert problems == [None, ":emphasize-lines: now reads '5-6', expected '5-7'"]
    assert after == "```{slime-source} pkg/core.py\n:lines: 9-10 \n:emphasize-lines: 5-6\n```\n"
    problems, _ = _apply(tmp_path, "```{slime-source} pkg/core.py\n:lines: 5-x\n```\n",
                         (1, "lines", 0, "pkg/core.py", "5-y", "9-10"))
    assert problems == [":lines: now reads '5-x', expected '5-y'"]


def test_apply_edits_reads_options_only_up_to_the_directive_s_end(tmp_path: Path) -> None:
    text = "```{slime-source} pkg/core.py\n:caption: c\n```\n:lines: 5-6\n"
    problems, after = _apply(tmp_path, text, (1, "lines", 0, "pkg/core.py", "5-6", "9-10"),
                             (0, "lines", 0, "pkg/core.py", "5-6", "9-10"))
    assert problems == ["the directive has no :lines: option any more", "line 0 is past the end of the file"]
    assert after == text


def test_apply_edits_writes_a_shorter_spec_too(tmp_path: Path) -> None:
    problems, after = _apply(tmp_path, "```{slime-source} pkg/core.py\n:lines: 9-10\n```\n",
                             (1, "lines", 0, "pkg/core.py", "9-10", "1-2"))
    assert (problems, after) == ([None], "```{slime-source} pkg/core.py\n:lines: 1-2\n```\n")


def test_apply_edits_reaches_a_last_line_without_a_newline(tmp_path: Path) -> None:
    problems, after = _apply(tmp_path, "See {slime}`pkg/core.py:5-6`.", (1, "role", 0, "pkg/core.py", "5-6", "9-10"))
    assert (problems, after) == ([None], "See {slime}`pkg/core.py:9-10`.")


def test_apply_edits_leaves_a_file_without_a_fitting_edit_alone(tmp_path: Path) -> None:
    doc = tmp_path / "c.md"
    doc.write_text("```{slime-source} pkg/core.py\n:lines: 7-8\n```\n")
    before = doc.stat().st_ino
    assert apply_edits([Edit(doc, 1, "lines", 0, "pkg/core.py", "5-6", "9-10")], SLIME)[0][1] is not None
    assert doc.stat().st_ino == before  # not rewritten (a rewrite replaces the file)


# -- the lock ----------------------------------------------------------------------------------------------
def test_lock_previous_commit_is_optional_and_checked(tmp_path: Path, upstream: Upstream) -> None:
    lock = tmp_path / "l.toml"
    lock.write_text(upstream.lock_text(upstream.new))
    assert load_lock(lock).previous_commit is None
    lock.write_text(upstream.lock_text(upstream.new, upstream.old))
    assert load_lock(lock).previous_commit == upstream.old
    lock.write_text(upstream.lock_text(upstream.new, "abc"))
    with pytest.raises(LockError, match="previous_commit must be a full 40-hex sha"):
        load_lock(lock)


def test_repin_lock_text_keeps_comments(upstream: Upstream) -> None:
    text = upstream.lock_text(upstream.old)
    once = repin_lock_text(text, "slime", upstream.new, upstream.old)
    assert once == text.replace(
        f'commit = "{upstream.old}"  # the pin\n',
        f'commit = "{upstream.new}"  # the pin\nprevious_commit = "{upstream.old}"\n',
    )
    twice = repin_lock_text(once, "slime", upstream.third, upstream.new)
    assert twice == upstream.lock_text(upstream.third, upstream.new)
    with pytest.raises(LockError, match=r"no \[other\] table"):
        repin_lock_text(text, "other", upstream.new, upstream.old)


# A lock a person might write: comments everywhere, blank lines, indentation, odd spacing around "=", a literal
# string, a comment on the table header, other tables before and after, CRLF line endings.
ODD_LOCK = (
    "# top comment\r\n"
    "\r\n"
    "[other]   # not this one\r\n"
    'commit = "' + "a" * 40 + '"\r\n'
    "\r\n"
    "  [slime]     # the table\r\n"
    '    url   =   "https://example.invalid/slime.git"\r\n'
    "    commit   =    '" + "b" * 40 + "'   # the pin\r\n"
    "\r\n"
    "    license=\"Apache-2.0\"   \r\n"
    "# permalink template\r\n"
    '   blob_url = "https://example.invalid/blob/{commit}/{path}{anchor}"  # tpl\r\n'
    "\r\n"
    "\r\n"
    "[third]\r\n"
    "x = 1\r\n"
)


def test_repin_lock_keeps_an_unusual_layout_byte_for_byte(tmp_path: Path) -> None:
    new, old, later = "c" * 40, "b" * 40, "d" * 40
    once = repin_lock_text(ODD_LOCK, "slime", new, old)
    assert once == (
        "# top comment\r\n"
        "\r\n"
        "[other]   # not this one\r\n"
        'commit = "' + "a" * 40 + '"\r\n'
        "\r\n"
        "  [slime]     # the table\r\n"
        '    url   =   "https://example.invalid/slime.git"\r\n'
        "    commit   =    '" + "c" * 40 + "'   # the pin\r\n"
        "    previous_commit = '" + "b" * 40 + "'\r\n"
        "\r\n"
        "    license=\"Apache-2.0\"   \r\n"
        "# permalink template\r\n"
        '   blob_url = "https://example.invalid/blob/{commit}/{path}{anchor}"  # tpl\r\n'
        "\r\n"
        "\r\n"
        "[third]\r\n"
        "x = 1\r\n"
    )
    twice = repin_lock_text(once, "slime", later, new)  # previous_commit now exists: both values change in place
    assert twice == once.replace("c" * 40, later).replace("b" * 40, new)
    lock = tmp_path / "sources.toml"
    lock.write_bytes(ODD_LOCK.encode())
    update_lock_file(lock, "slime", new, old)
    assert lock.read_bytes() == once.encode()  # CRLF kept on disk too
    assert load_lock(lock).previous_commit == old and load_lock(lock).commit == new


def test_repin_lock_refuses_what_it_cannot_edit() -> None:
    sha = "e" * 40
    with pytest.raises(LockError, match="not a full 40-hex sha"):
        repin_lock_text(ODD_LOCK, "slime", "abc", sha)
    with pytest.raises(LockError, match="not valid TOML"):
        repin_lock_text("[slime\n", "slime", sha, sha)
    with pytest.raises(LockError, match=r"no \[slime\] table"):
        repin_lock_text('slime = "x"\n', "slime", sha, sha)
    with pytest.raises(LockError, match="has no commit"):
        repin_lock_text('[slime]\nurl = "x"\n', "slime", sha, sha)


def test_repin_lock_text_edits_only_its_table() -> None:
    new, old = "b" * 40, "a" * 40
    text = ('[other]\ncommit = "c"\n\n[slime]  # the pin\r\n'
            "commit = 'x'\r\n\n[later]\nprevious_commit = \"p\"\n")
    assert repin_lock_text(text, "slime", new, old) == (
        f'[other]\ncommit = "c"\n\n[slime]  # the pin\r\ncommit = \'{new}\'\r\nprevious_commit = \'{old}\'\r\n\n'
        '[later]\nprevious_commit = "p"\n')
    # previous_commit is written in the commit's quote style and line ending.
    # The table's own lines only: not the line above its header, not a table that follows at once
    for lock in ('[other]\ncommit = "c"\n[slime]\nurl = "u"\n', '[slime]\n[other]\ncommit = "c"\n',
                 '[other]\nprevious_commit = "p"\ncommit = "c"\n[slime]\n'):
        with pytest.raises(LockError, match=r"\[slime\] has no commit"):
            repin_lock_text(lock, "slime", new, old)
    with pytest.raises(LockError, match="not a full 40-hex sha: 'abc'"):
        repin_lock_text(text, "slime", "abc", old)
    with pytest.raises(LockError, match="not a full 40-hex sha: 'A{40}'"):
        repin_lock_text(text, "slime", new, "A" * 40)


def test_update_lock_file_replaces_a_previous_commit_that_is_not_a_string(tmp_path: Path) -> None:
    lock = tmp_path / "sources.toml"
    lock.write_text('[slime]\ncommit = "' + "a" * 40 + '"\nprevious_commit = 7\n')
    update_lock_file(lock, "slime", "b" * 40, "a" * 40)
    assert lock.read_text() == '[slime]\ncommit = "' + "b" * 40 + '"\nprevious_commit = "' + "a" * 40 + '"\n'


@pytest.mark.parametrize("inside", ["commit", "previous_commit"])
def test_update_lock_file_edits_the_key_not_a_string_that_reads_like_it(tmp_path: Path, inside: str) -> None:
    """A line of a multi-line string that reads like the key stays as it is: the lock is edited as TOML, not text."""
    lock = tmp_path / "sources.toml"
    notes = f'notes = """\n{inside} = "in a string"\n"""\n'
    lock.write_text(f'[slime]\ncommit = "{"b" * 40}"\nprevious_commit = "{"d" * 40}"\n' + notes)
    update_lock_file(lock, "slime", "a" * 40, "f" * 40)
    assert lock.read_text() == f'[slime]\ncommit = "{"a" * 40}"\nprevious_commit = "{"f" * 40}"\n' + notes


# -- revisions ----------------------------------------------------------------------------------------------
def test_resolve_abbreviated_shas(cache: Path, upstream: Upstream, stores) -> None:
    lock = stores[0].lock
    assert resolve_commit(lock, upstream.new[:8]) == upstream.new  # from the local source repository
    assert resolve_commit(lock, upstream.new.upper()) == upstream.new
    offline = dataclasses.replace(lock, url=str(cache / "no-such-repo"))
    assert resolve_commit(offline, upstream.old[:7]) == upstream.old  # from the commits in the cache
    remote = dataclasses.replace(lock, url=f"file://{upstream.path.as_posix()}")
    assert resolve_commit(remote, upstream.third[:8]) == upstream.third  # a fetch without trees, then removed
    with pytest.raises(RevisionError, match="not a commit sha"):
        resolve_commit(lock, "main")
    with pytest.raises(RevisionError, match="is not a commit in"):
        resolve_commit(lock, "0000000")


# -- the command line ------------------------------------------------------------------------------------------
def cli(lock: Path, *args: str) -> int:
    return main(["--lock", str(lock), *args])


@pytest.fixture(autouse=True)
def _outside_any_book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line reads the book around the working directory; these tests name the lock and the files, so
    they run outside any book (not in this repository, whose conf.py is the Slime book's)."""
    monkeypatch.chdir(tmp_path)


def test_diff_reports_every_citation(cache: Path, tmp_path: Path, upstream: Upstream, capsys) -> None:
    chapter = write_chapter(tmp_path)
    lock = tmp_path / "sources.toml"
    lock.write_text(upstream.lock_text(upstream.old))
    assert cli(lock, "sources", "diff", "--to", upstream.new[:9], str(chapter)) == 1
    out = capsys.readouterr().out
    assert f"{chapter}:3: directive pkg/core.py :lines: 5-6,15-16: moved L5–L6, L15–L16 → L9–L10, L19–L20" in out
    assert f"{chapter}:15: role pkg/core.py :lines: 9-11: changed L9–L11 → L13–L15" in out
    assert "    -    y = x + 1" in out  # the diff, indented
    assert f"{chapter}:15: role pkg/core.py :pyobject: doomed: gone" in out
    short_old, short_new = upstream.old[:7], upstream.new[:7]
    assert out.rstrip().endswith(
        f"9 citations, {short_old} → {short_new}: 1 unchanged, 4 moved, 2 changed, 1 gone, 1 broken")
    # --from: the same report seen from another commit; to itself everything holds but the broken role
    assert cli(lock, "sources", "diff", "--from", upstream.new, "--to", upstream.new[:7], "--brief",
               str(chapter)) == 1
    assert "7 unchanged, 0 moved, 0 changed, 0 gone, 2 broken" in capsys.readouterr().out


def test_diff_exit_zero_when_everything_holds(cache: Path, tmp_path: Path, upstream: Upstream, capsys) -> None:
    chapter = tmp_path / "ok.md"
    chapter.write_text("{slime}`pkg/core.py:1-2` {slime}`alpha <pkg/core.py>`\n")
    lock = tmp_path / "sources.toml"
    lock.write_text(upstream.lock_text(upstream.old))
    assert cli(lock, "sources", "diff", "--to", upstream.new, str(chapter)) == 0
    assert cli(lock, "sources", "diff", "--to", "zzz", str(chapter)) == 2
    assert "not a commit sha" in capsys.readouterr().err


def test_repin_dry_run_changes_nothing(cache: Path, tmp_path: Path, upstream: Upstream, capsys) -> None:
    chapter = write_chapter(tmp_path)
    lock = tmp_path / "sources.toml"
    lock.write_text(upstream.lock_text(upstream.old))
    before = (chapter.read_text(), lock.read_text())
    assert cli(lock, "sources", "repin", upstream.new[:10], str(chapter)) == 1
    out = capsys.readouterr().out
    assert f"would rewrite {chapter}:3: :lines: 5-6,15-16 → 9-10,19-20" in out
    assert f"would set {lock} [slime] commit = {upstream.new}, previous_commit = {upstream.old}" in out
    assert "5 rewrites planned, 4 citations left for the writer" in out
    assert (chapter.read_text(), lock.read_text()) == before


def test_repin_write(cache: Path, tmp_path: Path, upstream: Upstream, capsys) -> None:
    chapter = write_chapter(tmp_path)
    lock = tmp_path / "sources.toml"
    lock.write_text(upstream.lock_text(upstream.old))
    assert cli(lock, "sources", "repin", upstream.new[:10], str(chapter), "--write") == 1
    out = capsys.readouterr().out
    assert f"{chapter}:15: needs the writer: gone: pkg/core.py :pyobject: doomed" in out
    assert "5 rewrites done, 4 citations left for the writer" in out
    text = chapter.read_text()
    assert ":lines: 9-10,19-20\n:emphasize-lines: 10,20\n" in text
    assert "{slime}`alpha <pkg/core.py:9-10>` and {slime}`pkg/dup.py:7`" in text
    assert "Changed {slime}`pkg/core.py:9-11`" in text  # changed: left for the writer
    assert lock.read_text() == upstream.lock_text(upstream.new, upstream.old)
    assert load_lock(lock).previous_commit == upstream.old
    # once re-pinned, repin to the same commit leaves the lock alone and names what still fails
    assert cli(lock, "sources", "repin", upstream.new, str(chapter), "--write") == 1
    out = capsys.readouterr().out
    assert "leave" in out and "already pinned" in out
    assert "0 rewrites done, 2 citations left for the writer" in out  # doomed and the bad role
    assert lock.read_text() == upstream.lock_text(upstream.new, upstream.old)


def test_repin_exits_zero_when_only_moves(cache: Path, tmp_path: Path, upstream: Upstream, capsys) -> None:
    chapter = tmp_path / "ok.md"
    chapter.write_text("{slime}`pkg/core.py:5-6` and {slime}`first <pkg/core.py>`\n")
    lock = tmp_path / "sources.toml"
    lock.write_text(upstream.lock_text(upstream.old))
    assert cli(lock, "sources", "repin", upstream.new, str(chapter), "--write") == 0
    assert chapter.read_text() == "{slime}`pkg/core.py:9-10` and {slime}`first <pkg/core.py>`\n"


# -- the generated page -----------------------------------------------------------------------------------------
@pytest.fixture
def build_page(tmp_path: Path, stores, upstream: Upstream, cache: Path, sphinx_build):
    def _build(previous: str | None) -> SphinxTestApp:
        src = copy_root("sourcecheck", tmp_path / f"prev-{previous and previous[:7]}")
        (src / "sources.toml").write_text(upstream.lock_text(upstream.new, previous))
        return sphinx_build(src)

    return _build


def _rows(page: str) -> list[str]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    # the cells' text: tags dropped (the writer puts a line end between paragraphs and cells)
    return [re.sub(r"<[^>]+>", "", row) for row in body.split("</tr>") if "<td>" in row]


def test_source_check_page_against_the_previous_pin(build_page, stores) -> None:
    app = build_page(stores[0].lock.commit)
    assert app._warning.getvalue() == ""
    page = (app.outdir / "_slimebook" / "source-check.html").read_text()
    assert 'class="sidebar-brand' in page  # rendered with the theme's page template
    rows = [" ".join(r.split()) for r in _rows(page)]
    assert len(rows) == 8  # index.md then other.md: reading order
    assert rows[0].startswith("index.md:7 directive pkg/core.py alpha L9–L10 · blob ")
    assert rows[0].endswith("移动 上一个 pin 在 L5–L6")
    assert rows[1].startswith("index.md:11 directive pkg/core.py:13-15 L13–L15") and "有变化 diff" in rows[1]
    assert rows[2].endswith("未变")  # first
    assert rows[3].endswith("移动 上一个 pin 在 L5–L6")  # pkg/core.py:9-10
    assert "上一个 pin 中没有" in rows[4]  # fresh
    assert rows[5].startswith("other.md:3 role pkg/core.py Box.put") and "移动" in rows[5]
    assert rows[6].endswith("未变")  # the whole README
    assert rows[7].startswith("other.md:5 role pkg/core.py:13-15") and "有变化 diff" in rows[7]
    core_blob = stores[1].blob_id("pkg/core.py")
    assert f'<abbr class="slimebook-blob" title="{core_blob}"><span class="pre">{core_blob[:12]}</span></abbr>' in page
    assert "共 8 处引用：未变 2，移动 3，有变化 2，上一个 pin 中没有 1。" in page
    # the changed citation's diff runs from the previous pin to the current one
    assert page.count('id="slimebook-diff-') == 1 and "y = x + 1" in page and "y = x + 2" in page
    # one diff, two places
    assert ('<a class="reference internal" href="../index.html">index.md:11</a>，'
            '<a class="reference internal" href="../other.html">other.md:5</a>') in page
    index = (app.outdir / "index.html").read_text()
    assert 'href="_slimebook/source-check.html"' in index  # {ref}`... <slimebook-source-check>`
    assert 'href="../index.html"' in page
    assert not (app.srcdir / "_slimebook").exists()  # nothing generated into the source tree


def test_source_check_page_without_previous_pin(build_page) -> None:
    app = build_page(None)
    assert app._warning.getvalue() == ""
    page = (app.outdir / "_slimebook" / "source-check.html").read_text()
    assert "锁文件没有记录上一个 pin" in page
    assert len(_rows(page)) == 8 and "共 8 处引用。" in page


def test_source_check_page_when_previous_pin_is_not_fetched(build_page, upstream: Upstream, cache: Path) -> None:
    app = build_page(upstream.third)
    assert app._warning.getvalue() == ""
    page = (app.outdir / "_slimebook" / "source-check.html").read_text()
    assert (f'上一个 pin <code class="docutils literal notranslate"><span class="pre">{upstream.third}</span></code> '
            "不在源码缓存") in page
    assert not any(p.name.startswith(f"slime-{upstream.third}") for p in (cache / "git").iterdir())  # no fetch
    assert len(_rows(page)) == 8


def test_source_check_page_is_written_again_only_when_it_changes(build_page, sphinx_build) -> None:
    app = build_page(None)
    page = app.outdir / "_slimebook" / "source-check.html"
    stamp = app.outdir / "_slimebook" / ".source-check.stamp"
    before = page.stat().st_mtime_ns
    assert "index.md:7" in page.read_text() and stamp.exists()
    sphinx_build(app.srcdir)  # nothing changed: the page is left as it is
    assert page.stat().st_mtime_ns == before
    index = app.srcdir / "index.md"
    index.write_text(index.read_text().replace("# Source check fixture\n", "# Source check fixture\n\nA new line.\n"))
    sphinx_build(app.srcdir)  # every citation of index.md is two lines further down
    assert page.stat().st_mtime_ns != before
    assert "index.md:9" in page.read_text() and "index.md:7" not in page.read_text()
    assert not (app.srcdir / "_slimebook").exists()  # the stamp lives in the output, not the source tree


def test_drift_numbers_lines_by_the_one_line_model(checker: DriftChecker) -> None:
    """The drift report counts a lone CR as a line end, like the excerpt reader and libcst."""
    d = check(checker, path="pkg/cr.py", pyobject="target")
    assert d.status is Status.MOVED and d.new_runs == ((8, 9),)
    d = check(checker, path="pkg/cr.py", lines="7-8")
    assert d.status is Status.MOVED and d.new_lines == "8-9"
