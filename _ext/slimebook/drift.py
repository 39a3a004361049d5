"""Drift between two commits: what every citation becomes when the pin moves.

A citation (:class:`Cited`) names a path and a selection — ``:lines:``, ``:pyobject:`` or the whole
file — that holds at an *old* commit. :class:`DriftChecker` reads it there and finds it at a *new*
commit, giving one :class:`Drift` per citation with a :class:`Status`:

``unchanged``  same text at the same lines.
``moved``      same text at other lines (``:lines:`` relocated by exact match of every cited block;
               ``:pyobject:`` by the same qualified name).
``changed``    the text differs: :meth:`Drift.diff` is a unified diff, old → new.
``gone``       the path (or the symbol) is missing at the new commit; a rename git detects is a hint.
``broken``     the citation does not even resolve at the old commit, so there is nothing to follow.

Citations come from *citation sources*: any callable yielding :class:`Cited`. :func:`book_citations`
reads ``slime-source`` / ``{slime}`` in the book's files; a future source (the usage scanner's
occurrence ids) yields ``Cited(kind="occurrence", ident=..., file=None, ...)`` and everything below
works unchanged — only citations with a ``file`` are rewritten in place by :func:`apply_edits`.

The re-pin helpers turn moved drifts into text edits of the chapter files (:func:`plan_edits`,
:func:`apply_edits`) and update the lock textually, keeping its comments (:func:`repin_lock_text`).
Nothing here knows about Sphinx.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import subprocess
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from .atomicio import atomic_write
from .citations import find_citations
from .excerpt import INVALID_OPTION_PAIRS, ExcerptError, parse_line_spec
from .lock import LockError, SourceLock
from .pyranges import Definition, SymbolError, definitions, select_definition
from .store import SourceContentError, SourceError, SourcePathError, SourceStore, cache_root

__all__ = [
    "CitationSource",
    "Cited",
    "Drift",
    "DriftChecker",
    "Edit",
    "RevisionError",
    "Status",
    "apply_edits",
    "book_citations",
    "format_runs",
    "needs_writer",
    "plan_edits",
    "repin_lock_text",
    "resolve_commit",
    "summarize",
    "update_lock_file",
]

Runs = tuple[tuple[int, int], ...]

_HEX_RE = re.compile(r"[0-9a-fA-F]{4,40}")
_FULL_RE = re.compile(r"[0-9a-f]{40}")


class Status(StrEnum):
    """The fate of one citation between two commits (see the module docstring)."""

    UNCHANGED = "unchanged"
    MOVED = "moved"
    CHANGED = "changed"
    GONE = "gone"
    BROKEN = "broken"


#: Statuses the writer has to look at: a re-pin cannot settle them by rewriting line numbers.
NEEDS_WRITER = frozenset({Status.CHANGED, Status.GONE, Status.BROKEN})


class RevisionError(SourceError):
    """A revision is not a sha, is unknown to the source, or is ambiguous; the message says which."""


# -- citations ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cited:
    """One thing that points into the source: a selection of ``path`` valid at some commit.

    Attributes:
        kind: ``"directive"``, ``"role"``, or a citation source's own word (``"occurrence"``).
        path: repo-relative path as written.
        lines: a ``:lines:`` spec (``"81-104"``, ``"81-90,95"``), or None.
        pyobject: a qualified name, or None. Neither ``lines`` nor ``pyobject``: the whole file.
        emphasize: the directive's ``:emphasize-lines:`` spec (source line numbers), or None.
        file: the book file holding the citation, or None for citations that are not text in the
            book (they are reported, never rewritten).
        line: 1-based line of the citation in ``file`` (0 without a file).
        index: for a role, its position among the roles on that line (0-based), to rewrite it.
        ident: an identifier for citations without a file (an occurrence id), or None.
        error: the citation could not be parsed (e.g. a malformed role target), or None.
    """

    kind: str
    path: str
    lines: str | None = None
    pyobject: str | None = None
    emphasize: str | None = None
    file: Path | None = None
    line: int = 0
    index: int = 0
    ident: str | None = None
    error: str | None = None

    @property
    def where(self) -> str:
        """``file:line`` for a citation in the book, else the ``ident`` (or ``"?"``)."""
        if self.file is not None:
            return f"{self.file}:{self.line}"
        return self.ident or "?"

    def describe(self) -> str:
        """``path :lines: 81-104`` / ``path :pyobject: Name`` / ``path`` — the selection, as written."""
        if self.lines:
            return f"{self.path} :lines: {self.lines}"
        if self.pyobject:
            return f"{self.path} :pyobject: {self.pyobject}"
        return self.path


#: A citation source: anything that yields citations. :func:`book_citations` is one; the usage
#: scanner's occurrence ids will be another (``Cited(kind="occurrence", ident=..., file=None)``).
CitationSource = Callable[[], Iterable[Cited]]


def book_citations(paths: Iterable[Path]) -> Iterator[Cited]:
    """Every ``slime-source`` directive and ``{slime}`` role under ``paths``, as :class:`Cited`.

    Args:
        paths: files or directories; directories are searched for ``.md`` and ``.rst`` files.
    Returns:
        An iterator in file order (sorted paths), then line order, then position on the line.
    """
    files = sorted(
        p for root in map(Path, paths) for p in ([root] if root.is_file() else root.rglob("*"))
        if p.suffix in (".md", ".rst")
    )
    for file in files:
        roles_on_line: Counter[int] = Counter()
        for c in find_citations(file):
            index = 0
            if c.kind == "role":
                index = roles_on_line[c.line]
                roles_on_line[c.line] += 1
            yield Cited(
                kind=c.kind, path=c.path, lines=c.options.get("lines") or None,
                pyobject=c.options.get("pyobject") or None,
                emphasize=c.options.get("emphasize-lines") or None,
                file=file, line=c.line, index=index, error=c.error,
            )


# -- results ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Drift:
    """What one citation becomes at the new commit.

    Attributes:
        cited: the citation.
        status: see :class:`Status`.
        old_runs, new_runs: the selected line ranges (1-based, inclusive) at each commit; ``new_runs``
            of a ``changed`` citation is the counterpart the line diff of the two files suggests,
            and is None when the status is ``gone`` or ``broken``.
        old_blob, new_blob: blob ids read (None where the path did not resolve).
        old_text, new_text: the selected lines at each commit (runs concatenated).
        old_label, new_label: ``path@short`` at each commit, for diff headers.
        new_emphasize: the ``:emphasize-lines:`` spec carried to the new lines when ``moved`` (or
            ``unchanged``), else None.
        note: a sentence for the writer (ambiguous match, rename hint, error), or ``""``.
        renamed_to: the path git reports the file was renamed to, when the status is ``gone``.
    """

    cited: Cited
    status: Status
    old_runs: Runs | None = None
    new_runs: Runs | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    old_text: tuple[str, ...] = ()
    new_text: tuple[str, ...] = ()
    old_label: str = ""
    new_label: str = ""
    new_emphasize: str | None = None
    note: str = ""
    renamed_to: str | None = None

    @property
    def new_lines(self) -> str | None:
        """The ``:lines:`` spec at the new commit when the citation moved or is unchanged, else None."""
        if self.status in (Status.MOVED, Status.UNCHANGED) and self.cited.lines and self.new_runs:
            return format_runs(self.new_runs)
        return None

    def diff(self, reverse: bool = False) -> str:
        """A unified diff of the cited text, old → new (new → old with ``reverse``); ``""`` if equal.

        The headers name ``path@short`` and the line ranges (``L81–L104``).
        """
        a = (self.old_label, self.old_runs, self.old_text)
        b = (self.new_label, self.new_runs, self.new_text)
        if reverse:
            a, b = b, a
        if a[2] == b[2]:
            return ""
        lines = difflib.unified_diff(
            list(a[2]), list(b[2]), fromfile=f"{a[0]} {_label(a[1])}", tofile=f"{b[0]} {_label(b[1])}",
            lineterm="", n=2,
        )
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: status, where the selection went, and the note (the CLI's report line)."""
        text = str(self.status)
        if self.status is Status.MOVED:
            text += f" {_label(self.old_runs)} → {_label(self.new_runs)}"
        elif self.status is Status.CHANGED and self.new_runs is not None:
            text += f" {_label(self.old_runs)} → {_label(self.new_runs)}"
        elif self.status is Status.UNCHANGED and self.old_runs:
            text += f" {_label(self.old_runs)}"
        if self.note:
            text += f" ({self.note})"
        return text


