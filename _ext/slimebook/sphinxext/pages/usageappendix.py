"""The usage index as an appendix of the PDF: the tables of the HTML usage pages, made in the LaTeX build.

The HTML usage pages (:mod:`slimebook.sphinxext.pages.usagepages`) are generated pages: they have no source document,
and the LaTeX
builder writes only documents. This module adds them to the one ``.tex`` without writing into the source tree:
at ``doctree-resolved`` of the assembled LaTeX tree (the root document with every chapter inlined), it appends
one more ``document`` node — which the LaTeX writer opens with ``\\appendix``, as it does for
``latex_appendices`` — holding one chapter, 用法索引: the overview's section, then the coverage table, the
files table and every category page as its sections, built by the same page builders as the HTML pages.

Links are rewritten for one document: a link to one of these pages (or an anchor on it) points into the
appendix, a link to a chapter stays, and a link to a page the PDF does not have (snapshot pages, the
downloadable ``usage.json``) keeps its text and loses the link; permalinks to GitHub stay. The overview's paragraph
offering ``usage.json`` and ``usage.tsv`` for download is left out (the PDF has no files to download).
Collapsible blocks and scrolling wrappers (HTML only) are replaced by their contents; occurrence tables keep the
columns a ``usage-index`` table prints outside HTML (no id, kind or provenance: they do not fit the column), and code in
tables may also wrap after ``-`` and inside long words. ``slimebook_usage_appendix = False``
leaves the appendix out.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.utils import new_document
from sphinx.application import Sphinx
from sphinx.util import logging

from ..environment.scancache import get_table
from ..gates.coverage import book_coverage, load_waiver_file
from . import usagepages
from .usagetables import COVERAGE_PAGE, FILES_PAGE, OVERVIEW_PAGE, category_page, usage_details, wbr

logger = logging.getLogger(__name__)

#: The docname of the appendix (labels in the ``.tex`` are ``<this>:<id>``); no such source file exists.
APPENDIX_DOC = "_slimebook/usage/appendix"


def _pages(app: Sphinx) -> list[str]:
    return [OVERVIEW_PAGE, COVERAGE_PAGE, FILES_PAGE, *(category_page(c) for c in get_table(app.env).categories)]


def _build(app: Sphinx, page: str, cov: Any, waivers: Any) -> nodes.section:
    return usagepages.page_body(app, page, cov, waivers)  # type: ignore[return-value]


def _unwrap_html_only(tree: nodes.Element) -> None:
    for node in list(tree.findall(usage_details)):
        node.replace_self(node.children)
    for node in list(tree.findall(nodes.container)):
        if "slimebook-usage-wrapper" in node["classes"]:
            node.replace_self(node.children)


#: Occurrence-table columns left out of the PDF, as in usage-index tables outside HTML (``PRINT_COLUMNS``): an id
#: is an HTML anchor, kind and provenance do not fit a printed column.
DROP_COLUMNS = ("id", "kind", "provenance")


def _print_columns(tree: nodes.Element) -> None:
    """Remove the :data:`DROP_COLUMNS` cells (class ``slimebook-col-<column>``) from every occurrence table."""
    drop = {f"slimebook-col-{c}" for c in DROP_COLUMNS}
    for group in list(tree.findall(nodes.tgroup)):
        head = next(iter(group.findall(nodes.thead)), None)
        if head is None or not head.children:
            continue
        gone = [n for n, entry in enumerate(head[0].children) if drop & set(entry.get("classes", []))]
        if not gone:
            continue
        for row in group.findall(nodes.row):
            for n in reversed(gone):
                if n < len(row.children):
                    del row[n]
        specs = [c for c in group.children if isinstance(c, nodes.colspec)]
        for n in reversed(gone):
            group.remove(specs[n])
        group["cols"] = len(specs) - len(gone)


def _split_code(text: str) -> list[str]:
    """``text`` cut where code in an appendix table may wrap: after ``-``, and every 4 characters of a run of 9 or
    more letters and digits (``multiprocessing``, ``AbstractEventLoop`` in a column narrower than the word)."""
    parts: list[str] = []
    for piece in re.split(r"(?<=-)(?=.)", text):
        for word in re.split(r"([A-Za-z0-9]{9,})", piece):
            if len(word) >= 9 and word.isalnum():
                parts.extend(word[i:i + 4] for i in range(0, len(word), 4))
            elif word:
                parts.append(word)
    return parts or [text]


def _in_table(node: nodes.Node) -> bool:
    while node.parent is not None:
        node = node.parent
        if isinstance(node, nodes.table):
            return True
    return False


def _break_hyphens(tree: nodes.Element) -> None:
    """Code in tables may also wrap after ``-`` and inside long words (see :func:`_split_code`)."""
    for literal in list(tree.findall(nodes.literal)):
        if not _in_table(literal):
            continue
        for text in list(literal.findall(nodes.Text)):
            parts = _split_code(str(text))
            if len(parts) > 1:
                new: list[nodes.Node] = []
                for n, part in enumerate(parts):
                    if n:
                        new.append(wbr())
                    new.append(nodes.Text(part))
                text.parent.replace(text, new)


#: LaTeX column shares of the counts table: the category, each kind, the total. Left to tabulary, the category
#: column got its 5em minimum and split "threading", "executors" and "multiprocessing" across lines.
COUNTS_WIDTHS = (20, 12, 8)


def _counts_widths(tree: nodes.Element) -> None:
    """Give the counts table (class ``slimebook-usage-counts``) the column shares of :data:`COUNTS_WIDTHS`."""
    first, kind, total = COUNTS_WIDTHS
    for table in tree.findall(nodes.table):
        if "slimebook-usage-counts" not in table["classes"]:
            continue
        specs = list(table.findall(nodes.colspec))
        for spec, width in zip(specs, [first, *[kind] * (len(specs) - 2), total], strict=True):
            spec["colwidth"] = width
        table["classes"] = [c for c in table["classes"] if c != "colwidths-auto"] + ["colwidths-given"]


def _drop_downloads(tree: nodes.Element) -> None:
    """Remove each paragraph that links the scan's downloadable files (``usage.json``, ``usage.tsv``)."""
    files = {usagepages.JSON_FILE.rsplit("/", 1)[-1], usagepages.TSV_FILE.rsplit("/", 1)[-1]}
    paras = {id(ref.parent): ref.parent for ref in tree.findall(nodes.reference)
             if ref.get("refuri", "").rsplit("/", 1)[-1] in files and isinstance(ref.parent, nodes.paragraph)}
    for para in paras.values():
        para.parent.remove(para)


