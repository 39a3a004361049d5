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