def _label(runs: Runs | None) -> str:
    if not runs:
        return "(none)"
    return ", ".join(f"L{a}" if a == b else f"L{a}–L{b}" for a, b in runs)


def format_runs(runs: Iterable[tuple[int, int]]) -> str:
    """``[(81, 104)]`` → ``"81-104"``; ``[(81, 90), (95, 95)]`` → ``"81-90,95"`` (the option form)."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _compress(numbers: Iterable[int]) -> str:
    """Sorted line numbers as an ``:emphasize-lines:`` spec: ``[46, 47, 48, 50]`` → ``"46-48,50"``."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return format_runs((a, b) for a, b in runs)


def summarize(drifts: Iterable[Drift]) -> dict[Status, int]:
    """Count drifts per status, every status present (zero included), in :class:`Status` order."""
    counts = Counter(d.status for d in drifts)
    return {status: counts.get(status, 0) for status in Status}


def needs_writer(drifts: Iterable[Drift]) -> list[Drift]:
    """The drifts a re-pin leaves for the writer: ``changed``, ``gone`` and ``broken``."""
    return [d for d in drifts if d.status in NEEDS_WRITER]


# -- the checker ----------------------------------------------------------------------------------------
@dataclass
class _File:
    path: str
    blob: str
    lines: list[str]
    _defs: list[Definition] | None = field(default=None, repr=False)
    _defs_error: str | None = field(default=None, repr=False)

    def symbol(self, qualname: str) -> tuple[int, int]:
        """Like :func:`slimebook.pyranges.symbol_range`, with the parse cached per file."""
        if self._defs is None and self._defs_error is None:
            try:
                self._defs = definitions("\n".join(self.lines) + "\n")
            except SymbolError as exc:
                self._defs_error = str(exc)
        if self._defs_error is not None:
            raise SymbolError(self._defs_error)
        assert self._defs is not None
        return select_definition(self._defs, qualname)

    def same_name(self, qualname: str) -> list[Definition]:
        """Definitions whose last name component equals ``qualname``'s (for a hint)."""
        try:
            self.symbol(qualname)
        except SymbolError:
            pass
        last = qualname.rsplit(".", 1)[-1]
        return [d for d in self._defs or [] if d.qualname.rsplit(".", 1)[-1] == last]


