"""A name defined in two documents warns under ``-j N`` as it does in a serial read, whichever readers read the two
(``slimebook.sphinxext.duplicatetargets``): Sphinx compares names only within one reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import copy_root

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
#: what the root's b.md defines again, with the line each warning names
_TWICE = {
    "label twice": 4,
    "term description of 双份": 10,
    "label of equation eq-twice": 13,
    "object description of twice": 19,
}


def _warnings(app) -> str:
    return _COLOUR.sub("", app._warning.getvalue())


def test_sphinx_alone_misses_what_two_readers_define(tmp_path: Path, sphinx_build) -> None:
    # the root's three documents are three chunks under -j 2: without the check nothing is said
    src = copy_root("duplicates", tmp_path)
    app = sphinx_build(src, parallel=2, confoverrides={"extensions": ["myst_parser"]})
    assert "duplicate" not in _warnings(app)


def test_each_kind_warns_at_the_later_documents_line(tmp_path: Path, sphinx_build) -> None:
    src = copy_root("duplicates", tmp_path)
    text = _warnings(sphinx_build(src, parallel=2))
    for what, line in _TWICE.items():
        expected = (f"{src / 'b.md'}:{line}: WARNING: duplicate {what}, other instance in {src / 'a.md'} "
                    "(the two documents were read by different parallel readers) [slimebook.duplicate]")
        assert expected in text, text
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
    (src / "conf.py").write_text('extensions = ["myst_parser", "slimebook.sphinxext.readplan", '
                                 '"slimebook.sphinxext.duplicatetargets"]\n', encoding="utf-8")
    (src / "index.md").write_text("# Index\n\n```{toctree}\n:glob:\n\n*\n```\n", encoding="utf-8")
    for name in ("a", "b"):
        (src / f"{name}.md").write_text(f"# {name}\n\n(dup)=\n## 同名\n\n" + "很长的一段。" * 3000, encoding="utf-8")
    for name in "cdefghijkl":
        (src / f"{name}.md").write_text(f"# {name}\n\nshort\n", encoding="utf-8")
    text = _warnings(sphinx_build(src, parallel=parallel))
    assert re.search(r"b\.md:4: WARNING: duplicate label dup, other instance in \S+a\.md", text), text
