"""Parallel writing (``slimebook.sphinxext.accelerate.parallelwrite``): with ``-j N`` the pages and the search index
are the
same as a serial build's, the writers collect the words the index is fed, and a writer's warning or failure reaches
the main process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sphinx.errors import SphinxParallelError

from conftest import copy_root
from slimebook.sphinxext.accelerate import parallelwrite

DOCS = [f"d{i}" for i in range(1, 10)]


@pytest.fixture
def build(tmp_path: Path, sphinx_build):
    """``build(buildername="html", parallel=0) -> app``: the ``parallelwrite`` root built afresh."""

    count = iter(range(100))

    def _build(buildername: str = "html", parallel: int = 0):
        src = copy_root("parallelwrite", tmp_path / f"{buildername}-{parallel}-{next(count)}")
        return sphinx_build(src, buildername, parallel=parallel)

    return _build


def _warnings(app) -> list[str]:
    """The build's warnings, without Sphinx's notes that a second app in this process registers its nodes again."""
    return [line for line in app._warning.getvalue().splitlines() if "is already registered" not in line]


def _files(outdir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outdir)): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and p.name != ".buildinfo"}


def _index(outdir: Path) -> dict:
    text = (outdir / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(re.fullmatch(r"Search\.setIndex\((.*)\)", text.strip(), re.DOTALL).group(1))


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each page fed to the index by the pipelined writer: whether a writer had collected its words."""
    seen: list[bool] = []
    real = parallelwrite._feed

    def spy(indexer, feed_page, doctree, collected):
        seen.append(collected is not None)
        return real(indexer, feed_page, doctree, collected)

    monkeypatch.setattr(parallelwrite, "_feed", spy)
    return seen


@pytest.mark.parametrize("buildername", ["html", "dirhtml"])
def test_parallel_output_equals_serial(build, fed: list[bool], buildername: str) -> None:
    serial = build(buildername, parallel=0)
    assert fed == []  # -j 1 is Sphinx's own serial writing
    two = build(buildername, parallel=2)
    assert isinstance(two.builder, parallelwrite.PipelinedWriteMixin)
    # every page is indexed with the words collected before it was written: here for the cheapest, which is
    # written before the writers fork, by its writer for every other one
    assert fed == [True] * (len(DOCS) + 1)
    three = build(buildername, parallel=3)
    for app in (serial, two, three):
        assert _warnings(app) == []
    expected = _files(serial.outdir)
    assert "searchindex.js" in expected and any(name.startswith("_images/") for name in expected)
    for app in (two, three):
        got = _files(app.outdir)
        assert sorted(got) == sorted(expected)
        assert [name for name in expected if got[name] != expected[name]] == []


def test_the_index_holds_what_the_pages_say(build) -> None:
    index = _index(build("html", parallel=2).outdir)
    docs = index["docnames"]
    terms = index["terms"]
    # Chinese words; Latin terms kept whole where stemming would cut them below three letters ("ops" → "op"), each
    # first seen in a page a writer collected (so the main process must note the writer's Latin terms)
    for word in ("事件", "循环", "gather_1", "ops", "ids", "ads", "abs", "eds"):
        assert word in terms, word
    hits = terms["循环"] if isinstance(terms["循环"], list) else [terms["循环"]]
    assert "d4" not in {docs[i] for i in hits}  # nosearch: the page is fed an empty document
    assert any("事件循环" in str(entry) for entry in index["indexentries"])