class DriftChecker:
    """Compare citations between an old and a new commit of the same repository.

    Args:
        old: a store holding the commit the citations were written against.
        new: a store holding the commit to compare with.

    Both commits must be in the cache (:meth:`SourceStore.require`); nothing is fetched. Files,
    parses and line diffs are cached per blob, so checking a whole book reads each file once.
    """

    def __init__(self, old: SourceStore, new: SourceStore) -> None:
        self.old = old
        self.new = new
        self._files: dict[tuple[str, str], _File | SourceError] = {}
        self._opcodes: dict[tuple[str, str], list[tuple[str, int, int, int, int]]] = {}
        self._renames: dict[str, tuple[str, str]] | None = None

    def check_all(self, cited: Iterable[Cited]) -> list[Drift]:
        """:meth:`check` each citation, in the given order."""
        return [self.check(c) for c in cited]

    def check(self, cited: Cited) -> Drift:
        """Follow one citation from the old commit to the new one.

        Returns:
            Its :class:`Drift`. Problems with the citation itself are a ``broken`` or ``gone``
            status with a note, never an exception.
        Raises:
            PinMissingError: a commit is not in the cache.
        """
        old_label = f"{cited.path}@{self.old.lock.short}"
        new_label = f"{cited.path}@{self.new.lock.short}"
        base = Drift(cited, Status.BROKEN, old_label=old_label, new_label=new_label)

        def broken(note: str) -> Drift:
            return _replace(base, note=f"at {self.old.lock.short}: {note}")

        if cited.error:
            return broken(cited.error)
        given = {k for k, v in (("lines", cited.lines), ("pyobject", cited.pyobject)) if v}
        for pair, reason in INVALID_OPTION_PAIRS.items():
            if pair <= given:
                return broken(reason)
        old = self._read(self.old, cited.path)
        if isinstance(old, SourceError):
            return broken(str(old))
        try:
            if cited.pyobject:
                old_runs: Runs = (old.symbol(cited.pyobject),)
            elif cited.lines:
                old_runs = tuple(parse_line_spec(cited.lines, total=len(old.lines)))
            else:
                old_runs = ((1, len(old.lines)),) if old.lines else ()
        except (SymbolError, ExcerptError) as exc:
            return broken(f"{cited.path}: {exc}")
        old_text = _text(old.lines, old_runs)
        base = _replace(base, old_runs=old_runs, old_blob=old.blob, old_text=old_text)

        new = self._read(self.new, cited.path)
        if isinstance(new, SourceError):
            return self._gone(base, old, str(new))
        base = _replace(base, new_blob=new.blob)
        if cited.pyobject:
            return self._pyobject(base, old, new)
        if cited.lines:
            return self._lines(base, old, new)
        if new.lines == old.lines:
            return _replace(base, status=Status.UNCHANGED, new_runs=old_runs, new_text=old_text)
        runs = ((1, len(new.lines)),) if new.lines else ()
        return _replace(base, status=Status.CHANGED, new_runs=runs, new_text=tuple(new.lines))

    # -- by kind --------------------------------------------------------------------------------------
    def _pyobject(self, base: Drift, old: _File, new: _File) -> Drift:
        qualname = base.cited.pyobject
        assert qualname and base.old_runs
        try:
            runs: Runs = (new.symbol(qualname),)
        except SymbolError as exc:
            note = f"at {self.new.lock.short}: {exc}"
            others = [d for d in new.same_name(qualname) if d.qualname != qualname]
            if others:
                note += "; same name: " + ", ".join(f"{d.qualname} (L{d.start})" for d in others)
            return _replace(base, status=Status.GONE, note=note)
        text = _text(new.lines, runs)
        if text != base.old_text:
            return _replace(base, status=Status.CHANGED, new_runs=runs, new_text=text)
        shift = runs[0][0] - base.old_runs[0][0]
        status = Status.UNCHANGED if shift == 0 else Status.MOVED
        emphasize = _shift_emphasize(base.cited.emphasize, base.old_runs, runs)
        return _replace(base, status=status, new_runs=runs, new_text=text, new_emphasize=emphasize)

    def _lines(self, base: Drift, old: _File, new: _File) -> Drift:
        old_runs = base.old_runs
        assert old_runs is not None
        opcodes = self._diff(old, new)
        found, note = _relocate(old.lines, new.lines, old_runs, opcodes)
        if found is None:
            runs = tuple(
                (a, b) for a, b in (_map_range(opcodes, a, b) for a, b in old_runs) if a <= b
            )
            text = _text(new.lines, runs)
            note = "not found verbatim; " + ("→ is the counterpart by line diff" if runs else "its lines were deleted")
            return _replace(base, status=Status.CHANGED, new_runs=runs or None, new_text=text, note=note)
        status = Status.UNCHANGED if found == old_runs else Status.MOVED
        emphasize = _shift_emphasize(base.cited.emphasize, old_runs, found)
        return _replace(base, status=status, new_runs=found, new_text=base.old_text,
                        new_emphasize=emphasize, note=note)

    def _gone(self, base: Drift, old: _File, reason: str) -> Drift:
        note = f"at {self.new.lock.short}: {reason}"
        renamed = self.renames().get(old.path)
        if renamed is None:
            return _replace(base, status=Status.GONE, note=note)
        target, score = renamed
        note += f"; git detects a rename to {target} ({score}% similar)"
        hint = self._follow(base, target)
        if hint:
            note += f"; {hint}"
        return _replace(base, status=Status.GONE, note=note, renamed_to=target)

    def _follow(self, base: Drift, target: str) -> str:
        """Where the old selection is in the file ``target`` (a rename) at the new commit, as a phrase."""
        new = self._read(self.new, target)
        if isinstance(new, SourceError) or base.old_runs is None:
            return ""
        cited = base.cited
        if cited.pyobject:
            try:
                runs: Runs = (new.symbol(cited.pyobject),)
            except SymbolError:
                return f"{cited.pyobject} is not in it"
            same = _text(new.lines, runs) == base.old_text
            return f"{cited.pyobject} is there at {_label(runs)}" + (" (same text)" if same else " (text differs)")
        if cited.lines:
            old = self._read(self.old, cited.path)
            assert not isinstance(old, SourceError)
            found, _ = _relocate(old.lines, new.lines, base.old_runs, self._diff(old, new))
            return f"the cited text is there at {_label(found)}" if found else "the cited text is not in it verbatim"
        return ""

    # -- reading ----------------------------------------------------------------------------------------
    def _read(self, store: SourceStore, path: str) -> _File | SourceError:
        key = (store.lock.commit, path)
        if key not in self._files:
            try:
                real = store.resolve(path)
                self._files[key] = _File(real, store.blob_id(real), store.read_lines(real))
            except (SourcePathError, SourceContentError) as exc:
                self._files[key] = exc
        return self._files[key]

    def _diff(self, old: _File, new: _File) -> list[tuple[str, int, int, int, int]]:
        key = (old.blob, new.blob)
        if key not in self._opcodes:
            matcher = difflib.SequenceMatcher(None, old.lines, new.lines, autojunk=False)
            self._opcodes[key] = matcher.get_opcodes()
        return self._opcodes[key]

    def renames(self) -> dict[str, tuple[str, str]]:
        """Renames git detects between the two commits: old path → (new path, similarity percent).

        Runs ``git diff-tree -M`` in the new commit's repository with the old one's objects as an
        alternate; any git failure gives an empty mapping (renames are only a hint).
        """
        if self._renames is None:
            self._renames = {}
            env = {**os.environ, "LC_ALL": "C",
                   "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.old.git_dir / "objects")}
            try:
                proc = subprocess.run(
                    ["git", "diff-tree", "-r", "-M", "--name-status", "-z",
                     self.old.lock.commit, self.new.lock.commit],
                    cwd=self.new.git_dir, env=env, capture_output=True, check=False,
                )
            except OSError:
                return self._renames
            if proc.returncode == 0:
                fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
                i = 0
                while i < len(fields) and fields[i]:
                    status = fields[i]
                    if status.startswith(("R", "C")):
                        if status.startswith("R"):
                            self._renames[fields[i + 1]] = (fields[i + 2], str(int(status[1:] or 0)))
                        i += 3
                    else:
                        i += 2
        return self._renames


def _replace(drift: Drift, **changes: object) -> Drift:
    return dataclasses.replace(drift, **changes)


def _text(lines: Sequence[str], runs: Runs) -> tuple[str, ...]:
    return tuple(line for a, b in runs for line in lines[a - 1 : b])


def _map_line(opcodes: Sequence[tuple[str, int, int, int, int]], line: int, edge: str) -> int:
    """Carry 1-based old ``line`` into the new file through the line diff.

    A line inside an equal block maps to its twin; a replaced or deleted line maps to the first
    line of its replacement (``edge="start"``) or the last one (``edge="end"``; one before the gap
    for a deletion).
    """
    i = line - 1
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= i < i2:
            if tag == "equal":
                return j1 + (i - i1) + 1
            return j1 + 1 if edge == "start" else j2
    return opcodes[-1][4] + 1 if opcodes else line


def _map_range(opcodes: Sequence[tuple[str, int, int, int, int]], a: int, b: int) -> tuple[int, int]:
    return _map_line(opcodes, a, "start"), _map_line(opcodes, b, "end")


def _occurrences(new_lines: Sequence[str], block: Sequence[str]) -> list[int]:
    """1-based start lines where ``block`` occurs verbatim in ``new_lines``."""
    n = len(block)
    if n == 0:
        return []
    first = block[0]
    return [
        i + 1 for i in range(len(new_lines) - n + 1)
        if new_lines[i] == first and list(new_lines[i : i + n]) == list(block)
    ]


def _relocate(
    old_lines: Sequence[str], new_lines: Sequence[str], runs: Runs,
    opcodes: Sequence[tuple[str, int, int, int, int]],
) -> tuple[Runs | None, str]:
    """Find every cited block verbatim in the new file.

    Preference: one shift for all runs (the selection moved as a whole); otherwise each run on its
    own, as long as the runs stay ascending and disjoint. A block still at its old lines stays there;
    otherwise, among several places the nearest to the old position wins — the old first line
    carried through the line diff (:func:`_map_line`), ties going to the nearest old line number,
    then the earliest.

    Returns:
        ``(runs, note)``: the new runs or None when some block is not found (or the runs would
        overlap), and a note naming the alternatives when the choice was ambiguous.
    """
    found = [_occurrences(new_lines, old_lines[a - 1 : b]) for a, b in runs]
    if any(not f for f in found):
        return None, ""
    anchors = [_map_line(opcodes, a, "start") for a, _ in runs]

    def rank(start: int, old_start: int, anchor: int) -> tuple[int, int, int]:
        return abs(start - anchor), abs(start - old_start), start

    shifts = set.intersection(*({s - a for s in f} for f, (a, _) in zip(found, runs, strict=True)))
    if shifts:
        a0 = runs[0][0]
        best = min(shifts, key=lambda s: rank(a0 + s, a0, anchors[0]))
        shift = 0 if 0 in shifts else best  # still in place: the citation holds as written
        new_runs = tuple((a + shift, b + shift) for a, b in runs)
        note = ""
        if len(shifts) > 1:
            places = _places(a0 + s for s in sorted(shifts))
            note = f"the cited text occurs {len(shifts)} times ({places}); "
            if shift == 0:
                note += f"kept in place, although the line diff carries L{a0} to L{anchors[0]}"
            else:
                note += f"chose L{a0 + shift}, nearest to the old position (L{a0} → L{anchors[0]} by line diff)"
        return new_runs, note
    chosen: list[tuple[int, int]] = []
    notes: list[str] = []
    for f, (a, b), anchor in zip(found, runs, anchors, strict=True):
        start = a if a in f else min(f, key=lambda s, a=a, anchor=anchor: rank(s, a, anchor))
        chosen.append((start, start + (b - a)))
        if len(f) > 1:
            notes.append(f"L{a}–L{b} occurs {len(f)} times ({_places(f)}); chose L{start}, "
                         f"nearest to the old position")
    if any(chosen[k][0] <= chosen[k - 1][1] for k in range(1, len(chosen))):
        return None, ""
    return tuple(chosen), "; ".join(["runs moved separately", *notes])


def _places(starts: Iterable[int], limit: int = 6) -> str:
    """``L1, L7`` — at most ``limit`` places, then ``…``."""
    starts = list(starts)
    shown = ", ".join(f"L{s}" for s in starts[:limit])
    return shown + (", …" if len(starts) > limit else "")


def _shift_emphasize(spec: str | None, old_runs: Runs, new_runs: Runs) -> str | None:
    """Carry ``:emphasize-lines:`` from old to new runs (each line shifts with its run).

    The writer's spelling is kept (``138,139`` stays two items); only a range whose ends fall in
    runs that moved by different amounts is respelled. None when ``spec`` is empty or malformed,
    or names a line outside the old runs (the build rejects that already; it is left alone).
    """
    if not spec:
        return None
    try:
        parse_line_spec(spec)
    except ExcerptError:
        return None

    def shift(n: int) -> int | None:
        for (a, b), (c, _d) in zip(old_runs, new_runs, strict=True):
            if a <= n <= b:
                return c - a
        return None

    parts: list[str] = []
    for part in spec.split(","):
        ends = [int(x) for x in part.split("-")]
        deltas = [shift(n) for n in ends]
        if any(d is None for d in deltas):
            return None
        if len(set(deltas)) > 1:  # a range across runs that moved apart: respell the lines
            moved = [n + shift(n) for n in range(ends[0], ends[-1] + 1) if shift(n) is not None]
            parts.append(_compress(moved))
        else:
            parts.append("-".join(str(n + deltas[0]) for n in ends))
    return ",".join(parts)


# -- revisions ----------------------------------------------------------------------------------------
def resolve_commit(lock: SourceLock, rev: str, root: Path | None = None) -> str:
    """The full sha of ``rev`` (a full or abbreviated hex sha, at least 4 digits).

    Resolution order: a full sha is returned as is (lowercased); else the source repository
    (``$SLIME_SOURCE_URL`` or the lock's URL) when it is a local directory; else the commits
    already in the cache; else the source is fetched without trees or blobs into a temporary
    repository that is removed afterwards.

    Args:
        lock: the lock entry (its name and URL).
        rev: the revision as typed.
        root: the cache directory (default :func:`slimebook.store.cache_root`).
    Raises:
        RevisionError: ``rev`` is not hex, is unknown, or is ambiguous.
    """
    if not _HEX_RE.fullmatch(rev):
        raise RevisionError(f"{rev!r} is not a commit sha (4 to 40 hex digits)")
    rev = rev.lower()
    if _FULL_RE.fullmatch(rev):
        return rev
    url = SourceStore(lock, root).source_url()
    if Path(url).is_dir():
        return _rev_parse(Path(url), rev, url)
    git_root = (Path(root) if root is not None else cache_root()) / "git"
    prefix = f"{lock.name}-"
    cached = sorted({
        p.name[len(prefix) : -len(".git")] for p in git_root.glob(f"{prefix}{rev}*.git") if p.is_dir()
    }) if git_root.is_dir() else []
    if len(cached) == 1:
        return cached[0]
    if len(cached) > 1:
        raise RevisionError(f"{rev!r} is ambiguous in the source cache: {', '.join(cached)}")
    with tempfile.TemporaryDirectory(prefix="slimebook-rev-") as tmp:
        _run_git(["init", "--quiet", "--bare", tmp])
        proc = _run_git(["fetch", "--quiet", "--filter=tree:0", "--no-tags", url,
                         "+refs/heads/*:refs/heads/*"], cwd=Path(tmp))
        if proc.returncode != 0:
            raise RevisionError(f"cannot resolve {rev!r}: fetching {url} failed: {proc.stderr.strip()}")
        return _rev_parse(Path(tmp), rev, url)


def _run_git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _rev_parse(repo: Path, rev: str, url: str) -> str:
    proc = _run_git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd=repo)
    full = proc.stdout.strip()
    if proc.returncode == 0 and _FULL_RE.fullmatch(full):
        return full
    probe = _run_git(["rev-parse", "--disambiguate=" + rev], cwd=repo)
    candidates = probe.stdout.split()
    if len(candidates) > 1:
        raise RevisionError(f"{rev!r} is ambiguous in {url}: {', '.join(candidates[:5])}")
    raise RevisionError(f"{rev!r} is not a commit in {url}")


