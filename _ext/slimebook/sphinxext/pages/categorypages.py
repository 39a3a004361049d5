"""The usage index's category pages: one page per category of the table, its names, their occurrences, and on the
candidates page how many candidates were confirmed or left (a part of :mod:`slimebook.sphinxext.pages.usagepages`,
which writes these pages in its batch)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from docutils import nodes

from ...candidates import Settled
from ...scan.categories import CategoryTable
from ...scan.records import KINDS, Occurrence
from ...usage import Coverage, category_members, key_of, name_anchor
from ..environment.scancache import get_scan, get_table
from ..gates.candidates import book_settled, load_notes_file
from ..locale import _, clause_separator, fill, list_separator, ngettext
from .render import GeneratedPage, interleave, make_para, make_ref, make_section, simple_table
from .usagetables import COVERAGE_PAGE, OVERVIEW_PAGE, breakable_literal, usage_nodes

__all__ = ["KIND_TEXT", "category_description", "category_section", "settled_section"]

#: Record kind → its word (lazy).
KIND_TEXT = {
    "import": _("import"), "api_call": _("call"), "api_reference": _("reference"), "method_call": _("method call"),
    "instance_candidate": _("candidate"), "syntax": _("syntax"),
}


def _code(text: str) -> nodes.literal:
    return breakable_literal(text)


def category_description(table: CategoryTable, category: str) -> str:
    """The sentence of ``category``'s usage page: the table's ``description`` through the extension's catalog (the
    shipped default table's descriptions are its English message ids; a book's own file gives sentences in the
    book's language, which the catalog leaves as they are); ``""`` when the table gives none."""
    text = table.descriptions.get(category, "")
    return str(_(text)) if text else ""


def category_section(page: GeneratedPage, category: str, cov: Coverage) -> nodes.section:
    """The body of ``category``'s page: what the category holds, a table of its names (counts, the lessons teaching
    them), the settled candidates on the candidates page, then one section per name with its occurrences."""
    records = [r for r in get_scan(page.app.env).records if r.category == category]
    section = _category_intro(page, category)
    if not records:
        section += make_para(_("The pinned commit {commit} has no occurrence of this category.").format(
            commit=page.render.lock.short), classes=["slimebook-usage-empty"])
        return section
    groups: dict[str, list[Occurrence]] = defaultdict(list)
    for record in records:
        groups[key_of(record)].append(record)
    keys = sorted(groups)
    section += _category_counts(records, keys)
    section += _names_table(page, keys, groups, cov)
    if category == "candidates":
        section += settled_section(page, records)
    for key in keys:
        section += _name_section(page, key, groups[key])
    return section


def _category_intro(page: GeneratedPage, category: str) -> nodes.section:
    """The page's section with its title, the category's sentence, its prefixes and the links back."""
    section = make_section(f"slimebook-usage-{category}", _("Usage index: {category}").format(category=category))
    table = get_table(page.app.env)
    section += make_para(category_description(table, category))
    members = category_members(category, table)
    if members:
        section += make_para(*fill(_("Names of this category in the category table (prefixes): {names}."),
                                   names=interleave([_code(m) for m in members])))
    section += make_para(*fill(_("Back to the {overview}, or see the {coverage}."),
                               overview=make_ref(page.uri(OVERVIEW_PAGE), _("Usage index")),
                               coverage=make_ref(page.uri(COVERAGE_PAGE), _("Coverage table"))))
    return section


def _category_counts(records: list[Occurrence], keys: list[str]) -> nodes.paragraph:
    """``N occurrences of M names in F files (kinds)``."""
    by_kind = Counter(r.kind for r in records)
    files = len({r.path for r in records})
    return make_para(_("{occurrences} of {names} in {files} ({kinds}).").format(
        occurrences=ngettext("{n} occurrence", "{n} occurrences", len(records)).format(n=len(records)),
        names=ngettext("{n} name", "{n} names", len(keys)).format(n=len(keys)),
        files=ngettext("{n} file", "{n} files", files).format(n=files),
        kinds=clause_separator().join(f"{KIND_TEXT[k]} {by_kind[k]}" for k in KINDS if by_kind[k])))


def _names_table(page: GeneratedPage, keys: list[str], groups: dict[str, list[Occurrence]],
                 cov: Coverage) -> nodes.Element:
    """One row per name: its link, kinds, count, files and the lessons that teach it."""
    rows_by_key = {row.key: row for row in cov.rows}
    rows: list[list[nodes.Node | str]] = []
    for key in keys:
        group = groups[key]
        kinds = {r.kind for r in group}
        rows.append([
            make_para(make_ref(f"#{name_anchor(key)}", _code(key))),
            list_separator().join(k for k in KINDS if k in kinds),
            str(len(group)),
            str(len({r.path for r in group})),
            page.teaching(rows_by_key.get(key), kinds),
        ])
    return simple_table([_("Name"), _("Kind"), _("Count"), _("Files"), _("Taught by")], rows,
                        ["slimebook-usage-names"], wrap=(4,))


