"""The usage index in documents: the ``usage-index`` directive, the ``{usage}`` role, and the scan they read.

Data flow: :func:`slimebook.scan.scan_store` runs once per build process at ``builder-inited`` (a warm
scan only reads the cache) and is kept in a module-level cache keyed by (repository, commit, scanner
version), so ``-j N`` readers and writers, forked later, inherit it and nothing of it is pickled into
the environment. The directive only parses and validates its options and leaves a ``usage_index``
placeholder; the table is built at ``doctree-resolved``, when every document's ``lesson-teaches`` is
known (``:lesson: other-doc`` works whatever the reading order) and the links can be made relative to
the page being written. The same table builder (:func:`usage_nodes`) serves the generated pages of
:mod:`.usagepages`.

Per document the environment keeps only the scan key and the lessons a table reads (merged and
purged: parallel-read safe); ``env-get-outdated`` re-reads those documents when the scanner version
or pin changes, or when a lesson they list changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import docname_join, logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from ..lock import SourceLock
from ..scan import ScanResult, scan_store, scanner_version
from ..scan.categories import CATEGORIES
from ..snapshots import snapshot_pagename
from ..usage import COLUMNS, Figures, Query, QueryError, key_of, name_anchor, parse_list, select
from .diagnostics import SlimebookWarning, warn
from .envdata import doc_data, keep_per_doc
from .snapshot import add_snapshot_paths, builds_pages
from .source import get_store

logger = logging.getLogger(__name__)

__all__ = [
    "COVERAGE_PAGE", "FILES_PAGE", "OVERVIEW_PAGE", "Render", "category_page", "get_figures", "get_scan",
    "breakable_literal", "scan_key", "scroll", "usage_nodes",
]

#: Generated pages (see :mod:`.usagepages`).
PAGE_ROOT = "_slimebook/usage"
OVERVIEW_PAGE = f"{PAGE_ROOT}/index"
FILES_PAGE = f"{PAGE_ROOT}/files"
COVERAGE_PAGE = f"{PAGE_ROOT}/coverage"


def category_page(category: str) -> str:
    """The page name of a category's page: ``_slimebook/usage/category/asyncio``."""
    return f"{PAGE_ROOT}/category/{category}"


#: Column → header shown in tables.
HEADERS: dict[str, str] = {
    "id": "编号", "location": "位置", "scope": "作用域", "kind": "种类", "name": "名称",
    "provenance": "依据", "code": "代码",
}
#: Relative column widths, in HTML and LaTeX alike (the table spans the column; cells wrap inside their share).
_WIDTHS = {"id": 12, "location": 22, "scope": 17, "kind": 11, "name": 18, "provenance": 13, "code": 44}
#: Default columns outside HTML (LaTeX, text).
PRINT_COLUMNS: tuple[str, ...] = ("location", "code", "scope", "name")


# -- the scan, once per process ----------------------------------------------------------------------------
_SCANS: dict[tuple[str, str, str], ScanResult] = {}
_FIGURES: dict[tuple[str, str, str], Figures] = {}


def _key(env: BuildEnvironment) -> tuple[str, str, str]:
    store = get_store(env)
    return (str(store.git_dir), store.lock.commit, scanner_version())


def scan_key(env: BuildEnvironment) -> str:
    """``<commit>:<scanner version>``: what a document built from the scan depends on."""
    _, commit, version = _key(env)
    return f"{commit}:{version}"


def get_scan(env: BuildEnvironment) -> ScanResult:
    """The scan of the pin, computed on first use in this process and kept (one entry) afterwards."""
    key = _key(env)
    result = _SCANS.get(key)
    if result is None:
        result = scan_store(get_store(env))
        _SCANS.clear()
        _FIGURES.clear()
        _SCANS[key] = result
    return result


def get_figures(env: BuildEnvironment) -> Figures:
    """The :class:`~slimebook.usage.Figures` of the pin (cached like the scan)."""
    result = get_scan(env)
    key = _key(env)
    figures = _FIGURES.get(key)
    if figures is None:
        figures = _FIGURES[key] = Figures(get_store(env), result)
    figures.store = get_store(env)  # this build's store: the cache keeps numbers, not another build's reader
    return figures