# -- re-pin: edits of the book and of the lock ------------------------------------------------------------
@dataclass(frozen=True)
class Edit:
    """One textual rewrite in a book file.

    Attributes:
        file: the book file.
        line: the 1-based line of the directive or role (:attr:`Cited.line`).
        option: ``"lines"`` or ``"emphasize-lines"`` (a directive option) or ``"role"`` (the line
            numbers in a role's target).
        index: for a role, its position among the roles on that line.
        path: the cited path (checked against the line before rewriting).
        old: the spec as written; new: the spec to write.
    """

    file: Path
    line: int
    option: str
    index: int
    path: str
    old: str
    new: str

    def describe(self) -> str:
        """``file:line: :lines: 200-213 → 204-217`` (or ``role …``)."""
        what = "role lines" if self.option == "role" else f":{self.option}:"
        return f"{self.file}:{self.line}: {what} {self.old} → {self.new}"


def plan_edits(drifts: Iterable[Drift]) -> list[Edit]:
    """The rewrites that carry ``moved`` citations to their new lines.

    ``:lines:`` of directives and the line numbers of ``{slime}`` roles follow the text;
    ``:emphasize-lines:`` follow it for ``:lines:`` and ``:pyobject:`` directives alike. Citations
    without a file (e.g. occurrence ids) are never edited.

    Returns:
        Edits sorted by file and line.
    """
    edits: list[Edit] = []
    for d in drifts:
        c = d.cited
        if d.status is not Status.MOVED or c.file is None or c.kind not in ("directive", "role"):
            continue
        new_lines = d.new_lines
        if c.lines and new_lines and new_lines != c.lines:
            option = "lines" if c.kind == "directive" else "role"
            edits.append(Edit(c.file, c.line, option, c.index, c.path, c.lines, new_lines))
        if c.kind == "directive" and c.emphasize and d.new_emphasize and d.new_emphasize != c.emphasize:
            edits.append(Edit(c.file, c.line, "emphasize-lines", 0, c.path, c.emphasize, d.new_emphasize))
    return sorted(edits, key=lambda e: (str(e.file), e.line, e.index, e.option))