def _relink(tree: nodes.Element, tops: dict[str, str], docs: set[str]) -> None:
    """Make every reference of ``tree`` point inside the one appendix document (see the module docstring)."""
    targets = {i for n in tree.findall(lambda n: isinstance(n, (nodes.section, nodes.table))) for i in n["ids"]}
    for ref in list(tree.findall(nodes.reference)):
        uri = ref.get("refuri", "")
        new: str | None = None
        if uri.startswith(("http:", "https:")):
            continue
        if uri.startswith("%"):
            page, _, anchor = uri[1:].partition("#")
            if page in tops:
                new = "#" + (anchor or tops[page])
            elif page in docs:
                continue
        elif uri.startswith("#"):
            new = uri
        if new is not None and new[1:] in targets:
            ref["refuri"] = new
            continue
        ref.replace_self(ref.children)  # no such place in the PDF: keep the text


def append_usage_appendix(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: append the appendix to the assembled LaTeX tree of the root document."""
    builder = app.builder
    if builder.format != "latex" or not app.config.slimebook_usage_appendix:
        return
    if docname not in {entry[0] for entry in app.config.latex_documents} or doctree.get("docname") != docname:
        return
    docs = set(getattr(builder, "docnames", ()))
    pages = _pages(app)
    # each page builder asks the builder for URIs from its own page: the LaTeX builder answers only for
    # documents it writes, so the pages are named (and their links rewritten below)
    builder.docnames = set(docs) | set(pages)  # type: ignore[attr-defined]
    try:
        waivers = load_waiver_file(app)
        cov = book_coverage(app, waivers)
        sections = {page: _build(app, page, cov, waivers) for page in pages}
    finally:
        builder.docnames = docs | {APPENDIX_DOC}  # type: ignore[attr-defined]
    tops = {page: section["ids"][0] for page, section in sections.items()}
    chapter = sections.pop(OVERVIEW_PAGE)
    for section in sections.values():
        chapter += section
    _unwrap_html_only(chapter)
    _print_columns(chapter)
    _break_hyphens(chapter)
    _drop_downloads(chapter)
    _counts_widths(chapter)
    _relink(chapter, tops, docs)
    appendix = new_document(APPENDIX_DOC, doctree.settings)
    appendix["docname"] = APPENDIX_DOC
    appendix += chapter
    doctree += appendix
    logger.info("slimebook: usage index appended to the PDF (%d pages' tables)", len(tops))


def setup(app: Sphinx) -> None:
    """Register the option and the hook."""
    app.add_config_value("slimebook_usage_appendix", True, "env", types=[bool])
    app.connect("doctree-resolved", append_usage_appendix, priority=900)
