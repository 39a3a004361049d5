"""The reading order and the reuse roadmap: ``reading-entry``, ``reading-order-table``, ``reading-path``, ``repo-map``.

Thin directives over readers that already exist: every pointer into the source is a citation role (``{slime}``,
named by ``slimebook_source``; parsed by
:class:`~slimebook.sphinxext.directives.source.SlimeRole`, so it is verified at the pin, recorded with the other
citations, listed on the source-check page, found by ``slimebook sources verify`` and followed by a re-pin
like any citation); the repository map reads :func:`slimebook.repomap.repo_map` and the usage scan.

``reading-entry NN``
    One numbered entry of the reading order. Options: ``:title:`` and ``:unit:`` (two digits) are required;
    ``:entry:`` (required) and ``:tests:`` hold one or more ``{slime}`` roles separated by ``;``, nothing
    else; ``:first-pass:`` and ``:second-pass:`` (required), ``:pin-lacks:`` (what the original order named
    that the pin does not have) and ``:covered-by:`` (links into the book) are inline markup. Renders one
    box, id ``reading-entry-NN``, with the fields always in the same order.
``reading-order-table``
    A table of every ``reading-entry`` of the same document (number, unit, title, entry points, tests,
    book chapter, pin gap), built when the document is read (``doctree-read``).
``reading-path``
    A mermaid flowchart of a call path: one content line per step, ``{slime}`target` [| edge label]``;
    every node links to the snapshot page (HTML) or the upstream permalink at the step's first line.
``repo-map``
    The directory tree of the pin with files and lines per directory, the role of each directory (content
    lines ``dir: role``; a directory of the tree without a role, or a role for a directory that is not in
    the tree, is a warning) and a heat map directory × scan category. Each non-empty cell links to the
    category's section (``#cat-<category>``) of a generated page listing that row's records
    (``_slimebook/usage/dir/<dir>``, a batch of generated pages (:mod:`slimebook.sphinxext.pages.render`) made from
    the rows the directive
    recorded on the environment, stamped per page so an unchanged one is not written again).

Every bad input is a warning at ``doc:line`` (``-W`` fails); nothing is written into the source tree.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ...atomicio import atomic_write
from ...citations import parse_role_text, role_text
from ...excerpt import ExcerptError, read_excerpt
from ...repomap import ROOT_FILES, DirRow, RepoMapError, repo_map
from ...scan.categories import CATEGORIES
from ...snapshots import snapshot_pagename
from ..context import builds_pages, get_store, lock_path, page_stamp_base, source_names
from ..diagnostics import SlimebookWarning, warn
from ..environment.envdata import doc_data, keep_per_doc
from ..environment.scancache import get_scan, note_scan_use
from ..pages.render import EVENT, GeneratedPage, PageBatch, PageJob, field, table_frame
from ..pages.usagetables import category_page, scroll, usage_nodes
from .locate import content_line, option_line

logger = logging.getLogger(__name__)

__all__ = ["ENTRY_FIELDS", "setup"]

_NUMBER = re.compile(r"\d{2}\Z")

#: option → label, in display order (one uniform layout for every entry)
ENTRY_FIELDS: tuple[tuple[str, str], ...] = (
    ("entry", "入口"),
    ("tests", "先读的测试"),
    ("first-pass", "第一遍读到哪里停"),
    ("second-pass", "第二遍再看"),
    ("pin-lacks", "固定提交里没有的"),
    ("covered-by", "本书讲解"),
)
_CITATION_FIELDS = ("entry", "tests")
_REQUIRED = ("title", "unit", "entry", "first-pass", "second-pass")


def _warn(directive: SphinxDirective, message: str, lineno: int | None = None) -> None:
    warn(directive.env, SlimebookWarning.READING, message,
         location=(directive.env.docname, lineno or directive.lineno))


_option_line = option_line  # the source line of ``:key:`` in the directive block

def _roles(directive: SphinxDirective, key: str, value: str) -> list[str] | None:
    """The citation role texts (``{slime}``) of an option value, or None (after a warning) when it holds anything
    else."""
    names = source_names(directive.config)
    items = [item.strip() for item in value.split(";")]
    texts: list[str] = []
    for item in items:
        text = role_text(item, names)
        if text is None:
            _warn(directive, f"{directive.name}: :{key}: items must each be one {{{names.role}}} role "
                             f"(separated by ';'), got {item!r}", option_line(directive, key))
            return None
        texts.append(text)
    return texts


# -- reading-entry --------------------------------------------------------------------------------------
class reading_entry(nodes.Admonition, nodes.Element):  # noqa: N801 - docutils node naming
    """One entry box; attributes ``number``, ``unit``, ``title``, ``entries`` and ``tests`` (role texts),
    ``covered`` (the covered-by markup, or None), ``lacks`` (True when the pin lacks part of it)."""


def _visit_entry(self: Any, node: reading_entry) -> None:
    self.visit_admonition(node)


def _depart_entry(self: Any, node: reading_entry) -> None:
    self.depart_admonition(node)


class ReadingEntry(SphinxDirective):
    """``reading-entry NN``: see the module docstring."""

    required_arguments = 1
    has_content = False
    option_spec = {
        "title": directives.unchanged_required,
        "unit": directives.unchanged_required,
        **{key: directives.unchanged_required for key, _ in ENTRY_FIELDS},
    }

    def run(self) -> list[nodes.Node]:
        number = self.arguments[0].strip()
        if not _NUMBER.match(number):
            _warn(self, f"reading-entry: the argument must be a two-digit entry number, got {number!r}")
            return []
        missing = [key for key in _REQUIRED if not self.options.get(key, "").strip()]
        if missing:
            _warn(self, f"reading-entry {number}: missing {', '.join(':' + k + ':' for k in missing)}")
            return []
        unit = self.options["unit"].strip()
        if not _NUMBER.match(unit):
            _warn(self, f"reading-entry {number}: :unit: must be two digits, got {unit!r}",
                  option_line(self, "unit"))
            return []
        roles = {key: _roles(self, key, self.options[key]) if key in self.options else [] for key in _CITATION_FIELDS}
        if any(value is None for value in roles.values()):
            return []
        title = self.options["title"].strip()
        box = reading_entry(number=number, unit=unit, title=title, entries=roles["entry"], tests=roles["tests"],
                            covered=self.options.get("covered-by"), lacks="pin-lacks" in self.options,
                            classes=["admonition", "reading-entry"], ids=[f"reading-entry-{number}"])
        box += nodes.title("", f"{number} · {title}")
        fields = nodes.field_list(classes=["reading-entry-fields"])
        for key, label in ENTRY_FIELDS:
            if key in _CITATION_FIELDS:
                texts = roles[key]
                if not texts:
                    value = "钉住的提交里没有对应的测试文件。" if key == "tests" else ""
                    body, messages = self.parse_inline(value, lineno=self.lineno)
                else:
                    role = source_names(self.config).role
                    body, messages = self.parse_inline("；".join(f"{{{role}}}`{t}`" for t in texts),
                                                       lineno=option_line(self, key) - 1)
            elif key in self.options:
                body, messages = self.parse_inline(self.options[key], lineno=option_line(self, key) - 1)
            else:
                continue
            fields += field(label, body, messages)
        box += fields
        self.set_source_info(box)
        return [box]


class reading_order_table(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Placeholder of ``reading-order-table``; replaced at ``doctree-read``."""