_OPTION_LINE = re.compile(r"^(?P<head>\s*:(?P<key>[\w-]+):\s*)(?P<value>.*?)(?P<tail>\s*)$")
_ROLE = {".rst": re.compile(r":slime:`(?P<text>[^`]+)`"), "": re.compile(r"\{slime\}`(?P<text>[^`]+)`")}
_ROLE_LINES = re.compile(r":(?P<lines>\d+(?:-\d+)?)(?P<tail>\s*>?\s*)$")


def _same_spec(a: str, b: str) -> bool:
    try:
        return parse_line_spec(a) == parse_line_spec(b)
    except ExcerptError:
        return a.strip() == b.strip()


def _apply_one(lines: list[str], edit: Edit) -> str | None:
    """Apply ``edit`` to ``lines`` in place; return a problem sentence instead when it no longer fits."""
    if not 1 <= edit.line <= len(lines):
        return f"line {edit.line} is past the end of the file"
    head = lines[edit.line - 1]
    if edit.option == "role":
        matches = list(_ROLE[".rst" if edit.file.suffix == ".rst" else ""].finditer(head))
        if edit.index >= len(matches):
            return "the role is no longer on that line"
        role = matches[edit.index]
        text = role.group("text")
        found = _ROLE_LINES.search(text)
        if edit.path not in text or not found or not _same_spec(found.group("lines"), edit.old):
            return f"the role now reads {text!r}, expected {edit.path}:{edit.old}"
        new_text = text[: found.start()] + f":{edit.new}" + found.group("tail")
        start, end = role.span("text")
        lines[edit.line - 1] = head[:start] + new_text + head[end:]
        return None
    if "slime-source" not in head or edit.path not in head:
        return f"line {edit.line} is no longer a slime-source directive for {edit.path}"
    for n in range(edit.line, len(lines)):
        match = _OPTION_LINE.match(lines[n].rstrip("\r"))
        if not match:
            break
        if match.group("key") != edit.option:
            continue
        if not _same_spec(match.group("value"), edit.old):
            return f":{edit.option}: now reads {match.group('value')!r}, expected {edit.old!r}"
        cr = "\r" if lines[n].endswith("\r") else ""
        lines[n] = match.group("head") + edit.new + match.group("tail") + cr
        return None
    return f"the directive has no :{edit.option}: option any more"


