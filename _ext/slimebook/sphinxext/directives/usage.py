"""The usage index in documents: the ``usage-index`` directive and the ``{usage}`` role.

The directive only parses and validates its options and leaves a ``usage_index`` placeholder; the table is
built at ``doctree-resolved``, when every document's ``lesson-teaches`` is known (``:lesson: other-doc`` works
whatever the reading order) and the links can be made relative to the page being written. The scan they read
lives in :mod:`slimebook.sphinxext.environment.scancache`; the tables, shared with the generated pages of
:mod:`slimebook.sphinxext.pages.usagepages`, in
:mod:`slimebook.sphinxext.pages.usagetables`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from fnmatch import fnmatchcase

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import docname_join, logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from ...scan import ScanResult
from ...scan.categories import CategoryTable
from ...usage import COLUMNS, Query, QueryError, instance_uses, key_of, name_anchor, parse_list, receiver_types, select
from ..config import declare as declare_config
from ..context import builds_pages, get_store
from ..diagnostics import SlimebookWarning, warn
from ..environment import scancache
from ..environment.scancache import get_figures, get_scan, get_table, note_scan_use, scan_key
from ..gates.candidates import confirmed_uses
from ..locale import _, list_separator, ngettext, source_title
from ..pages import usagetables
from ..pages.usagetables import (
    COVERAGE_PAGE,
    FILES_PAGE,
    OVERVIEW_PAGE,
    PRINT_COLUMNS,
    Render,
    breakable_literal,
    category_page,
    keep,
    scroll,
    usage_nodes,
)

logger = logging.getLogger(__name__)

#: Names other modules and tests import from here (defined in :mod:`slimebook.sphinxext.environment.scancache`
#: and :mod:`slimebook.sphinxext.pages.usagetables`).
__all__ = [
    "COVERAGE_PAGE", "FILES_PAGE", "OVERVIEW_PAGE", "Render", "category_page", "get_figures", "get_scan",
    "breakable_literal", "note_scan_use", "scan_key", "scroll", "usage_nodes",
]


def _count_sentence(records: Sequence, patterns: Sequence[str], query: Query, project: str,
                    every: Sequence = (), confirmed_uses: Sequence = ()) -> nodes.paragraph:
    """"12 occurrences in 3 files: name n, …." for the selected ``records`` (in the book's language).

    Per pattern: how many records it selected; how many of those are a subclass's use of the method
    (``asyncio.Task.add_done_callback`` under ``asyncio.Future.add_done_callback``) and the receiver classes;
    and, for a pattern that selected nothing, whether the scan (``every``, the whole scan) still has method uses
    on instances of the class it names (its name is never written), or instance candidates a person confirmed
    as such (``confirmed_uses``: the candidates' records renamed to the confirmed API), before saying the upstream
    project (``project``, :func:`~slimebook.sphinxext.locale.source_title`) does not use it.
    """
    files = len({r.path for r in records})
    para = nodes.paragraph(classes=["slimebook-usage-summary"])
    para += nodes.Text(_("{occurrences} in {files}").format(
        occurrences=ngettext("{n} occurrence", "{n} occurrences", len(records)).format(n=len(records)),
        files=ngettext("{n} file", "{n} files", files).format(n=files)))
    if patterns:
        para += nodes.Text(_(": "))
        para.extend(_pattern_counts(records, patterns, query, project, every, confirmed_uses))
    para += nodes.Text(_("."))
    return para


def _pattern_counts(records: Sequence, patterns: Sequence[str], query: Query, project: str, every: Sequence,
                    confirmed_uses: Sequence) -> list[nodes.Node]:
    """The per-pattern part of :func:`_count_sentence`: ``pattern n`` (with the subclasses' share), or why 0."""
    counts = {p: 0 for p in patterns}
    via: dict[str, Counter] = {p: Counter() for p in patterns}
    for record in records:
        index = query.pattern_index(record)
        if index is not None:
            pattern = patterns[index]
            counts[pattern] += 1
            if not fnmatchcase(key_of(record), pattern) and not fnmatchcase(record.name, pattern):
                via[pattern][receiver_types(record, query.table)[0]] += 1
    out: list[nodes.Node] = []
    for n, (pattern, count) in enumerate(counts.items()):
        if n:
            out.append(nodes.Text(list_separator()))
        out.append(nodes.literal(pattern, pattern))
        by_hand = _confirmed_as(pattern, query, confirmed_uses)
        if count:
            out.append(nodes.Text(f" {count}"))
            if via[pattern]:
                subclasses = list_separator().join(
                    ngettext("{n} called on an instance of subclass {type}",
                             "{n} called on instances of subclass {type}", c).format(n=c, type=t)
                    for t, c in sorted(via[pattern].items()))
                out.append(nodes.Text(_(" (of them {subclasses})").format(subclasses=subclasses)))
            if by_hand:
                out.append(nodes.Text(_(" (plus {candidates} confirmed by hand)").format(
                    candidates=_candidates(by_hand))))
            continue
        if by_hand:
            out.append(nodes.Text(_(" 0 by name (plus {candidates} confirmed by hand)").format(
                candidates=_candidates(by_hand))))
            continue
        out.append(_zero_reason(pattern, query, project, every, confirmed_uses))
    return out


def _confirmed_as(pattern: str, query: Query, confirmed_uses: Sequence) -> int:
    """How many instance candidates a person confirmed as an API ``pattern`` names (``confirmed_uses``: their records
    renamed to the confirmed API), within ``query``'s other filters: uses the table's rows do not hold, since the
    scan alone cannot tell the receiver's type."""
    alone = dataclasses.replace(query, names=(pattern,))
    return sum(1 for record in confirmed_uses if alone.matches(record))


def _candidates(n: int) -> str:
    return ngettext("{n} instance candidate", "{n} instance candidates", n).format(n=n)


def _zero_reason(pattern: str, query: Query, project: str, every: Sequence, confirmed_uses: Sequence) -> nodes.Text:
    """Why a pattern selected nothing: its class is used only through instances (and confirmed candidates); the
    selection's category, path or kind filters leave out the occurrences the scan has (``every``), counted as the
    directive without those filters counts them (its default kinds, every kind when ``:kind:`` narrowed it), or the
    uses of the class's instance methods there; or the upstream project does not use it."""
    uses = instance_uses([r for r in every if query.within(r)], pattern, query.table)
    confirmed = len(instance_uses([r for r in confirmed_uses if query.within(r)], pattern, query.table))
    if uses or confirmed:
        return _instance_reason(_(" 0 (the class name does not appear; its instance methods have {uses}{confirmed})"),
                                len(uses), confirmed)
    if query.categories or query.paths or query.kinds is not None:  # a narrowed selection: is it used outside?
        alone = Query(names=(pattern,), kinds=None if query.kinds is None else ("all",), table=query.table)
        outside = sum(1 for r in every if alone.matches(r))
        if outside:
            return nodes.Text(_(" 0 (none in this selection; {occurrences} at the pin outside it)").format(
                occurrences=ngettext("{n} occurrence", "{n} occurrences", outside).format(n=outside)))
        uses = instance_uses(every, pattern, query.table)
        confirmed = len(instance_uses(confirmed_uses, pattern, query.table))
        if uses or confirmed:
            return _instance_reason(_(" 0 (none in this selection; outside it the class name does not appear, its "
                                      "instance methods have {uses}{confirmed})"), len(uses), confirmed)
    return nodes.Text(_(" 0 (not used by {project})").format(project=project))


def _instance_reason(message: str, uses: int, confirmed: int) -> nodes.Text:
    """``message`` (a translated sentence with ``{uses}`` and ``{confirmed}``) with the count of ``uses`` of a class's
    instance methods, ``confirmed`` of them candidates confirmed by hand."""
    total = uses + confirmed
    return nodes.Text(message.format(
        uses=ngettext("{n} use", "{n} uses", total).format(n=total),
        confirmed=ngettext(", {n} of them a candidate confirmed by hand", ", {n} of them candidates confirmed by hand",
                           confirmed).format(n=confirmed) if confirmed else ""))


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
                      kinds=kinds, paths=parse_list(self.options.get("path")), table=get_table(self.env))
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
                  kinds=None if node["kinds"] is None else tuple(node["kinds"]), paths=tuple(node["paths"]),
                  table=get_table(env))
    result = get_scan(env)
    records = select(result.records, query)
    if not records:
        para = nodes.paragraph(classes=["slimebook-usage-empty"])
        para += nodes.Text(_("The usage index found no occurrence at the pinned commit {commit} that matches "
                             "({conditions}).").format(commit=r.lock.short, conditions=_describe(query)))
        return [para]
    summary = _count_sentence(records, query.names, query, source_title(r.lock), result.records, confirmed_uses(app))
    columns = node["columns"] or (COLUMNS if r.details else PRINT_COLUMNS)
    drawn = usage_nodes(records, columns, r)
    return [summary, keep(drawn)] if r.details else [summary, *drawn]  # HTML an accelerator may keep


def _describe(query: Query) -> str:
    """The conditions of ``query`` as the empty result's sentence names them."""
    sep = list_separator()
    parts = []
    if query.names:
        parts.append(_("names {names}").format(names=sep.join(query.names)))
    if query.categories:
        parts.append(_("categories {categories}").format(categories=sep.join(query.categories)))
    if query.kinds is not None:
        parts.append(_("kinds {kinds}").format(kinds=sep.join(query.kinds)))
    if query.paths:
        parts.append(_("paths {paths}").format(paths=sep.join(query.paths)))
    return _("; ").join(parts) or _("no conditions")


# -- the role ----------------------------------------------------------------------------------------------
class usage_ref(nodes.Inline, nodes.TextElement):  # noqa: N801 - docutils node naming
    """Placeholder of ``{usage}``: attributes ``page`` and ``anchor``; a link in HTML, its text elsewhere."""


#: Role targets that name a page rather than a category or an API: the page and the role's text (lazy: translated
#: when used).
PAGE_TARGETS: dict[str, tuple[str, str]] = {
    "index": (OVERVIEW_PAGE, _("Usage index")),
    "overview": (OVERVIEW_PAGE, _("Usage index")),
    "files": (FILES_PAGE, _("Usage index by file")),
    "coverage": (COVERAGE_PAGE, _("Coverage table")),
}


def resolve_target(result: ScanResult, target: str, table: CategoryTable) -> tuple[str, str, bool]:
    """``(page, anchor, is_code)`` for a ``{usage}`` target (a page, a category of ``table``, a name the scan
    found); raises ValueError for an unknown one."""
    if target in PAGE_TARGETS:
        return PAGE_TARGETS[target][0], "", False
    if target in table.categories:
        return category_page(target), "", True
    for record in result.records:
        if key_of(record) == target or (record.kind != "syntax" and record.name == target):
            return category_page(record.category), name_anchor(key_of(record)), True
    raise ValueError(f"{target!r} is not a category ({', '.join(table.categories)}), a page "
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
            page, anchor, is_code = resolve_target(get_scan(self.env), text, get_table(self.env))
        except ValueError as exc:
            warn(self.env, SlimebookWarning.USAGE, "usage: %s", exc, location=self.get_location(),
                 docname=self.env.docname)
            return [nodes.literal(self.rawtext, self.text, classes=["slimebook-broken"])], []
        note_scan_use(self.env)
        shown = title or (text if is_code else str(PAGE_TARGETS[text][1]))
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
    declare_config(app, "usage")  # slimebook_usage_collapse
    usagetables.setup(app)
    app.add_directive("usage-index", UsageIndex)
    app.add_role("usage", UsageRole())
    scancache.setup(app)
    app.connect("doctree-resolved", _resolve)
