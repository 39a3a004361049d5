"""The writers' page (``chapters/meta/building.md``) documents every directive option and role the extension
registers, states the label rule, and shows every directive and role in use (issue 20). The page itself is built by
``make html`` with ``-W``, so every example on it runs; this test keeps it complete as options are added."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from slimebook.sphinxext.directives.course import Experiment, LessonTeaches
from slimebook.sphinxext.directives.guide import ContextBox
from slimebook.sphinxext.directives.readingorder import ReadingEntry, ReadingOrderTable
from slimebook.sphinxext.directives.readingpath import ReadingPath
from slimebook.sphinxext.directives.repomap import RepoMap
from slimebook.sphinxext.directives.source import SlimeSource
from slimebook.sphinxext.directives.usage import UsageIndex

PAGE = (ROOT / "chapters" / "meta" / "building.md").read_text(encoding="utf-8")

DIRECTIVES = {
    "slime-source": SlimeSource, "experiment": Experiment, "lesson-teaches": LessonTeaches,
    "usage-index": UsageIndex, "context-box": ContextBox, "reading-entry": ReadingEntry,
    "reading-order-table": ReadingOrderTable, "reading-path": ReadingPath, "repo-map": RepoMap,
}


@pytest.mark.parametrize("name", sorted(DIRECTIVES))
def test_every_option_is_in_a_table_row(name: str) -> None:
    assert f"{{{name}}}" in PAGE, f"no example of {name}"
    for option in getattr(DIRECTIVES[name], "option_spec", None) or {}:
        row = rf"^\|(?: `{re.escape(name)}` \|)? `:{re.escape(option)}:`[ |]"
        assert re.search(row, PAGE, re.M), f"{name} :{option}: has no table row"


def test_roles_and_rules_are_on_the_page() -> None:
    for role in ("{slime}`", "{usage}`", "{slimenum}`", "{py:func}`", "{ref}`"):
        assert role in PAGE
    for text in ("每一个标题（包括一级标题）前面都要紧挨着一行 ASCII 标签", "toctree", "```mermaid", "```{dropdown}",
                 "make anchors-update", "sources/anchors.txt", "make anchors-check", "--symbols",
                 "make livehtml HOST=", "house rule"):
        assert text in PAGE, text


def _blocks(section: str, end: str, language: str) -> list[str]:
    """The ``language`` code blocks of the page between the lines ``section`` and ``end``."""
    text = PAGE[PAGE.index(section):PAGE.index(end, PAGE.index(section))]
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def test_the_new_book_the_page_describes_builds_without_a_warning(tmp_path, demo_repo, monkeypatch) -> None:
    """A newcomer's book made of the page's own lock, conf.py and categories file, with one cited page and a virtual
    environment inside the book (``python -m venv .venv``, whose packages ship ``README.md`` files): ``-W`` clean."""
    from io import StringIO

    from sphinx.testing.util import SphinxTestApp

    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    [lock] = _blocks("(building-other-repo)=", "(building-slime-source)=", "toml")
    [conf] = _blocks("(building-other-repo)=", "(building-slime-source)=", "python")
    categories = _blocks("### 扫描器的类别表", "(building-reading-order)=", "toml")[0]
    book = tmp_path / "book"
    (book / "sources").mkdir(parents=True)
    (book / "sources" / "sources.toml").write_text(re.sub(r'commit = "\w+"', f'commit = "{demo_repo.pin}"', lock))
    (book / "sources" / "categories.toml").write_text(categories, encoding="utf-8")
    (book / "conf.py").write_text(conf, encoding="utf-8")
    (book / "index.md").write_text("# Demo\n\nThe pool: {demo}`demo/pool.py:1`.\n")
    (book / ".venv" / "lib" / "pkg").mkdir(parents=True)
    (book / ".venv" / "lib" / "pkg" / "README.md").write_text("# A package's readme\n")
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DEMO_SOURCE_URL", str(demo_repo.path))
    SourceStore(load_lock(book / "sources" / "sources.toml", "demo")).fetch()
    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=book, builddir=tmp_path / "out", status=StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    assert warnings.getvalue() == ""