def _name_section(page: GeneratedPage, key: str, group: list[Occurrence]) -> nodes.section:
    """A name's section: its counts and its occurrences' table."""
    columns = ("id", "location", "code", "scope", "kind", "provenance")
    sub = make_section(name_anchor(key), _code(key))
    in_files = len({r.path for r in group})
    sub += make_para(_("{occurrences}, {files}.").format(
        occurrences=ngettext("{n} occurrence", "{n} occurrences", len(group)).format(n=len(group)),
        files=ngettext("{n} file", "{n} files", in_files).format(n=in_files)))
    sub.extend(usage_nodes(group, columns, page.render,
                           ngettext("Show the {n} occurrence of {name}", "Show all {n} occurrences of {name}",
                                    len(group)).format(n=len(group), name=key)))
    return sub


def settled_section(page: GeneratedPage, records: list[Occurrence]) -> nodes.section:
    """On the candidates page: how many candidates a lesson confirmed, how many are left and why."""
    app = page.app
    notes = load_notes_file(app)
    section = make_section("slimebook-usage-candidates-settled", _("Confirmed and left"))
    if notes.path is None or not notes.exists or notes.error is not None:
        section += make_para(_("There is no (valid) candidate notes file, so none of these candidates is confirmed "
                               "or left with a reason."), classes=["slimebook-usage-gate-off"])
        return section
    result = book_settled(app, notes)
    where = Path(notes.path).relative_to(app.confdir) if Path(notes.path).is_relative_to(app.confdir) \
        else notes.path
    groups = result.by_reason()
    section += make_para(*fill(
        _("{candidates} in all: {confirmed} confirmed, {left} left as candidates ({reasons}), {open} not accounted "
          "for. Each confirmed one is written in {file}: which API it really is, the evidence, and which lesson cites "
          "the line; the build checks that the candidate exists, that the API is in the category table and that the "
          "lesson's citation covers the line. The ones left are grouped by reason. A confirmed candidate is still "
          "only a candidate and does not count in the coverage table."),
        candidates=ngettext("{n} candidate", "{n} candidates", len(records)).format(n=len(records)),
        confirmed=len(result.confirmed), left=len(result.left),
        reasons=ngettext("{n} reason", "{n} reasons", len(groups)).format(n=len(groups)),
        open=len(result.open), file=_code(str(where))))
    section.extend(_confirmed_table(page, result))
    section.extend(_left_table(result, groups))
    if result.open:
        unsettled = [make_ref(f"#{r.id}", _code(f"{r.path}:{r.line} {r.name}")) for r in result.open]
        label = _("Not accounted for: ")
        section += make_para(nodes.strong(label, label), *interleave(unsettled), _("."))
    return section


def _confirmed_table(page: GeneratedPage, result: Settled) -> list[nodes.Node]:
    """The confirmed candidates: location, API, the lesson reading the line, the evidence (nothing when none)."""
    rows: list[list[nodes.Node | str]] = []
    for record, conf in result.confirmed:
        where_line = f"{record.path}:{record.line}"
        rows.append([
            make_para(make_ref(f"#{record.id}", _code(where_line))),
            make_para(_code(conf.api)),
            page.lesson(conf.lesson),
            conf.evidence,
        ])
    if not rows:
        return []
    return [make_para(_("Confirmed ({n}):").format(n=len(rows))),
            simple_table([_("Location"), _("API"), _("Lesson reading it"), _("Evidence")], rows,
                         ["slimebook-usage-confirmed"], wrap=(3,))]


def _left_table(result: Settled, groups: list) -> list[nodes.Node]:
    """The candidates left, one row per reason (nothing when none)."""
    rows: list[list[nodes.Node | str]] = []
    for rule, items in groups:
        names = list_separator().join(sorted({r.name for r in items}))
        files = len({r.path for r in items})
        rows.append([rule.reason, make_para(_code(names)), _("{n} ({files})").format(
            n=len(items), files=ngettext("{n} file", "{n} files", files).format(n=files))])
    if not rows:
        return []
    return [make_para(_("Left as candidates ({n}), by reason:").format(n=len(result.left))),
            simple_table([_("Reason"), _("Method names"), _("Occurrences")], rows, ["slimebook-usage-left"],
                         wrap=(0,))]
