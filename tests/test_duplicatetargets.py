"""A name defined in two documents warns as a full serial read warns, whichever readers read the two and whichever
documents a build reads again (``slimebook.sphinxext.fixes.duplicatetargets``): Sphinx compares names only with what the
reader at hand sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import copy_root
from slimebook.sphinxext.fixes.duplicatetargets import Definition, serial_warnings

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
#: what the root's b.md defines again: the warning's phrase, its line, whether Sphinx names a.md's path (else "a")
_TWICE = {
    "label twice": (4, True),
    "term description of 双份": (10, False),
    "label of equation eq-twice": (13, False),
    "object description of twice": (19, False),
}
_OURS = "(a serial read of the whole book warns here) [slimebook.duplicate]"


def _warnings(app) -> str:
    return _COLOUR.sub("", app._warning.getvalue())


def _project(root: Path, pages: dict[str, str]) -> Path:
    """A MyST project under ``root`` with the duplicate check, a glob toctree and ``pages`` (name → text)."""
    root.mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "slimebook.sphinxext.accelerate.readplan", '
                                  '"slimebook.sphinxext.fixes.duplicatetargets"]\n', encoding="utf-8")
    (root / "index.md").write_text("# Index\n\n```{toctree}\n:glob:\n\n*\n```\n", encoding="utf-8")
    for name, text in pages.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    return root


def _pages(**special: str) -> dict[str, str]:
    """Sixteen short pages ``a`` … ``p``, some with ``special`` text."""
    return {name: special.get(name, f"# {name}\n\nshort\n") for name in "abcdefghijklmnop"}


def test_sphinx_alone_misses_what_two_readers_define(tmp_path: Path, sphinx_build) -> None:
    # the root's three documents are three chunks under -j 2: without the check nothing is said
    src = copy_root("duplicates", tmp_path)
    app = sphinx_build(src, parallel=2, confoverrides={"extensions": ["myst_parser"]})
    assert "duplicate" not in _warnings(app)


def test_each_kind_warns_at_the_later_documents_line(tmp_path: Path, sphinx_build) -> None:
    src = copy_root("duplicates", tmp_path)
    text = _warnings(sphinx_build(src, parallel=2))
    for what, (line, path) in _TWICE.items():
        other = src / "a.md" if path else "a"
        assert f"{src / 'b.md'}:{line}: WARNING: duplicate {what}, other instance in {other} {_OURS}" in text, text
    assert "--twice" not in text  # Sphinx keeps options without a duplicate check; so does the book
    assert text.count("WARNING") == len(_TWICE)


def test_a_serial_read_leaves_the_check_to_sphinx(tmp_path: Path, sphinx_build) -> None:
    src = copy_root("duplicates", tmp_path)
    text = _warnings(sphinx_build(src, parallel=0))
    assert "slimebook.duplicate" not in text
    for what in _TWICE:
        assert f"duplicate {what}" in text, text


@pytest.mark.parametrize("parallel", [2, 3])
def test_the_reading_plan_cannot_hide_a_duplicate(tmp_path: Path, sphinx_build, parallel: int) -> None:
    # two long documents that define one label and ten short ones: however the plan cuts them, the build warns
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "slimebook.sphinxext.accelerate.readplan", '
                                 '"slimebook.sphinxext.fixes.duplicatetargets"]\n', encoding="utf-8")
    (src / "index.md").write_text("# Index\n\n```{toctree}\n:glob:\n\n*\n```\n", encoding="utf-8")
    for name in ("a", "b"):
        (src / f"{name}.md").write_text(f"# {name}\n\n(dup)=\n## 同名\n\n" + "很长的一段。" * 3000, encoding="utf-8")
    for name in "cdefghijkl":
        (src / f"{name}.md").write_text(f"# {name}\n\nshort\n", encoding="utf-8")
    text = _warnings(sphinx_build(src, parallel=parallel))
    assert re.search(r"b\.md:4: WARNING: duplicate label dup, other instance in \S+a\.md", text), text


@pytest.mark.parametrize("parallel", [0, 4])
def test_three_definitions_warn_where_a_serial_read_does(tmp_path: Path, sphinx_build, parallel: int) -> None:
    label = "# {0}\n\n(dup)=\n## 标题\n"
    src = _project(tmp_path / "src", _pages(a=label.format("a"), h=label.format("h"), p=label.format("p")))
    text = _warnings(sphinx_build(src, parallel=parallel))
    warned = sorted(re.findall(r"(\w)\.md:4: WARNING: duplicate label dup, other instance in ", text))
    assert warned == ["h", "p"], text  # each later page warned once (a reader that read a too names a)


@pytest.mark.parametrize("parallel", [0, 4])
def test_a_label_without_title_after_one_with_a_title(tmp_path: Path, sphinx_build, parallel: int) -> None:
    src = _project(tmp_path / "src", _pages(a="# a\n\n(lbl)=\n## 有标题\n", p="# p\n\n(lbl)=\n\n一段文字。\n"))
    text = _warnings(sphinx_build(src, parallel=parallel))
    assert re.search(r"p\.md:\d+: WARNING: duplicate label lbl, other instance in \S+a\.md", text), text


@pytest.mark.parametrize("parallel", [0, 4])
def test_an_alias_between_two_definitions_hides_nothing(tmp_path: Path, sphinx_build, parallel: int) -> None:
    function = "# {0}\n\n```{{py:function}} m.f()\n\n   Defined here.\n```\n"
    alias = "# h\n\n```{py:function} g()\n:canonical: m.f\n\n   An alias.\n```\n"
    src = _project(tmp_path / "src", _pages(a=function.format("a"), h=alias, p=function.format("p")))
    text = _warnings(sphinx_build(src, parallel=parallel))
    assert re.search(r"p\.md:\d+: WARNING: duplicate object description of m\.f", text), text
    assert "h.md" not in text


@pytest.mark.parametrize("parallel", [0, 3])
def test_the_warning_comes_back_in_the_next_build(tmp_path: Path, sphinx_build, parallel: int) -> None:
    label = "# {0}\n\n(dup)=\n## 标题\n"
    src = _project(tmp_path / "src", _pages(a=label.format("a"), p=label.format("p")))
    first = _warnings(sphinx_build(src, parallel=parallel))
    second = _warnings(sphinx_build(src, parallel=parallel))  # nothing changed
    for text in (first, second):
        assert re.search(r"p\.md:4: WARNING: duplicate label dup, other instance in \S+a\.md", text), text
    (src / "p.md").write_text("# p\n\n(other)=\n## 标题\n", encoding="utf-8")  # fixed: no warning any more
    assert "duplicate" not in _warnings(sphinx_build(src, parallel=parallel))


def test_the_serial_replay() -> None:
    label = Definition("std.labels", "x", True, 1)
    untitled = Definition("std.labels", "x", False, 2)
    alias = Definition("py.objects", "m.f", True, 3)
    function = Definition("py.objects", "m.f", False, 4)
    assert serial_warnings([("a", untitled), ("b", label), ("c", untitled)]) == [("c", untitled, "b")]
    assert serial_warnings([("a", function), ("b", alias), ("c", function)]) == [("c", function, "a")]
    assert serial_warnings([("a", alias), ("b", function), ("c", alias)]) == []
    assert serial_warnings([("b", label)], {("std.labels", "x"): ("a", True)}) == [("b", label, "a")]


@pytest.mark.parametrize("suppressed", ["ref.equation", "ref", "ref.*"])
def test_suppressing_sphinxs_equation_warning_suppresses_this_one(tmp_path: Path, sphinx_build,
                                                                  suppressed: str) -> None:
    # under -j 2 the two readers each see one equation: the warning is this module's, and suppress_warnings names
    # Sphinx's (type "ref", subtype "equation"); the other kinds have no type in Sphinx and still warn
    src = copy_root("duplicates", tmp_path)
    text = _warnings(sphinx_build(src, parallel=2, confoverrides={"suppress_warnings": [suppressed]}))
    assert "equation" not in text, text
    assert text.count("WARNING") == len(_TWICE) - 1, text
