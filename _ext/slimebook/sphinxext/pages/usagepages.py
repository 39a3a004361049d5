"""The generated pages of the usage index, produced in ``html-collect-pages`` (like ``sphinx.ext.viewcode``).

Pages (never written into the source tree):

* ``_slimebook/usage/index``: the overview — pin, scanner version, counts per category and kind, files,
  distinct names, scan errors, and links to everything below;
* ``_slimebook/usage/category/<category>``: one per category of the book's category table (19 in the default
  table, ``candidates`` included, which is the candidates page): the category's description (from the table), its
  names with counts and lessons, then every occurrence, one section per name (id ``name-<name>``), one row per
  occurrence (id = the occurrence id);
* ``_slimebook/usage/files``: every scanned file with occurrences → counts per category → links;
* ``_slimebook/usage/coverage``: every API name and syntax kind → its lessons or its waiver, unmapped first;
* ``_slimebook/usage/usage.json`` and ``usage.tsv``: the whole scan (the scanner's own writers).

Bodies are docutils nodes rendered with ``builder.render_partial``; every link is computed relative to
the generated page itself. The pages are a batch of :mod:`slimebook.sphinxext.pages.render` (written with the other
generated pages, in
parallel in a parallel build). They are skipped when ``_slimebook/usage/.stamp`` holds the stamp of
their inputs (scan, lessons' declarations, waivers, navigation, configuration, this code) and they
exist, so an incremental build does not render them again.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from ...atomicio import atomic_write
from ...scan import ScanResult, write_json, write_tsv
from ...scan.records import KINDS, Occurrence
from ...snapshots import snapshot_pagename
from ...usage import API_KINDS, Coverage, name_anchor
from ..context import builds_pages, page_stamp_base
from ..environment.scancache import get_scan, get_table
from ..gates.candidates import book_settled, load_notes_file
from ..gates.coverage import WaiverFile, book_coverage, load_waiver_file
from ..locale import _, clause_separator, fill, ngettext, source_title
from .categorypages import KIND_TEXT, category_section
from .render import (
    EVENT,
    GeneratedPage,
    PageBatch,
    PageJob,
    join_para,
    make_para,
    make_ref,
    make_section,
    simple_table,
)
from .usagetables import (
    COVERAGE_PAGE,
    FILES_PAGE,
    OVERVIEW_PAGE,
    PAGE_ROOT,
    breakable_literal,
    category_page,
)

logger = logging.getLogger(__name__)

JSON_FILE = f"{PAGE_ROOT}/usage.json"
TSV_FILE = f"{PAGE_ROOT}/usage.tsv"
_STAMP = f"{PAGE_ROOT}/.stamp"
_CODE = tuple(Path(__file__).parents[1] / n for n in (
    "directives/usage.py", "pages/usagetables.py", "pages/render.py", "pages/usagepages.py", "pages/categorypages.py",
    "gates/coverage.py", "gates/candidates.py",
)) + tuple(sorted((Path(__file__).parents[2] / "usage").glob("*.py")))  # and the coverage rules

#: Coverage status → its word (lazy).
_STATUS_TEXT = {"unmapped": _("not covered"), "waived": _("waived"), "taught": _("taught")}


def _status_counts(cov: Coverage) -> str:
    """``taught 30, waived 5, not covered 0`` (the coverage's counts, as clauses)."""
    return clause_separator().join(f"{_STATUS_TEXT[status]} {len(cov.by_status(status))}"
                                   for status in ("taught", "waived", "unmapped"))


def _code(text: str) -> nodes.literal:
    return breakable_literal(text)


# -- pages -------------------------------------------------------------------------------------------------
def page_body(app: Sphinx, page: str, cov: Coverage, waivers: WaiverFile) -> str:
    """The body of generated usage page ``page`` (one of the overview, coverage, files or category pages): an HTML
    fragment for HTML builders, the docutils section itself for the others (:meth:`GeneratedPage.html`).

    Raises:
        KeyError: ``page`` is not a usage page.
    """
    build = _builders(app, cov, waivers).get(page)
    if build is None:
        raise KeyError(page)
    generated = GeneratedPage(app, page)
    return generated.html(build(generated))


def _builders(app: Sphinx, cov: Coverage,
              waivers: WaiverFile) -> dict[str, Callable[[GeneratedPage], nodes.section]]:
    """Page name → the builder of its body, for every usage page."""
    builders: dict[str, Callable[[GeneratedPage], nodes.section]] = {
        OVERVIEW_PAGE: lambda page: _overview(page, cov, waivers),
        FILES_PAGE: _files,
        COVERAGE_PAGE: lambda page: _coverage(page, cov, waivers),
    }
    for category in get_table(app.env).categories:
        builders[category_page(category)] = lambda page, category=category: category_section(page, category, cov)
    return builders


def _overview(page: GeneratedPage, cov: Coverage, waivers: WaiverFile) -> nodes.section:
    result = get_scan(page.app.env)
    categories = len(get_table(page.app.env).categories)
    section = make_section("slimebook-usage", _("Usage index"))
    section += make_para(*fill(
        _("The usage index lists every place at the pinned commit where {project} uses a concurrency API or async "
          "syntax: the scanner (libcst) reads every {py} file and the Python code blocks of every Markdown file, and "
          "records each import, call, reference, method call and piece of async syntax in {categories}. Each place "
          "links to the snapshot of its line (readable offline) and to its upstream permalink; the book quotes parts "
          "of the index with the {directive} directive."),
        project=source_title(page.render.lock), py=_code(".py"),
        categories=ngettext("{n} category", "{n} categories", categories).format(n=categories),
        directive=_code("usage-index")))
    section += _bullets(_overview_facts(page, result))
    section += _bullets(_overview_links(page, cov))
    section += _overview_counts(page, result.records)
    if result.errors:
        section += _overview_errors(page, result)
    return section


def _bullets(items: list[nodes.paragraph]) -> nodes.bullet_list:
    bullets = nodes.bullet_list()
    for item in items:
        bullets += nodes.list_item("", item)
    return bullets


def _overview_facts(page: GeneratedPage, result: ScanResult) -> list[nodes.paragraph]:
    """The pin, the scanner, and what the scan read and found."""
    lock, records = page.render.lock, result.records
    sources = Counter(f.source for f in result.files)
    blocks = sum(f.blocks or 0 for f in result.files)
    api_names = {r.name for r in records if r.kind in API_KINDS and r.kind != "syntax"}
    syntax_kinds = {r.name for r in records if r.kind == "syntax"}
    with_records = {r.path for r in records}
    files_scanned = _("Files scanned: {total} ({code}, {docs} with {blocks} among them); {recorded} with records")
    return [
        make_para(*fill(_("Pinned commit: {commit} ({name}, {url}, {license})"), commit=_code(lock.commit),
                        name=lock.name, url=lock.url, license=lock.license)),
        make_para(*fill(_("Scanner version: {version}, record schema version {schema}"),
                        version=_code(result.version), schema=result.schema_version)),
        make_para(files_scanned.format(
            total=len(result.files),
            code=ngettext("{n} .py file", "{n} .py files", sources["code"]).format(n=sources["code"]),
            docs=ngettext("{n} Markdown file", "{n} Markdown files", sources["doc"]).format(n=sources["doc"]),
            blocks=ngettext("{n} Python code block", "{n} Python code blocks", blocks).format(n=blocks),
            recorded=len(with_records))),
        make_para(_("Records: {records} ({docs} from documents); distinct API names: {names}, kinds of async "
                    "syntax: {syntax}").format(records=len(records), docs=sum(r.source == "doc" for r in records),
                                               names=len(api_names), syntax=len(syntax_kinds))),
        make_para(_("Files that failed to parse: {n}").format(n=len(result.errors))),
    ]


def _overview_links(page: GeneratedPage, cov: Coverage) -> list[nodes.paragraph]:
    """Links to the other usage pages and the downloads."""
    return [
        make_para(*fill(_("{link}: how many occurrences each file has, in which categories."),
                        link=make_ref(page.uri(FILES_PAGE), _("Index by file")))),
        make_para(*fill(_("{link}: method calls on receivers of unknown type whose names look like a concurrency "
                          "API's."), link=make_ref(page.uri(category_page("candidates")), _("Candidates")))),
        make_para(*fill(_("{link}: which lesson teaches each API name and syntax, or why it is waived ({counts})."),
                        link=make_ref(page.uri(COVERAGE_PAGE), _("Coverage table")), counts=_status_counts(cov))),
        make_para(*fill(_("Download the whole scan: {json}, {tsv} (the JSON's {fields} describes the fields)."),
                        json=make_ref(page.file_uri(JSON_FILE), _code("usage.json")),
                        tsv=make_ref(page.file_uri(TSV_FILE), _code("usage.tsv")), fields=_code("fields"))),
    ]


def _overview_counts(page: GeneratedPage, records: Sequence[Occurrence]) -> nodes.section:
    """Records per category and kind, with totals."""
    by_cat = Counter(r.category for r in records)
    both = Counter((r.category, r.kind) for r in records)
    by_kind = Counter(r.kind for r in records)
    counts = make_section("slimebook-usage-counts", _("Counts by category and kind"))
    kinds = [k for k in KINDS if by_kind[k]]
    rows: list[list[nodes.Node | str]] = []
    for category in get_table(page.app.env).categories:
        rows.append([make_para(make_ref(page.uri(category_page(category)), _code(category))),
                     *[str(both[(category, k)] or "·") for k in kinds], str(by_cat[category] or "0")])
    total = _("Total")
    rows.append([make_para(nodes.strong(total, total)), *[str(by_kind[k]) for k in kinds], str(len(records))])
    # a kind's header may wrap between its word and its code name, and inside the code name after "_"
    headers = [_("Category"), *[make_para(KIND_TEXT[k], " ", _code(k)) for k in kinds], total]
    counts += simple_table(headers, rows, ["slimebook-usage-counts"])
    return counts


def _overview_errors(page: GeneratedPage, result: ScanResult) -> nodes.section:
    """The files the scanner could not read, each linked to its snapshot."""
    errors = make_section("slimebook-usage-errors", _("Files the scanner could not read"))
    items = nodes.bullet_list()
    for error in result.errors:
        where = f"{error.path}:{error.line}" if error.line else error.path
        uri = page.uri(snapshot_pagename(error.path)) + (f"#L{error.line}" if error.line else "")
        items += nodes.list_item("", make_para(*fill(_("{file}: {message}"), file=make_ref(uri, _code(where)),
                                                     message=error.message)))
    errors += items
    return errors


def _files(page: GeneratedPage) -> nodes.section:
    result = get_scan(page.app.env)
    categories = get_table(page.app.env).categories
    per_file: dict[str, Counter[str]] = defaultdict(Counter)
    for record in result.records:
        per_file[record.path][record.category] += 1
    section = make_section("slimebook-usage-files", _("Usage index: by file"))
    scanned = [f for f in result.files if f.path in per_file]
    section += make_para(*fill(
        _("{recorded} of the {total} files scanned hold records (the other {rest} do not). A file's name links to "
          "its snapshot, a category to its page. Back to the {overview}."),
        recorded=len(scanned), total=len(result.files), rest=len(result.files) - len(scanned),
        overview=make_ref(page.uri(OVERVIEW_PAGE), _("Usage index"))))
    rows: list[list[nodes.Node | str]] = []
    for scanned_file in scanned:
        counts = per_file[scanned_file.path]
        cats = [make_ref(page.uri(category_page(c)), f"{c} {counts[c]}") for c in categories if counts[c]]
        rows.append([
            make_para(make_ref(page.uri(snapshot_pagename(scanned_file.path)), _code(scanned_file.path))),
            _("code") if scanned_file.source == "code" else _("docs"),
            str(sum(counts.values())),
            join_para(cats, " · "),
        ])
    section += simple_table([_("File"), _("Source"), _("Records"), _("By category")], rows, ["slimebook-usage-files"],
                            wrap=(3,))
    return section


def _coverage(page: GeneratedPage, cov: Coverage, waivers: WaiverFile) -> nodes.section:
    section = make_section("slimebook-usage-coverage", _("Coverage table"))
    section += make_para(*fill(
        _("This table lists every API name and every kind of async syntax the scan found at the pinned commit "
          "(calls, references, method calls and syntax only; imports and candidates do not count), with the lessons "
          "that teach it (each lesson declares them with {directive}) or the reason it is waived. Names not covered "
          "come first; at build time each name not covered and each waiver that no longer applies is a warning."),
        directive=_code("lesson-teaches")))
    section += _waiver_file_note(page.app, waivers)
    section += make_para(_("{names} in all: {counts}.").format(
        names=ngettext("{n} name", "{n} names", len(cov.rows)).format(n=len(cov.rows)), counts=_status_counts(cov)))
    rows: list[list[nodes.Node | str]] = []
    for row in cov.rows:
        status = str(_STATUS_TEXT[row.status])
        rows.append([
            make_para(nodes.strong(status, status)) if row.status == "unmapped" else status,
            make_para(make_ref(page.uri(category_page(row.category)) + f"#{name_anchor(row.key)}", _code(row.key))),
            page.teaching(row, set()),
            str(row.count) + (_(" (docs {n})").format(n=row.doc) if row.doc else ""),
            make_para(make_ref(page.uri(category_page(row.category)), row.category)),
        ])
    section += simple_table([_("Status"), _("Name"), _("Taught by or waived"), _("Count"), _("Category")], rows,
                            ["slimebook-usage-coverage"], wrap=(2,))
    section += _absent_section(page, cov)
    if waivers.waivers:
        section += _waivers_section(cov, waivers)
    return section


def _waiver_file_note(app: Sphinx, waivers: WaiverFile) -> nodes.paragraph:
    """The coverage page's sentence on the waiver file: where it is and what it holds, or that there is none."""
    if waivers.path is None or not waivers.exists:
        return make_para(_("There is no waiver file, so the build does not check the coverage."),
                         classes=["slimebook-usage-gate-off"])
    where = Path(waivers.path).relative_to(app.confdir) if Path(waivers.path).is_relative_to(app.confdir) \
        else waivers.path
    reasons = len({w.reason for w in waivers.waivers})
    return make_para(*fill(_("Waiver file: {file}, {reasons}, {patterns}."), file=_code(str(where)),
                           reasons=ngettext("{n} reason", "{n} reasons", reasons).format(n=reasons),
                           patterns=ngettext("{n} name pattern", "{n} name patterns", len(waivers.waivers)).format(
                               n=len(waivers.waivers))))


def _absent_section(page: GeneratedPage, cov: Coverage) -> nodes.section:
    """The names lessons teach that the upstream project does not use, then the classes used only through their
    instances."""
    project = source_title(page.render.lock)
    absent = make_section("slimebook-usage-absent",
                          _("Names the lessons teach that {project} does not use").format(project=project))
    if cov.absent:
        items = nodes.bullet_list()
        for docname, pattern in cov.absent:
            items += nodes.list_item("", make_para(_code(pattern), _(": "), page.lesson(docname)))
        absent += items
    else:
        absent += make_para(_("None."))
    if cov.instance_only:
        absent += make_para(_("The names of these classes do not appear in {project}, but methods of their instances "
                              "are called, so they count as used:").format(project=project))
        items = nodes.bullet_list()
        for docname, pattern, uses in cov.instance_only:
            items += nodes.list_item("", make_para(*fill(
                ngettext("{name} ({n} use of an instance method): {lesson}",
                         "{name} ({n} uses of instance methods): {lesson}", uses),
                name=_code(pattern), n=uses, lesson=page.lesson(docname))))
        absent += items
    return absent


def _waivers_section(cov: Coverage, waivers: WaiverFile) -> nodes.section:
    """The waiver file's entries: pattern, reason, names it matches, and why it no longer applies."""
    stale = {w.pattern: why for w, why in cov.stale}
    table = make_section("slimebook-usage-waivers", _("Waivers"))
    rows = [[make_para(_code(w.pattern)), w.reason, str(len(cov.waiver_hits.get(w.pattern, []))),
             _("No longer applies: {why}").format(why=stale[w.pattern]) if w.pattern in stale else "—"]
            for w in waivers.waivers]
    table += simple_table([_("Pattern"), _("Reason"), _("Matching names"), _("Problem")], rows,
                          ["slimebook-usage-waivers"], wrap=(1, 3))
    return table


# -- collection --------------------------------------------------------------------------------------------
def _pages(app: Sphinx) -> list[str]:
    return [OVERVIEW_PAGE, FILES_PAGE, COVERAGE_PAGE, *(category_page(c) for c in get_table(app.env).categories)]


def _stamp(app: Sphinx, waivers: WaiverFile) -> str:
    env = app.env
    result = get_scan(env)
    waiver_text = Path(waivers.path).read_text(encoding="utf-8") if waivers.exists and waivers.path else ""
    payload = json.dumps([
        page_stamp_base(app), result.version, result.commit,
        sorted((d, list(n)) for d, n in env.__dict__.get("slimebook_teaches", {}).items()),
        waiver_text, str(waivers.path), app.config.slimebook_usage_collapse, _settled_stamp(app),
        get_table(env).descriptions,
        [hashlib.sha256(p.read_bytes()).hexdigest() for p in _CODE],
    ], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _settled_stamp(app: Sphinx) -> list:
    """What the candidates page shows of the notes: which candidate is settled how (and the file's text)."""
    notes = load_notes_file(app)
    if notes.path is None or not notes.exists or notes.error is not None:
        return [str(notes.path), notes.text]
    result = book_settled(app, notes)
    return [notes.text, [r.id for r, _ in result.confirmed], [(r.id, rule.at) for r, rule in result.left]]


def _write_downloads(app: Sphinx) -> None:
    result = get_scan(app.env)
    for name, writer in ((JSON_FILE, write_json), (TSV_FILE, write_tsv)):
        buffer = io.StringIO()
        writer(result, buffer)
        atomic_write(Path(app.outdir, name), buffer.getvalue())


#: Page name → title, for every usage page.
def _titles(app: Sphinx) -> dict[str, str]:
    titles = {OVERVIEW_PAGE: _("Usage index"), FILES_PAGE: _("Usage index: by file"),
              COVERAGE_PAGE: _("Coverage table")}
    titles.update((category_page(c), _("Usage index: {category}").format(category=c))
                  for c in get_table(app.env).categories)
    return titles


def _batch(app: Sphinx) -> PageBatch | None:
    """``slimebook-generated-pages``: the usage pages (see the module docstring), unless their stamp is current.
    The downloads are written here; the stamp when every page of the build was written."""
    if not builds_pages(app):
        return None
    waivers = load_waiver_file(app)
    stamp = _stamp(app, waivers)
    stamp_file = Path(app.outdir, _STAMP)
    outputs = [Path(app.builder.get_outfilename(p)) for p in _pages(app)]
    outputs += [Path(app.outdir, JSON_FILE), Path(app.outdir, TSV_FILE)]
    try:
        current = stamp_file.read_text(encoding="utf-8") == stamp
    except OSError:
        current = False
    if current and all(p.exists() for p in outputs):
        return None
    _write_downloads(app)
    cov = book_coverage(app, waivers)
    builders = _builders(app, cov, waivers)
    titles = _titles(app)
    records = get_scan(app.env).records
    rows = Counter(category_page(r.category) for r in records)  # a page's cost: its table rows
    rows.update({FILES_PAGE: len({r.path for r in records}), COVERAGE_PAGE: len(cov.rows)})
    jobs = [PageJob(page, titles[page], builders[page], cost=rows[page] + 1) for page in _pages(app)]
    return PageBatch(jobs, lambda: atomic_write(stamp_file, stamp))


#: Styles of usage tables (documents and generated pages): a static file, ``static/`` beside this module.
CSS_FILE = "slimebook-usage.css"


def setup(app: Sphinx) -> None:
    """Register the page collector and the table styles."""
    app.add_css_file(CSS_FILE)  # shipped in static/, which slimebook.sphinxext.output.reader adds to html_static_path
    app.connect(EVENT, _batch)


def published_page_anchors(app: Sphinx) -> Iterator[tuple[str, str, str]]:
    """``slimebook-page-anchors``: every occurrence id, on the page of its category (its row's own id)."""
    for record in get_scan(app.env).records:
        yield category_page(record.category), "occurrence", record.id