def apply_edits(edits: Iterable[Edit]) -> list[tuple[Edit, str | None]]:
    """Rewrite the book files; each edit is checked against the current text first.

    An edit whose directive, role or option value no longer reads as expected (the file changed
    since the report) is skipped with a reason. Files are rewritten atomically (temporary file and
    ``os.replace``), byte for byte except the edited specs; untouched files are not written.

    Returns:
        ``(edit, problem)`` pairs in input order; ``problem`` is None for an applied edit.
    Raises:
        OSError: a file cannot be read or written.
    """
    edits = list(edits)
    results: dict[int, str | None] = {}
    by_file: dict[Path, list[int]] = {}
    for k, e in enumerate(edits):
        by_file.setdefault(e.file, []).append(k)
    for file, indices in by_file.items():
        with open(file, encoding="utf-8", newline="") as fh:
            original = fh.read()
        lines = original.split("\n")
        for k in indices:
            results[k] = _apply_one(lines, edits[k])
        text = "\n".join(lines)
        if text != original:
            atomic_write(file, text)
    return [(e, results[k]) for k, e in enumerate(edits)]




_TABLE = re.compile(r"^\s*\[(?P<name>[^\[\]]+)\]\s*(?:#.*)?$")
_KEY = r"^(?P<head>\s*{key}\s*=\s*)(?P<q>[\"'])(?P<value>[^\"']*)(?P=q)(?P<tail>.*)$"