def test_a_writers_warning_and_failure_reach_the_main_process(build, monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx.util import logging

    real = parallelwrite.PipelinedHTMLBuilder.write_doc

    def warn(self, docname, doctree):
        if docname == "d7":
            logging.getLogger(__name__).warning("seen while writing", location=docname)
        return real(self, docname, doctree)

    monkeypatch.setattr(parallelwrite.PipelinedHTMLBuilder, "write_doc", warn)
    app = build("html", parallel=2)
    assert [line for line in _warnings(app) if "seen while writing" in line], _warnings(app)
    assert any(re.search(r"d7(\.md)?.*seen while writing", line) for line in _warnings(app)), _warnings(app)

    def fail(self, docname, doctree):
        if docname == "d8":
            raise RuntimeError("the writer broke")
        return real(self, docname, doctree)

    monkeypatch.setattr(parallelwrite.PipelinedHTMLBuilder, "write_doc", fail)
    with pytest.raises(SphinxParallelError, match="the writer broke"):
        build("html", parallel=2)


def test_chunks_follow_cost_and_keep_the_order() -> None:
    from slimebook.sphinxext.accelerate.pagewriting import chunks_by_cost

    costs = {f"d{i}": cost for i, cost in enumerate([5, 1, 1, 1, 1, 1, 5, 1])}  # bytes of pickled doctrees
    chunks = chunks_by_cost(list(costs), 4, costs.__getitem__)
    assert [docname for chunk in chunks for docname in chunk] == list(costs)
    assert all(sum(costs[docname] for docname in chunk) <= 5 for chunk in chunks)


def test_the_page_written_first_notes_no_term_early(tmp_path: Path, sphinx_build) -> None:
    # "oks" alone in the two cheapest pages (one written by the first writer, the other by the main process before
    # the other writers fork) is a Latin term; a page fed before them says "token_oks", whose "oks" Sphinx stems to
    # "ok" because the term is not noted yet
    apps = []
    for parallel in (0, 2):
        src = copy_root("parallelwrite", tmp_path / f"j{parallel}")
        (src / "a0.md").write_text("# 甲\n\n这里有 token_oks 这个名字。\n\n" + "事件循环的说明。\n\n" * 40,
                                   encoding="utf-8")
        (src / "zy.md").write_text("# Y\n\noks\n", encoding="utf-8")
        (src / "zz.md").write_text("# Z\n\noks\n", encoding="utf-8")
        index = src / "index.md"
        index.write_text(index.read_text(encoding="utf-8").replace("d9\n", "d9\na0\nzy\nzz\n"), encoding="utf-8")
        apps.append(sphinx_build(src, "html", parallel=parallel))
    serial, two = apps
    terms = _index(serial.outdir)["terms"]
    assert "ok" in terms and "oks" in terms
    assert (two.outdir / "searchindex.js").read_bytes() == (serial.outdir / "searchindex.js").read_bytes()


def test_writers_inherit_the_lexers_the_main_process_made(build, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from pygments.lexer import RegexLexerMeta
    from pygments.lexers.python import PythonLexer

    log = tmp_path / "compiled.txt"
    real = RegexLexerMeta.process_tokendef

    def spy(cls, name, tokendefs=None):
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {cls.__name__}\n")
        return real(cls, name, tokendefs)

    monkeypatch.setattr(RegexLexerMeta, "process_tokendef", spy)
    monkeypatch.delattr(PythonLexer, "_tokens", raising=False)  # as in a process that highlighted no Python yet
    build("html", parallel=2)
    compiled = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]
    # made once, by the main process while it resolved the pages; no writer compiled the rules again
    assert [pid for pid, name in compiled if name == "PythonLexer"] == [str(os.getpid())]


def test_warm_lexers_asks_once_per_language_and_survives_an_unknown_one() -> None:
    from docutils import nodes
    from docutils.utils import new_document

    asked: list[tuple[str, str]] = []

    class Highlighter:
        def get_lexer(self, source, lang, opts=None, force=False, location=None):
            asked.append((source, lang))
            if lang == "no-such-language":
                raise LookupError(lang)

    doctree = new_document("<test>")
    doctree += nodes.literal_block("x = 1", "x = 1", language="python")
    doctree += nodes.literal_block(">>> 1", ">>> 1", language="python")
    doctree += nodes.literal_block("?", "?", language="no-such-language")
    para = nodes.paragraph()
    para += nodes.literal("ls", "ls", language="bash")
    para += nodes.literal("plain", "plain")
    doctree += para
    warmed = {"bash"}
    parallelwrite.warm_lexers(Highlighter(), doctree, warmed)
    assert warmed == {"bash", "python", "no-such-language"}
    assert asked == [("", "python"), (">>>", "python"), ("", "no-such-language"), (">>>", "no-such-language")]
