"""Usage tables as docutils nodes: one builder (:func:`usage_nodes`) for documents and generated pages.

:class:`Render` says how one output page draws them (links where the builder writes the generated pages, plain
text elsewhere); the nodes :class:`wbr`, :class:`breakable` and :class:`usage_details` are drawn per output
format. The page names of the generated usage pages are declared here, since tables link to them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from ...lock import SourceLock
from ...snapshots import snapshot_pagename
from ...usage import key_of, name_anchor
from ..locale import _, ngettext

__all__ = [
    "COVERAGE_PAGE", "FILES_PAGE", "OVERVIEW_PAGE", "PAGE_ROOT", "PRINT_COLUMNS", "Render", "breakable",
    "breakable_literal", "category_page", "keep", "kept_html", "scroll", "usage_nodes", "usage_table", "visit_children",
]

#: Generated pages (see :mod:`slimebook.sphinxext.pages.usagepages`).
PAGE_ROOT = "_slimebook/usage"
OVERVIEW_PAGE = f"{PAGE_ROOT}/index"
FILES_PAGE = f"{PAGE_ROOT}/files"
COVERAGE_PAGE = f"{PAGE_ROOT}/coverage"


def category_page(category: str) -> str:
    """The page name of a category's page: ``_slimebook/usage/category/asyncio``."""
    return f"{PAGE_ROOT}/category/{category}"


#: Column → header shown in tables (lazy: translated when drawn).
HEADERS: dict[str, str] = {
    "id": _("ID"), "location": _("Location"), "scope": _("Scope"), "kind": _("Kind"), "name": _("Name"),
    "provenance": _("Evidence"), "code": _("Code"),
}
#: Relative column widths, in HTML and LaTeX alike (the table spans the column; cells wrap inside their share).
_WIDTHS = {"id": 12, "location": 22, "scope": 17, "kind": 11, "name": 18, "provenance": 13, "code": 44}
#: Default columns outside HTML (LaTeX, text).
PRINT_COLUMNS: tuple[str, ...] = ("location", "code", "scope", "name")


# -- rendering ---------------------------------------------------------------------------------------------
@dataclass
class Render:
    """How tables are drawn on one output page.

    Attributes:
        lock: the pin (permalinks).
        uri: page name → URI relative to the page being written; None when this builder makes no
            generated pages (LaTeX, text, singlehtml): locations and names are then plain text.
        claim: called with an occurrence id; True when the row may carry it as its HTML id.
        collapse: tables with more rows than this sit in a collapsible block (HTML only).
        details: True when the collapsible block may be used (HTML builders).
    """

    lock: SourceLock
    uri: Callable[[str], str] | None
    claim: Callable[[str], bool]
    collapse: int = 30
    details: bool = True

    def snapshot(self, path: str, line: int) -> str | None:
        return None if self.uri is None else f"{self.uri(snapshot_pagename(path))}#L{line}"

    def name(self, category: str, key: str) -> str | None:
        return None if self.uri is None else f"{self.uri(category_page(category))}#{name_anchor(key)}"

    def upstream(self, path: str, line: int, source: str) -> str:
        # GitHub shows Markdown rendered; ?plain=1 makes the #L anchor land on the line.
        return self.lock.permalink(path + ("?plain=1" if source == "doc" else ""), line)


class wbr(nodes.Inline, nodes.Element):  # noqa: N801 - docutils node naming
    """A line-break opportunity inside code: ``<wbr>`` in HTML, ``\\allowbreak`` in LaTeX, nothing elsewhere."""

    def astext(self) -> str:
        return ""


def _visit_wbr_html(self: Any, node: wbr) -> None:
    self.body.append("<wbr>")
    raise nodes.SkipNode


def _visit_wbr_latex(self: Any, node: wbr) -> None:
    self.body.append(r"\allowbreak{}")
    raise nodes.SkipNode


def _skip_node(self: Any, node: nodes.Node) -> None:
    raise nodes.SkipNode


_BREAK_AFTER = re.compile(r"(?<=[./_])(?=.)")


class breakable(nodes.literal):  # noqa: N801 - docutils node naming
    """Inline code that may wrap after each ``.``, ``/`` and ``_`` (names, paths in a narrow column).

    The doctree holds the text whole (one ``Text`` child, so the search index sees the name as written and a table
    of a few hundred rows stays a few thousand nodes); HTML and LaTeX put ``<wbr>`` / ``\\allowbreak{}`` at those
    points when they write it, and every other writer draws it as the ``literal`` it is.
    """


def breakable_literal(text: str) -> breakable:
    """A :class:`breakable` of ``text``."""
    return breakable(text, text)


def _write_breakable(self: Any, node: breakable, mark: str) -> None:
    # the writer's own literal and Text handling, with ``mark`` between the parts of each text
    self.visit_literal(node)
    for child in node.children:
        if isinstance(child, nodes.Text):
            for n, part in enumerate(_BREAK_AFTER.split(child.astext())):
                if n:
                    self.body.append(mark)
                self.visit_Text(nodes.Text(part))
        else:  # e.g. the wbr nodes the PDF's usage appendix adds at hyphens
            child.walkabout(self)
    self.depart_literal(node)
    raise nodes.SkipNode


def _visit_breakable_html(self: Any, node: breakable) -> None:
    _write_breakable(self, node, "<wbr>")


def _visit_breakable_latex(self: Any, node: breakable) -> None:
    _write_breakable(self, node, r"\allowbreak{}")