def repin_lock_text(text: str, name: str, commit: str, previous: str) -> str:
    """The lock text with ``[name]``'s ``commit`` set to ``commit`` and ``previous_commit`` to ``previous``.

    The edit is textual: comments, order and spacing are kept. An existing ``previous_commit``
    line is rewritten; otherwise one is inserted right after the ``commit`` line.

    Args:
        text: the lock file's text.
        name: the table (``"slime"``).
        commit, previous: full 40-hex shas.
    Returns:
        The new text.
    Raises:
        LockError: the table or its ``commit`` line is not found, or a sha is not 40 hex digits.
    """
    for sha in (commit, previous):
        if not _FULL_RE.fullmatch(sha):
            raise LockError(f"not a full 40-hex sha: {sha!r}")
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if (m := _TABLE.match(line)) and m.group("name").strip() == name),
                 None)
    if start is None:
        raise LockError(f"the lock has no [{name}] table")
    end = next((i for i in range(start + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
    commit_re = re.compile(_KEY.format(key="commit"))
    previous_re = re.compile(_KEY.format(key="previous_commit"))
    commit_at = previous_at = None
    for i in range(start + 1, end):
        if commit_re.match(lines[i]):
            commit_at = i
        elif previous_re.match(lines[i]):
            previous_at = i

    def sub(i: int, pattern: re.Pattern[str], value: str) -> str:
        m = pattern.match(lines[i])
        assert m
        return f"{m.group('head')}{m.group('q')}{value}{m.group('q')}{m.group('tail')}"

    if commit_at is None:
        raise LockError(f"[{name}] has no commit = \"...\" line")
    lines[commit_at] = sub(commit_at, commit_re, commit)
    if previous_at is not None:
        lines[previous_at] = sub(previous_at, previous_re, previous)
    else:
        cr = "\r" if lines[commit_at].endswith("\r") else ""
        lines.insert(commit_at + 1, f'previous_commit = "{previous}"{cr}')
    return "\n".join(lines)


def update_lock_file(path: Path, name: str, commit: str, previous: str) -> None:
    """Re-pin the lock file at ``path`` in place with :func:`repin_lock_text`.

    The new text is parsed before it is written (atomically), so a failed edit leaves the file as it was.

    Raises:
        LockError: see :func:`repin_lock_text`, or the edited text would not read back as
            ``commit`` / ``previous_commit``.
        OSError: the file cannot be read or written.
    """
    text = repin_lock_text(path.read_text(encoding="utf-8"), name, commit, previous)
    try:
        entry = tomllib.loads(text).get(name, {})
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"{path}: the re-pinned lock would not be valid TOML: {exc}") from exc
    if entry.get("commit") != commit or entry.get("previous_commit") != previous:
        raise LockError(f"{path}: could not re-pin [{name}] textually; edit commit and previous_commit by hand")
    atomic_write(path, text)
