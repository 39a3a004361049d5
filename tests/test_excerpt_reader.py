"""The excerpt reader with written-down expectations: runs, emphasized lines (the last line of a run included),
the blocks the directive draws from them, and the caption label.

The fixture pin is ``MODULE_V1`` of ``conftest.py``; its line numbers are written here as literals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SourceRepo
from slimebook.excerpt import Excerpt, ExcerptError, parse_line_spec, read_excerpt
from slimebook.lines import split_lines
from slimebook.lock import load_lock
from slimebook.sphinxext.directives.source import excerpt_blocks
from slimebook.store import SourcePathError, SourceStore


@pytest.fixture
def store(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo) -> SourceStore:
    lock = tmp_path / "sources.toml"
    lock.write_text(source_repo.lock_text())
    return SourceStore(load_lock(lock), root=fetched_cache)


def test_emphasis_on_the_last_line_of_each_run(store: SourceStore) -> None:
    excerpt = read_excerpt(store, "pkg/mod.py", lines="4-6,20-21", emphasize="6,21")
    assert excerpt.runs == [(4, 6), (20, 21)]
    assert excerpt.emphasize == frozenset({6, 21})
    assert excerpt.texts == [["def helper(x):", '    """Return x."""', "    return x"],
                             ["async def run():", "    await asyncio.sleep(0)"]]
    blocks = excerpt_blocks(excerpt)
    assert [b["highlight_args"] for b in blocks] == [{"linenostart": 4, "hl_lines": [3]},
                                                      {"linenostart": 20, "hl_lines": [2]}]


def test_emphasis_on_the_first_line_of_each_run(store: SourceStore) -> None:
    excerpt = read_excerpt(store, "pkg/mod.py", lines="4-6,20-21", emphasize="4,20")
    blocks = excerpt_blocks(excerpt)
    assert [b["highlight_args"] for b in blocks] == [{"linenostart": 4, "hl_lines": [1]},
                                                      {"linenostart": 20, "hl_lines": [1]}]


def test_emphasis_between_runs_is_an_error(store: SourceStore) -> None:
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", lines="4-6,20-21", emphasize="7")
    assert info.value.option == ":emphasize-lines:" and info.value.path == "pkg/mod.py"
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", lines="4-6,20-21", emphasize="22")
    assert info.value.option == ":emphasize-lines:"


def test_blocks_from_an_excerpt_built_by_hand() -> None:
    excerpt = Excerpt("p.py", "0" * 40, [(3, 5), (8, 9)], [["a", "", "c"], ["d", "e"]], frozenset({5, 8, 9}))
    blocks = excerpt_blocks(excerpt)
    assert [b.astext() for b in blocks] == ["a\n\nc\n", "d\ne\n"]
    assert [b["highlight_args"] for b in blocks] == [{"linenostart": 3, "hl_lines": [3]},
                                                      {"linenostart": 8, "hl_lines": [1, 2]}]
    assert [b["language"] for b in blocks] == ["python", "python"]
    assert all(b["linenos"] and b["classes"] == ["slime-run"] for b in blocks)
    plain = excerpt_blocks(Excerpt("p.py", "0" * 40, [(3, 3)], [["a"]]))
    assert [b["highlight_args"] for b in plain] == [{"linenostart": 3}]


def test_whole_file_pyobject_and_label(store: SourceStore) -> None:
    whole = read_excerpt(store, "README.md")
    assert (whole.runs, whole.texts, whole.symbol) == ([(1, 3)], [["# upstream", "", "line three"]], None)
    assert whole.label() == "L1–L3" and (whole.start, whole.end) == (1, 3)
    method = read_excerpt(store, "pkg/mod.py", pyobject="Outer.Inner.method", emphasize="14")
    assert (method.runs, method.symbol, method.emphasize) == ([(11, 15)], "Outer.Inner.method", frozenset({14}))
    split = read_excerpt(store, "pkg/mod.py", lines="4-6,20")
    assert split.label() == "L4–L6, L20" and (split.start, split.end) == (4, 20)
    alias = read_excerpt(store, "pkg/alias.py", lines="1")
    assert alias.path == "pkg/mod.py" and alias.blob == store.blob_id("pkg/mod.py")


def test_tabs_are_expanded_in_texts(store: SourceStore) -> None:
    excerpt = read_excerpt(store, "pkg/tabs2.py")
    assert excerpt.texts[0] and not any("\t" in line for run in excerpt.texts for line in run)


@pytest.mark.parametrize(("spec", "total", "runs"), [
    ("81-104", None, [(81, 104)]),
    ("81-90,95", None, [(81, 90), (95, 95)]),
    ("1-2,3", None, [(1, 3)]),
    ("1-2, 3-4 ,6", None, [(1, 4), (6, 6)]),
    (" 7 ", 7, [(7, 7)]),
    ("5-5", 5, [(5, 5)]),
])
def test_parse_line_spec_literals(spec: str, total: int | None, runs: list[tuple[int, int]]) -> None:
    assert parse_line_spec(spec, total=total) == runs


@pytest.mark.parametrize(("spec", "total"), [
    ("", None), ("  ", None), ("abc", None), ("1-", None), ("0", None), ("0-3", None), ("2-0", None),
    ("5-3", None), ("3,3", None), ("4,2", None), ("1-3,2-5", None), ("8", 7), ("6-8", 7), ("1,,2", None),
    ("1-2,5-6,4", None),  # after the last run, not only after the first
])
def test_parse_line_spec_rejects(spec: str, total: int | None) -> None:
    with pytest.raises(ExcerptError):
        parse_line_spec(spec, total=total)


def test_lines_and_pyobject_together_are_refused(store: SourceStore) -> None:
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", lines="1", pyobject="helper")
    assert info.value.option == ":lines: :pyobject:" and info.value.path == "pkg/mod.py"


def test_errors_name_the_option_and_path(store: SourceStore) -> None:
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", lines="30")
    assert (info.value.option, info.value.path) == (":lines:", "pkg/mod.py")
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", pyobject="nothing_here")
    assert (info.value.option, info.value.path) == (":pyobject:", "pkg/mod.py")
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/missing.py")
    assert (info.value.option, info.value.path) == (None, "pkg/missing.py")
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "pkg/mod.py", emphasize="x")
    assert info.value.option == ":emphasize-lines:"


class _Store:
    """A stand-in with the four store methods the reader calls: files held in a dict."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def resolve(self, path: str) -> str:
        if path not in self.files:
            raise SourcePathError(f"{path!r} does not exist at the pin")
        return path

    def read_text(self, path: str) -> str:
        return self.files[path]

    def read_lines(self, path: str) -> list[str]:
        return split_lines(self.files[path])

    def blob_id(self, path: str) -> str:
        return f"blob-of-{path}"