class usage_details(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A collapsible block: ``<details><summary>{summary}</summary>…</details>`` (HTML only)."""


def _visit_details(self: Any, node: usage_details) -> None:
    self.body.append(f'<details class="slimebook-usage-details"><summary>{html.escape(node["summary"])}'
                     "</summary>\n")


def _depart_details(self: Any, node: usage_details) -> None:
    self.body.append("</details>\n")


def _entry(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    para = nodes.paragraph()
    para.extend(children)
    entry += para
    return entry


def _link(text_node: nodes.Node, uri: str | None, title: str = "", classes: Sequence[str] = ()) -> nodes.Node:
    if uri is None:
        return text_node
    ref = nodes.reference("", "", refuri=uri, internal=not uri.startswith(("http:", "https:")),
                          classes=list(classes))
    if title:
        ref["reftitle"] = title
    ref += text_node
    return ref


def _cell(column: str, record, r: Render) -> nodes.entry:
    entry = _content(column, record, r)
    entry["classes"].append(f"slimebook-col-{column}")
    return entry


def _content(column: str, record, r: Render) -> nodes.entry:
    if column == "id":
        return _entry(_link(nodes.literal(record.id, record.id), f"#{record.id}" if r.uri else None,
                            classes=["slimebook-occ"]))
    if column == "location":
        where = f"{record.path}:{record.line}"
        local = _link(breakable_literal(where), r.snapshot(record.path, record.line),
                      _("Snapshot of {where} at the pinned commit {commit}").format(where=where, commit=r.lock.short),
                      ["slime-snapshot"])
        up = nodes.reference("", "↗", refuri=r.upstream(record.path, record.line, record.source),
                             reftitle=_("{where} @ {commit} (upstream)").format(where=where, commit=r.lock.short),
                             classes=["slime-permalink"])
        return _entry(local, nodes.Text(" "), up)
    if column == "scope":
        return _entry(breakable_literal(record.scope))
    if column == "kind":
        return _entry(nodes.Text(record.kind))
    if column == "name":
        return _entry(_link(breakable_literal(record.name), r.name(record.category, key_of(record))))
    if column == "provenance":
        return _entry(nodes.Text(record.provenance))
    code = record.code.strip()
    return _entry(nodes.literal(code, code, classes=["code", "highlight", "python"], language="python"))


def usage_table(records: Sequence, columns: Sequence[str], r: Render) -> nodes.table:
    """A table of ``records`` with ``columns`` (see :data:`~slimebook.usage.COLUMNS`)."""
    # proportional, wrapping columns in every format: sized to their content, a long scope or code line
    # made the table wider than the page's column
    table = nodes.table(classes=["slimebook-usage", "colwidths-given"])
    group = nodes.tgroup(cols=len(columns))
    table += group
    for column in columns:
        group += nodes.colspec(colwidth=_WIDTHS[column])
    head = nodes.thead()
    row = nodes.row()
    for column in columns:
        row += _entry(nodes.Text(str(HEADERS[column])))
        row[-1]["classes"].append(f"slimebook-col-{column}")
    head += row
    group += head
    body = nodes.tbody()
    for record in records:
        row = nodes.row()
        if r.uri is not None and r.claim(record.id):
            row["ids"].append(record.id)
        for column in columns:
            row += _cell(column, record, r)
        body += row
    group += body
    return table


def scroll(table: nodes.table, html: bool) -> nodes.Element:
    """In HTML, ``table`` inside a horizontally scrolling block (Furo's ``table-wrapper``: Furo wraps tables
    in a post-transform, which has run before these tables exist)."""
    if not html:
        return table
    wrapper = nodes.container(classes=["table-wrapper", "slimebook-usage-wrapper"])
    wrapper += table
    return wrapper


def usage_nodes(records: Sequence, columns: Sequence[str], r: Render, summary: str = "") -> list[nodes.Node]:
    """The table of ``records``, inside a collapsible block when longer than ``r.collapse`` rows."""
    table = scroll(usage_table(records, columns, r), r.details)
    if len(records) > r.collapse and r.details:
        details = usage_details(summary=summary or ngettext("Show the {n} occurrence", "Show all {n} occurrences",
                                                            len(records)).format(n=len(records)))
        details += table
        return [details]
    return [table]


class kept_html(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A subtree whose HTML the build may keep between builds (:mod:`slimebook.sphinxext.accelerate.fragments`);
    without that accelerator every writer visits its children."""


def keep(children: Iterable[nodes.Node]) -> kept_html:
    """``children`` wrapped in a :class:`kept_html` node."""
    node = kept_html()
    node.extend(children)
    return node


def visit_children(self: Any, node: nodes.Node) -> None:
    """A visitor that draws nothing of ``node`` itself: its children are visited as if it were not there."""


def setup(app: Sphinx) -> None:
    """Register the table nodes and how each format draws them."""
    formats = ("html", "latex", "text", "man", "texinfo")
    app.add_node(kept_html, **{f: (visit_children, visit_children) for f in formats})
    app.add_node(usage_details, html=(_visit_details, _depart_details))
    app.add_node(wbr, html=(_visit_wbr_html, None), latex=(_visit_wbr_latex, None),
                 **{f: (_skip_node, None) for f in ("text", "man", "texinfo")})
    app.add_node(breakable, html=(_visit_breakable_html, None), latex=(_visit_breakable_latex, None))
