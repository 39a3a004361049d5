"""Index entries of the documents an incremental build does not write again stay in the search index
(``slimebook.sphinxext.fixes.indexentries``): the file equals a full build's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import copy_root
from slimebook.sphinxext.fixes.indexentries import restore_index_entries


def _index(outdir: Path) -> dict:
    text = (outdir / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(re.fullmatch(r"Search\.setIndex\((.*)\)", text.strip(), re.DOTALL).group(1))


@pytest.mark.parametrize("parallel", [0, 2])
def test_an_incremental_build_keeps_every_documents_entries(tmp_path: Path, sphinx_build, parallel: int) -> None:
    src = copy_root("parallelwrite", tmp_path / "book")
    sphinx_build(src, "html", parallel=parallel)
    (src / "d2.md").write_text((src / "d2.md").read_text(encoding="utf-8") + "\n再加一句。\n", encoding="utf-8")
    again = sphinx_build(src, "html", parallel=parallel)  # writes d2 (and its neighbours) only
    other = copy_root("parallelwrite", tmp_path / "fresh")
    (other / "d2.md").write_text((src / "d2.md").read_text(encoding="utf-8"), encoding="utf-8")
    fresh = sphinx_build(other, "html", parallel=parallel)  # a full build of the same sources
    kept, full = _index(again.outdir), _index(fresh.outdir)
    assert len(kept["indexentries"]["事件循环"]) == 8  # d1–d9 but the page without search
    assert kept["indexentries"] == full["indexentries"]
    # the words are Sphinx's business: jieba's dictionary is global to this process, and builds of one test
    # process may split a new sentence differently (a separate `sphinx-build` of each gives equal files)
    del kept["terms"], full["terms"]
    assert kept == full


def test_a_removed_document_takes_its_entries_along(tmp_path: Path, sphinx_build) -> None:
    src = copy_root("parallelwrite", tmp_path)
    sphinx_build(src, "html")
    (src / "d3.md").unlink()
    entries = _index(sphinx_build(src, "html").outdir)["indexentries"]
    assert "第 3 章" not in entries and "第 2 章" in entries


def test_restoring_reads_only_what_it_understands() -> None:
    frozen = {"docnames": ["a", "b", "c"],
              "indexentries": {"loop": [[0, "index-0", False], [2, "index-1", True], [7, "x", False], "junk"]}}
    entries: dict[str, list] = {"c": [("fed again", "index-9", "")]}
    restore_index_entries(entries, frozen, {"a", "c"})
    assert entries == {"c": [("fed again", "index-9", "")], "a": [("loop", "index-0", "")]}
    for bad in (None, [], {"docnames": "a"}, {"docnames": ["a"], "indexentries": []}):
        untouched: dict[str, list] = {}
        restore_index_entries(untouched, bad, {"a"})
        assert untouched == {}