def test_an_empty_file_is_an_error_unless_a_range_is_asked() -> None:
    store = _Store({"empty.py": "", "one.py": "x = 1\n"})
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "empty.py")
    assert (info.value.path, info.value.option) == ("empty.py", None)
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "empty.py", lines="1")
    assert info.value.option == ":lines:"
    one = read_excerpt(store, "one.py")
    assert (one.path, one.blob, one.runs, one.texts, one.emphasize) == ("one.py", "blob-of-one.py", [(1, 1)],
                                                                        [["x = 1"]], frozenset())


def test_a_missing_name_points_at_the_symbol_listing_and_a_parse_error_does_not() -> None:
    store = _Store({"m.py": "def f():\n    pass\n\n\nclass K:\n    def g(self):\n        pass\n",
                    "bad.py": "def f(:\n"})
    hint = " (`slimebook sources show m.py --symbols` lists them all)"
    for name, message in [("h", "no definition named 'h'"), ("g", "no definition named 'g'; closest: K.g")]:
        with pytest.raises(ExcerptError) as info:
            read_excerpt(store, "m.py", pyobject=name)
        assert str(info.value) == f"m.py: :pyobject: {message}{hint}"
    with pytest.raises(ExcerptError) as info:
        read_excerpt(store, "bad.py", pyobject="f")
    assert str(info.value).startswith("bad.py: :pyobject: does not parse: ")
    assert "--symbols" not in str(info.value)


def test_a_store_error_keeps_the_path_and_no_option() -> None:
    with pytest.raises(ExcerptError) as info:
        read_excerpt(_Store({}), "gone.py", lines="1", emphasize="1")
    assert (info.value.path, info.value.option) == ("gone.py", None)


def test_error_text_is_path_option_reason() -> None:
    assert str(ExcerptError("R", path="p.py", option=":lines:")) == "p.py: :lines: R"
    assert str(ExcerptError("R", option=":lines:")) == ":lines: R"
    assert str(ExcerptError("R")) == "R"
    assert str(ExcerptError("'p.py' is R", path="p.py")) == "'p.py' is R"  # a reason quoting the path already
    first = ExcerptError("R", path="a.py")
    assert first.located(path="b.py", option=":x:").path == "a.py"
    assert ExcerptError("R").located(path="b.py").path == "b.py"
    assert ExcerptError("R", option=":a:").located(option=":b:").option == ":a:"
    assert ExcerptError("R").located(option=":b:").option == ":b:"
    assert ExcerptError("R").located().reason == "R"


def test_an_empty_option_value_counts_as_not_given() -> None:
    store = _Store({"m.py": "def f():\n    pass\n"})
    assert read_excerpt(store, "m.py", lines="", pyobject="f").runs == [(1, 2)]
    assert read_excerpt(store, "m.py", lines="2", pyobject="").runs == [(2, 2)]
    assert read_excerpt(store, "m.py", emphasize="").emphasize == frozenset()


def test_line_numbers_past_256_compare_by_value() -> None:
    """CPython shares int objects only up to 256: an identity test instead of ``==`` breaks long files."""
    assert parse_line_spec("299-300,301") == [(299, 301)]
    assert parse_line_spec("1000-1002,1003-1004") == [(1000, 1004)]
    single = Excerpt("p.py", "0" * 40, [(int("300"), int("3" + "00"))], [["x"]])
    assert single.label() == "L300"


def test_an_excerpt_is_frozen() -> None:
    import dataclasses

    excerpt = Excerpt("p.py", "0" * 40, [(1, 1)], [["x"]])
    with pytest.raises(dataclasses.FrozenInstanceError):
        excerpt.path = "q.py"  # type: ignore[misc]