def _scan_at_start(app: Sphinx) -> None:
    """``builder-inited`` (after the store is open): scan, and ask for snapshot pages of every scanned file."""
    result = get_scan(app.env)
    add_snapshot_paths(app, {f.path for f in result.files})
    logger.info("slimebook: usage scan %s: %d records in %d files", result.version, len(result.records),
                len(result.files))


# -- environment bookkeeping -------------------------------------------------------------------------------
def note_scan_use(env: BuildEnvironment, lessons: Iterable[str] = ()) -> None:
    """Record that the current document is built from the scan (and from these lessons' declarations)."""
    docs = doc_data(env, "slimebook_usage_docs")
    info = docs.setdefault(env.docname, {"scan": scan_key(env), "lessons": []})
    info["lessons"] = sorted(set(info["lessons"]) | set(lessons))
    env.note_dependency(str(env.slimebook_lock_path))


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
              removed: set[str]) -> list[str]:
    """Documents to read again: built from another scan, or listing a lesson that changed."""
    key = scan_key(env)
    touched = added | changed | removed
    return sorted(
        docname for docname, info in env.__dict__.get("slimebook_usage_docs", {}).items()
        if docname not in touched and docname in env.all_docs
        and (info["scan"] != key or any(lesson in touched for lesson in info["lessons"]))
    )


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


def breakable_literal(text: str) -> nodes.literal:
    """Inline code of ``text`` that may wrap after each ``.``, ``/`` and ``_`` (names, paths) in a narrow column."""
    literal = nodes.literal(text, "")
    for n, part in enumerate(_BREAK_AFTER.split(text)):
        if n:
            literal += wbr()
        literal += nodes.Text(part)
    return literal