class ReadingOrderTable(SphinxDirective):
    """``reading-order-table``: the table of this document's entries (no options)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        node = reading_order_table()
        self.set_source_info(node)
        return [node]


def _text_cell(*children: nodes.Node) -> nodes.entry:
    para = nodes.paragraph()
    para.extend(children)
    return nodes.entry("", para)


def _role_label(text: str) -> str:
    """What a ``{slime}`` role shows: its title, else ``path`` or ``path:lines``."""
    target = parse_role_text(text)
    if target.title:
        return target.title
    return f"{target.path}:{target.lines}" if target.lines else target.path


def _field_copy(entry: reading_entry, key: str) -> list[nodes.Node]:
    """Copies of the inline nodes of the entry's field ``key`` (links stay pending until resolved)."""
    label = dict(ENTRY_FIELDS)[key]
    for item in entry.findall(nodes.field):
        if item[0].astext() == label:
            return [child.deepcopy() for child in item[1][0].children]
    return []


def _build_tables(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: fill every ``reading-order-table`` from the entries of the document; warn about a
    duplicate entry number or a table with no entries."""
    placeholders = list(doctree.findall(reading_order_table))
    entries = list(doctree.findall(reading_entry))
    seen: dict[str, reading_entry] = {}
    for entry in entries:
        if entry["number"] in seen:
            warn(app.env, SlimebookWarning.READING, "reading-entry %s: duplicate entry number (first at line %s)",
                 entry["number"], seen[entry["number"]].line, location=entry)
        seen.setdefault(entry["number"], entry)
    for placeholder in placeholders:
        if not entries:
            warn(app.env, SlimebookWarning.READING, "reading-order-table: this document has no reading-entry",
                 location=placeholder)
            placeholder.replace_self([])
            continue
        headers: list[str | nodes.paragraph] = ["编号", "单元", "主题", "入口", "测试", "本书讲解", "固定提交缺少"]
        table, body = table_frame(headers, ["colwidths-auto", "reading-order-table"])
        for entry in entries:
            row = nodes.row()
            ref = nodes.reference("", "", internal=True, refid=f"reading-entry-{entry['number']}")
            ref += nodes.Text(entry["number"])
            row += _text_cell(ref)
            row += _text_cell(nodes.Text(entry["unit"]))
            row += _text_cell(nodes.Text(entry["title"]))
            names: list[nodes.Node] = []
            for n, text in enumerate(entry["entries"]):
                if n:
                    names.append(nodes.Text("、"))
                label = _role_label(text)
                names.append(nodes.literal(label, label))
            row += _text_cell(*names)
            row += _text_cell(nodes.Text(str(len(entry["tests"])) if entry["tests"] else "—"))
            row += _text_cell(*(_field_copy(entry, "covered-by") or [nodes.Text("—")]))
            row += _text_cell(nodes.Text("是" if entry["lacks"] else "—"))
            body += row
        wrapper = nodes.container(classes=["table-wrapper"])
        wrapper += table
        placeholder.replace_self(wrapper)


# -- reading-path ---------------------------------------------------------------------------------------
class ReadingPath(SphinxDirective):
    """``reading-path``: a top-down mermaid flowchart of ``{slime}`` steps (see the module docstring).

    Option ``:caption:`` is shown under the diagram. The steps are also listed below the diagram as
    ordinary (verified) ``{slime}`` citations, which is what LaTeX readers and screen readers get.
    """

    has_content = True
    option_spec = {"caption": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        from sphinxcontrib.mermaid import mermaid

        names = source_names(self.config)
        steps: list[tuple[str, str, int]] = []  # (role text, edge label, line)
        for offset, raw in enumerate(self.content):
            line = raw.strip()
            if not line:
                continue
            lineno = content_line(self, offset)
            role, _, label = line.partition("|")
            text = role_text(role, names)
            if text is None:
                _warn(self, f"reading-path: each line must be one {{{names.role}}} role, optionally '| edge label'; "
                            f"got {line!r}", lineno)
                return []
            steps.append((text, label.strip(), lineno))
        if len(steps) < 2:
            _warn(self, "reading-path: a path needs at least two steps")
            return []
        store = get_store(self.env)
        code = ["flowchart TD"]
        links: list[tuple[str, int, int]] = []
        listing = nodes.enumerated_list(classes=["reading-path-steps"])
        for n, (text, label, lineno) in enumerate(steps):
            body, messages = self.parse_inline(f"{{{names.role}}}`{text}`", lineno=lineno - 1)
            item = nodes.paragraph()
            item.extend(body)
            if label:
                item += nodes.Text(f" → {label}")
            listing += nodes.list_item("", item, *messages)
            target = parse_role_text(text)
            try:
                excerpt = read_excerpt(store, target.path, lines=target.lines, pyobject=target.pyobject)
            except ExcerptError:
                return []  # the role above already warned at this line
            shown = _role_label(text).replace('"', "#quot;")  # mermaid's entity for a quote in a label
            code.append(f'    s{n}["{shown}"]')
            links.append((excerpt.path, excerpt.start, excerpt.end))
            code.append(f'    click s{n} href "@@link{n}@@" "{excerpt.path}:{excerpt.label()} @ {store.lock.short}"')
        for n, (_, label, _) in enumerate(steps[:-1]):
            arrow = f'-- "{label.replace(chr(34), "#quot;")}" -->' if label else "-->"
            code.append(f"    s{n} {arrow} s{n + 1}")
        diagram = mermaid()
        diagram["code"] = "\n".join(code)
        diagram["options"] = {}
        diagram["reading_links"] = links  # made into URLs at doctree-resolved, relative to the page written
        self.set_source_info(diagram)
        out: list[nodes.Node] = [diagram]
        if self.options.get("caption"):
            caption, messages = self.parse_inline(self.options["caption"], lineno=self.lineno)
            out.append(nodes.paragraph("", "", *caption, classes=["reading-path-caption"]))
            out.extend(messages)
        out.append(listing)
        return out


# -- repo-map -------------------------------------------------------------------------------------------
class repo_heatmap(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Placeholder of the heat map: attribute ``rows`` (list of (key, depth, Counter-as-dict)) and
    ``categories``; links are made at ``doctree-resolved`` relative to the page being written."""


def _key_label(key: str) -> str:
    """What a map row shows: ``agent/`` for ``slime/agent``; a sentence for a files row."""
    if key == ROOT_FILES:
        return "（根目录下的文件）"
    if key.endswith("/" + ROOT_FILES):
        return f"（{key[:-2]}/ 下直接的文件）"
    return key.rsplit("/", 1)[-1] + "/"


def _row_label(row: DirRow) -> str:
    return _key_label(row.key)


#: Generated pages of the heat map's records: one per map row, one section (``#cat-<category>``) per category.
DIR_ROOT = "_slimebook/usage/dir"


def dir_page(key: str) -> str:
    """The page of a map row's records: ``slime/agent`` → ``_slimebook/usage/dir/slime/agent``; the files
    lying directly in ``slime/`` → ``…/dir/slime/_files``; the root's files → ``…/dir/_files``."""
    if key == ROOT_FILES:
        return f"{DIR_ROOT}/_files"
    if key.endswith("/" + ROOT_FILES):
        return f"{DIR_ROOT}/{key[:-2]}/_files"
    return f"{DIR_ROOT}/{key}"


def _under(path: str, row: DirRow) -> bool:
    if row.key == ROOT_FILES:
        return "/" not in path
    if row.is_files_row:
        parent = row.key[:-2]
        return path.startswith(parent + "/") and "/" not in path[len(parent) + 1:]
    return path.startswith(row.key + "/")


class RepoMap(SphinxDirective):
    """``repo-map``: the generated directory tree and heat map (see the module docstring).

    Option ``:expand:``: directories (space-separated) whose subdirectories get rows. Content: one line
    per row, ``slime/agent: what it holds`` (``*`` for the root's files, ``slime/*`` for the files
    directly in ``slime/``).
    """

    has_content = True
    option_spec = {"expand": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        store = get_store(self.env)
        self.env.note_dependency(str(lock_path(self.env)))
        expand = (self.options.get("expand") or "").split()
        try:
            rows = repo_map(store, expand)
        except RepoMapError as exc:
            _warn(self, f"repo-map: :expand: {exc}", option_line(self, "expand"))
            return []
        roles = self._roles()
        self._check_roles(rows, roles, store.lock.short, expand)
        top = [row for row in rows if row.depth == 0]
        total_files, total_lines = sum(r.files for r in top), sum(r.lines for r in top)
        wrapper = nodes.container(classes=["table-wrapper", "repo-map-wrapper"])
        wrapper += self._table(rows, roles)
        summary = nodes.paragraph(classes=["repo-map-summary"])
        summary += nodes.Text(f"构建时读取 {store.lock.name} 固定提交 {store.lock.short} 的 git 树：共 {total_files} "
                              f"个文件、{total_lines:,} 行文本。每一层的数字相加等于上一层。")
        return [summary, wrapper, self._heatmap(rows)]

    def _roles(self) -> dict[str, tuple[str, int]]:
        """The content's ``key: role`` lines: key → (role text, source line); malformed lines are warned."""
        roles: dict[str, tuple[str, int]] = {}
        for offset, raw in enumerate(self.content):
            lineno = content_line(self, offset)
            if not raw.strip():
                continue
            key, sep, text = raw.strip().partition(": ")
            key = key.rstrip("/")
            if not sep or not text.strip():
                _warn(self, f"repo-map: a role line reads 'dir: role', got {raw.strip()!r}", lineno)
                continue
            if key in roles:
                _warn(self, f"repo-map: {key!r} has two roles (first at line {roles[key][1]})", lineno)
            roles[key] = (text.strip(), lineno)
        return roles

    def _check_roles(self, rows: list[DirRow], roles: dict[str, tuple[str, int]], short: str,
                     expand: list[str]) -> None:
        """Warn about a role for no row, and a row without a role."""
        keys = {row.key for row in rows}
        for key, (_, lineno) in roles.items():
            if key not in keys:
                _warn(self, f"repo-map: {key!r} is not a row of the map at {short} "
                            f"(rows: top-level directories, subdirectories of {' '.join(expand) or 'nothing'}, "
                            "and '*' rows for files lying directly in a directory)", lineno)
        for row in rows:
            if row.key not in roles:
                _warn(self, f"repo-map: the directory row {row.key!r} ({row.files} files at {short}) "
                            "has no role; add a line 'path: role' to the directive")

    def _table(self, rows: list[DirRow], roles: dict[str, tuple[str, int]]) -> nodes.table:
        """The directory table: one row per :class:`DirRow`, its role parsed as inline markup, then the totals."""
        top = [row for row in rows if row.depth == 0]
        total_files, total_lines = sum(r.files for r in top), sum(r.lines for r in top)
        total_skipped = sum(r.skipped for r in top)
        table, body = table_frame(["目录", "文件", "行", "作用"], ["colwidths-auto", "repo-map"])
        for row in rows:
            trow = nodes.row(classes=[f"repo-map-depth-{row.depth}"])
            label = _row_label(row)
            indent = "\u3000" * row.depth + ("└ " if row.depth else "")
            name = nodes.literal(label, label) if not row.is_files_row else nodes.Text(label)
            trow += _text_cell(nodes.Text(indent), name)
            trow += _text_cell(nodes.Text(str(row.files)))
            trow += _text_cell(nodes.Text(f"{row.lines:,}"))
            text, lineno = roles.get(row.key, ("", self.lineno))
            inline, messages = self.parse_inline(text, lineno=lineno - 1) if text else ([], [])
            cell = _text_cell(*inline)
            cell.extend(messages)
            trow += cell
            body += trow
        total = nodes.row(classes=["repo-map-total"])
        total += _text_cell(nodes.strong("合计", "合计"))
        total += _text_cell(nodes.strong(str(total_files), str(total_files)))
        total += _text_cell(nodes.strong(f"{total_lines:,}", f"{total_lines:,}"))
        total += _text_cell(nodes.Text(f"{total_skipped} 个条目不计行数（二进制文件或符号链接）"))
        body += total
        return table

    def _heatmap(self, rows: list[DirRow]) -> repo_heatmap:
        """The heat map placeholder: records per category under each row (resolved at ``doctree-resolved``)."""
        note_scan_use(self.env)
        records = get_scan(self.env).records
        categories = [c for c in CATEGORIES if any(r.category == c for r in records)]
        heat_rows = []
        for row in rows:
            counts = Counter(r.category for r in records if _under(r.path, row))
            heat_rows.append((row.key, row.depth, row.is_files_row, {c: counts[c] for c in categories}))
        doc_data(self.env, "slimebook_repomap_rows")[self.env.docname] = [row.key for row in rows]
        heat = repo_heatmap(rows=heat_rows, categories=categories)
        self.set_source_info(heat)
        return heat


def _heat_level(count: int, peak: int) -> int:
    """0 for none, 1–4 by the count's share of the busiest cell (on a log-free, rounded-up scale)."""
    if count == 0:
        return 0
    return min(4, 1 + (4 * count - 1) // max(peak, 1))


def _resolve_heatmaps(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: turn ``repo_heatmap`` placeholders into tables whose cells link to category pages."""
    for node in list(doctree.findall(repo_heatmap)):
        categories: list[str] = node["categories"]
        peak = max((count for *_, counts in node["rows"] for count in counts.values()), default=0)
        links = builds_pages(app)
        table = nodes.table(classes=["colwidths-auto", "repo-heatmap"])
        group = nodes.tgroup(cols=len(categories) + 1)
        table += group
        for _ in range(len(categories) + 1):
            group += nodes.colspec(colwidth=5)
        head = nodes.thead()
        hrow = nodes.row()
        hrow += _text_cell(nodes.Text("目录"))
        for category in categories:
            text = nodes.literal(category, category)
            if links:
                ref = nodes.reference("", "", internal=True,
                                      refuri=app.builder.get_relative_uri(docname, category_page(category)))
                ref += text
                text = ref
            hrow += _text_cell(text)
        head += hrow
        group += head
        body = nodes.tbody()
        for key, depth, files_row, counts in node["rows"]:
            label = _key_label(key)
            trow = nodes.row()
            indent = "\u3000" * depth + ("└ " if depth else "")
            trow += _text_cell(nodes.Text(indent), nodes.Text(label) if files_row else nodes.literal(label, label))
            for category in categories:
                count = counts[category]
                cell: nodes.Node = nodes.Text(str(count) if count else "·")
                if count and links:
                    ref = nodes.reference("", "", internal=True,
                                          refuri=app.builder.get_relative_uri(docname, dir_page(key))
                                          + f"#cat-{category}",
                                          reftitle=f"{label} 中 {category} 类的 {count} 处")
                    ref += cell
                    cell = ref
                entry = _text_cell(cell)
                entry["classes"].append(f"repo-heat-{_heat_level(count, peak)}")
                trow += entry
            body += trow
        group += body
        node.replace_self(scroll(table, html=app.builder.format == "html"))


def _dir_records(records: list, key: str) -> list:
    if key == ROOT_FILES:
        return [r for r in records if "/" not in r.path]
    if key.endswith("/" + ROOT_FILES):
        parent = key[:-2]
        return [r for r in records if r.path.startswith(parent + "/") and "/" not in r.path[len(parent) + 1:]]
    return [r for r in records if r.path.startswith(key + "/")]


def _dir_page_body(page: GeneratedPage, key: str, records: list) -> nodes.section:
    where = "根目录下直接的文件" if key == ROOT_FILES else (
        f"{key[:-2]}/ 下直接的文件" if key.endswith("/" + ROOT_FILES) else f"{key}/")
    section = nodes.section(ids=["slimebook-usage-dir"])
    section += nodes.title("", f"用法索引：{where}")
    intro = nodes.paragraph()
    intro += nodes.Text(f"扫描在固定提交 {page.render.lock.short} 的 {where}中找到 {len(records)} 处记录，按类别分节。"
                        "回到")
    overview = nodes.reference("", "", internal=True, refuri=page.uri("_slimebook/usage/index"))
    overview += nodes.Text("用法索引")
    intro += overview
    intro += nodes.Text("。")
    section += intro
    for category in CATEGORIES:
        chosen = [r for r in records if r.category == category]
        if not chosen:
            continue
        sub = nodes.section(ids=[f"cat-{category}"])
        title = nodes.title()
        ref = nodes.reference("", "", internal=True, refuri=page.uri(category_page(category)))
        ref += nodes.literal(category, category)
        title += ref
        title += nodes.Text(f"（{len(chosen)} 处）")
        sub += title
        sub.extend(usage_nodes(chosen, ("id", "location", "code", "scope", "name", "kind"), page.render,
                               f"展开 {len(chosen)} 处"))
        section += sub
    return section


#: The code the directory pages are drawn by: a page is written again when it changes.
_DIR_CODE = tuple(Path(__file__).parents[1] / n for n in ("directives/reading.py", "pages/usagetables.py",
                                                            "pages/render.py"))
_DIR_STAMPS = f"{DIR_ROOT}/.stamps.json"


def _dir_pages(app: Sphinx) -> PageBatch | None:
    """``slimebook-generated-pages``: one page of records per row of every ``repo-map`` (see :func:`dir_page`),
    unless ``_slimebook/usage/dir/.stamps.json`` records the page's stamp (the scan, the row, the navigation and
    configuration of :func:`page_stamp_base`, this code) and the page exists."""
    if not builds_pages(app):
        return None
    keys = sorted({key for rows in app.env.__dict__.get("slimebook_repomap_rows", {}).values() for key in rows})
    if not keys:
        return None
    stamp_file = Path(app.outdir, _DIR_STAMPS)
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    result = get_scan(app.env)
    base = json.dumps([page_stamp_base(app), result.version, result.commit, app.config.slimebook_usage_collapse,
                       [hashlib.sha256(p.read_bytes()).hexdigest() for p in _DIR_CODE]])
    new = {key: hashlib.sha256(f"{base}:{key}".encode()).hexdigest() for key in keys}
    jobs = []
    for key in keys:
        if old.get(key) == new[key] and Path(app.builder.get_outfilename(dir_page(key))).exists():
            continue
        chosen = _dir_records(result.records, key)
        jobs.append(PageJob(dir_page(key), f"用法索引：{_key_label(key)}",
                            lambda page, key=key, chosen=chosen: _dir_page_body(page, key, chosen),
                            cost=len(chosen) + 1))
    return PageBatch(jobs, lambda: atomic_write(stamp_file, json.dumps(new, sort_keys=True)))


def _resolve_paths(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: the click targets of ``reading-path`` diagrams, relative to the page written:
    the snapshot page at the step's first line in HTML, the upstream permalink elsewhere."""
    from sphinxcontrib.mermaid import mermaid

    lock = get_store(app.env).lock
    for node in doctree.findall(mermaid):
        links = node.get("reading_links")
        if not links:
            continue
        code = node["code"]
        for n, (path, start, end) in enumerate(links):
            if builds_pages(app):
                uri = app.builder.get_relative_uri(docname, snapshot_pagename(path)) + f"#L{start}"
            else:
                uri = lock.permalink(path, start, end)
            code = code.replace(f"@@link{n}@@", uri)
        node["code"] = code


#: Styles of the entry boxes, the tables and the heat map: a static file, ``static/`` beside this module.
CSS_FILE = "slimebook-reading.css"


def setup(app: Sphinx) -> None:
    """Register the directives, their nodes and hooks."""
    app.add_css_file(CSS_FILE)
    app.add_node(reading_entry, html=(_visit_entry, _depart_entry), latex=(_visit_entry, _depart_entry),
                 text=(_visit_entry, _depart_entry))
    app.add_directive("reading-entry", ReadingEntry)
    app.add_directive("reading-order-table", ReadingOrderTable)
    app.add_directive("reading-path", ReadingPath)
    app.add_directive("repo-map", RepoMap)
    app.connect("doctree-read", _build_tables)
    app.connect("doctree-resolved", _resolve_heatmaps)
    app.connect("doctree-resolved", _resolve_paths)
    app.connect(EVENT, _dir_pages)
    keep_per_doc(app, "slimebook_repomap_rows")