class usage_details(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A collapsible block: ``<details><summary>{summary}</summary>…</details>`` (HTML only)."""


def _visit_details(self: Any, node: usage_details) -> None:
    import html

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
                      f"{where} 在固定提交 {r.lock.short} 处的快照", ["slime-snapshot"])
        up = nodes.reference("", "↗", refuri=r.upstream(record.path, record.line, record.source),
                             reftitle=f"{where} @ {r.lock.short}（上游）", classes=["slime-permalink"])
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
        row += _entry(nodes.Text(HEADERS[column]))
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
        details = usage_details(summary=summary or f"展开全部 {len(records)} 处")
        details += table
        return [details]
    return [table]


def _count_sentence(records: Sequence, patterns: Sequence[str], query: Query) -> nodes.paragraph:
    files = len({r.path for r in records})
    para = nodes.paragraph(classes=["slimebook-usage-summary"])
    para += nodes.Text(f"共 {len(records)} 处，分布在 {files} 个文件中")
    if patterns:
        counts = {p: 0 for p in patterns}
        for record in records:
            index = query.pattern_index(record)
            if index is not None:
                counts[patterns[index]] += 1
        para += nodes.Text("：")
        for n, (pattern, count) in enumerate(counts.items()):
            if n:
                para += nodes.Text("、")
            para += nodes.literal(pattern, pattern)
            para += nodes.Text(f" {count}" if count else " 0（Slime 没有用到）")
    para += nodes.Text("。")
    return para


# -- the directive -----------------------------------------------------------------------------------------
class usage_index(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Placeholder left by ``usage-index``; replaced by the table at ``doctree-resolved``."""


def _lesson(argument: str | None) -> str:
    return (argument or "").strip()


class UsageIndex(SphinxDirective):
    """``usage-index``: the occurrences the scan found, filtered.

    Options (each narrows the selection; several values in one option are alternatives):
    ``:category:`` categories; ``:name:`` names or globs (``asyncio.gather``, ``asyncio.Queue.*``,
    ``syntax:await``); ``:kind:`` record kinds (default: all but ``import``; ``all``); ``:path:`` path
    prefixes; ``:lesson:`` the names a lesson declares with ``lesson-teaches`` (empty: this document; or
    a docname, relative to this one or absolute with ``/``), added to ``:name:``; ``:columns:`` which
    columns, in which order, of ``id location code scope name kind provenance`` (the default in HTML;
    other formats default to :data:`PRINT_COLUMNS`: an id is an HTML anchor, kind and provenance do not fit
    a printed page).
    """

    has_content = False
    option_spec = {
        "category": directives.unchanged_required,
        "name": directives.unchanged_required,
        "kind": directives.unchanged_required,
        "path": directives.unchanged_required,
        "lesson": _lesson,
        "columns": directives.unchanged_required,
    }

    def run(self) -> list[nodes.Node]:
        kinds = parse_list(self.options.get("kind")) or None
        query = Query(categories=parse_list(self.options.get("category")), names=parse_list(self.options.get("name")),
                      kinds=kinds, paths=parse_list(self.options.get("path")))
        columns = parse_list(self.options.get("columns"))
        try:
            query.validate()
            bad = [c for c in columns if c not in COLUMNS]
            if bad:
                raise QueryError(f":columns: unknown {', '.join(map(repr, bad))}; choose from {' '.join(COLUMNS)}")
        except QueryError as exc:
            warn(self.env, SlimebookWarning.USAGE, "usage-index: %s", exc, location=(self.env.docname, self.lineno))
            return []
        lesson = None
        if "lesson" in self.options:
            value = self.options["lesson"]
            lesson = (value[1:] if value.startswith("/") else docname_join(self.env.docname, value)) if value \
                else self.env.docname
        note_scan_use(self.env, [lesson] if lesson else [])
        node = usage_index(categories=list(query.categories), names=list(query.names),
                           kinds=None if kinds is None else list(kinds), paths=list(query.paths),
                           lesson=lesson, columns=list(columns) or None)
        self.set_source_info(node)
        return [node]


def _render_for(app: Sphinx, doctree: nodes.document, docname: str) -> Render:
    html = app.builder.format == "html"
    uri = None
    if builds_pages(app):
        def uri(pagename: str) -> str:
            return app.builder.get_relative_uri(docname, pagename)

    def claim(occ_id: str) -> bool:
        if occ_id in doctree.ids:
            return False
        doctree.ids[occ_id] = doctree  # reserve it for this row
        return True

    return Render(get_store(app.env).lock, uri, claim, app.config.slimebook_usage_collapse, details=html)


def _resolve_index(app: Sphinx, node: usage_index, r: Render, docname: str) -> list[nodes.Node]:
    env = app.env
    names = list(node["names"])
    if node["lesson"]:
        teaches = env.__dict__.get("slimebook_teaches", {}).get(node["lesson"])
        if not teaches:
            where = "this document" if node["lesson"] == docname else f"document {node['lesson']!r}"
            warn(app.env, SlimebookWarning.USAGE, "usage-index: :lesson: %s declares no names (no lesson-teaches "
                 "directive)", where, location=node, docname=docname)
            return []
        names = list(dict.fromkeys([*teaches, *names]))
    query = Query(categories=tuple(node["categories"]), names=tuple(names),
                  kinds=None if node["kinds"] is None else tuple(node["kinds"]), paths=tuple(node["paths"]))
    result = get_scan(env)
    records = select(result.records, query)
    if not records:
        para = nodes.paragraph(classes=["slimebook-usage-empty"])
        para += nodes.Text(f"在固定提交 {r.lock.short} 中，用法索引没有找到符合条件的出现位置（{_describe(query)}）。")
        return [para]
    summary = _count_sentence(records, query.names, query)
    columns = node["columns"] or (COLUMNS if r.details else PRINT_COLUMNS)
    return [summary, *usage_nodes(records, columns, r)]


def _describe(query: Query) -> str:
    parts = []
    if query.names:
        parts.append("名称 " + "、".join(query.names))
    if query.categories:
        parts.append("类别 " + "、".join(query.categories))
    if query.kinds is not None:
        parts.append("种类 " + "、".join(query.kinds))
    if query.paths:
        parts.append("路径 " + "、".join(query.paths))
    return "；".join(parts) or "没有条件"


# -- the role ----------------------------------------------------------------------------------------------
class usage_ref(nodes.Inline, nodes.TextElement):  # noqa: N801 - docutils node naming
    """Placeholder of ``{usage}``: attributes ``page`` and ``anchor``; a link in HTML, its text elsewhere."""


#: Role targets that name a page rather than a category or an API.
PAGE_TARGETS: dict[str, tuple[str, str]] = {
    "index": (OVERVIEW_PAGE, "用法索引"),
    "overview": (OVERVIEW_PAGE, "用法索引"),
    "files": (FILES_PAGE, "按文件的用法索引"),
    "coverage": (COVERAGE_PAGE, "课程覆盖表"),
}


def resolve_target(result: ScanResult, target: str) -> tuple[str, str, bool]:
    """``(page, anchor, is_code)`` for a ``{usage}`` target; raises ValueError for an unknown one."""
    if target in PAGE_TARGETS:
        return PAGE_TARGETS[target][0], "", False
    if target in CATEGORIES:
        return category_page(target), "", True
    for record in result.records:
        if key_of(record) == target or (record.kind != "syntax" and record.name == target):
            return category_page(record.category), name_anchor(key_of(record)), True
    raise ValueError(f"{target!r} is not a category ({', '.join(CATEGORIES)}), a page "
                     f"({', '.join(PAGE_TARGETS)}) or a name the scan found at the pin")


class UsageRole(SphinxRole):
    """``{usage}`asyncio``` (category page), ``{usage}`asyncio.gather``` (its section on the category
    page), ``{usage}`syntax:await```, ``{usage}`coverage``` / ``files`` / ``index``; ``{usage}`title <target>```.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        text = self.text.strip()
        title = None
        if text.endswith(">") and " <" in text:
            title, _, text = text[:-1].rpartition(" <")
            title, text = title.strip(), text.strip()
        try:
            page, anchor, is_code = resolve_target(get_scan(self.env), text)
        except ValueError as exc:
            warn(self.env, SlimebookWarning.USAGE, "usage: %s", exc, location=self.get_location(),
                 docname=self.env.docname)
            return [nodes.literal(self.rawtext, self.text, classes=["slimebook-broken"])], []
        note_scan_use(self.env)
        shown = title or (text if is_code else PAGE_TARGETS[text][1])
        node = usage_ref(self.rawtext, "", page=page, anchor=anchor)
        node += nodes.literal(shown, shown) if (is_code and not title) else nodes.Text(shown)
        return [node], []


# -- doctree-resolved --------------------------------------------------------------------------------------
def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    indexes = list(doctree.findall(usage_index))
    refs = list(doctree.findall(usage_ref))
    if not indexes and not refs:
        return
    r = _render_for(app, doctree, docname)
    for node in indexes:
        node.replace_self(_resolve_index(app, node, r, docname))
    for node in refs:
        if r.uri is None:
            node.replace_self(node.children)
            continue
        uri = r.uri(node["page"]) + (f"#{node['anchor']}" if node["anchor"] else "")
        ref = nodes.reference("", "", refuri=uri, internal=True, classes=["slimebook-usage-ref"])
        ref.extend(node.children)
        node.replace_self(ref)


def setup(app: Sphinx) -> None:
    """Register the directive, the role, their nodes and hooks."""
    app.add_config_value("slimebook_usage_collapse", 30, "env", types=[int])
    app.add_node(usage_details, html=(_visit_details, _depart_details))
    app.add_node(wbr, html=(_visit_wbr_html, None), latex=(_visit_wbr_latex, None),
                 **{f: (_skip_node, None) for f in ("text", "man", "texinfo")})
    app.add_directive("usage-index", UsageIndex)
    app.add_role("usage", UsageRole())
    app.connect("builder-inited", _scan_at_start, priority=600)  # after source._open_store (500)
    keep_per_doc(app, "slimebook_usage_docs")
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-resolved", _resolve)
