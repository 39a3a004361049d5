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
from ...usage import API_KINDS, Coverage, category_members, key_of, name_anchor
from ..context import builds_pages, page_stamp_base
from ..environment.scancache import get_scan, get_table
from ..gates.candidates import book_settled, load_notes_file
from ..gates.coverage import WaiverFile, book_coverage, load_waiver_file
from .render import (
    EVENT,
    GeneratedPage,
    PageBatch,
    PageJob,
    interleave,
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
    usage_nodes,
)

logger = logging.getLogger(__name__)

JSON_FILE = f"{PAGE_ROOT}/usage.json"
TSV_FILE = f"{PAGE_ROOT}/usage.tsv"
_STAMP = f"{PAGE_ROOT}/.stamp"
_CODE = tuple(Path(__file__).parents[1] / n for n in (
    "directives/usage.py", "pages/usagetables.py", "pages/render.py", "pages/usagepages.py", "gates/coverage.py",
    "gates/candidates.py")) + tuple(sorted((Path(__file__).parents[2] / "usage").glob("*.py")))  # the coverage rules

_KIND_TEXT = {
    "import": "导入", "api_call": "调用", "api_reference": "引用", "method_call": "方法调用",
    "instance_candidate": "候选", "syntax": "语法",
}
_STATUS_TEXT = {"unmapped": "未覆盖", "waived": "豁免", "taught": "已讲解"}


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
        builders[category_page(category)] = lambda page, category=category: _category(page, category, cov)
    return builders


def _overview(page: GeneratedPage, cov: Coverage, waivers: WaiverFile) -> nodes.section:
    result = get_scan(page.app.env)
    categories = len(get_table(page.app.env).categories)
    section = make_section("slimebook-usage", "用法索引")
    section += make_para(
        "用法索引列出固定提交中 Slime 使用并发 API 和 async 语法的每一处位置：扫描器（libcst）读取每个 ",
        _code(".py"), f" 文件和每个 Markdown 文件里的 Python 代码块，按 {categories} 个类别记录每一次导入、调用、引用、"
        "方法调用和 async 语法。每个位置都链接到该行的快照页（离线可读）和上游的永久链接；书中用 ",
        _code("usage-index"), " 指令引用其中一部分。")
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
    return [
        make_para("固定提交：", _code(lock.commit), f"（{lock.name}，{lock.url}，{lock.license}）"),
        make_para("扫描器版本：", _code(result.version), f"，记录模式版本 {result.schema_version}"),
        make_para(f"扫描的文件：{len(result.files)} 个（{sources['code']} 个 .py 文件，{sources['doc']} 个 Markdown "
                  f"文件，其中 {blocks} 个 Python 代码块），其中 {len(with_records)} 个文件有记录"),
        make_para(f"记录：{len(records)} 条（来自文档 {sum(r.source == 'doc' for r in records)} 条）；"
                  f"不同的 API 名称 {len(api_names)} 个，async 语法 {len(syntax_kinds)} 种"),
        make_para(f"解析失败的文件：{len(result.errors)} 个"),
    ]


def _overview_links(page: GeneratedPage, cov: Coverage) -> list[nodes.paragraph]:
    """Links to the other usage pages and the downloads."""
    return [
        make_para(make_ref(page.uri(FILES_PAGE), "按文件的索引"), "：每个文件有多少处、属于哪些类别。"),
        make_para(make_ref(page.uri(category_page("candidates")), "候选"),
                  "：类型未知的接收者上、名字像并发 API 的方法调用。"),
        make_para(make_ref(page.uri(COVERAGE_PAGE), "课程覆盖表"),
                  f"：每个 API 名称和语法由哪一课讲解或为何豁免（已讲解 {len(cov.by_status('taught'))}，"
                  f"豁免 {len(cov.by_status('waived'))}，未覆盖 {len(cov.by_status('unmapped'))}）。"),
        make_para("下载整份扫描结果：", make_ref(page.file_uri(JSON_FILE), _code("usage.json")), "、",
                  make_ref(page.file_uri(TSV_FILE), _code("usage.tsv")), "（字段说明见 JSON 的 ", _code("fields"),
                  "）。"),
    ]


def _overview_counts(page: GeneratedPage, records: Sequence[Occurrence]) -> nodes.section:
    """Records per category and kind, with totals."""
    by_cat = Counter(r.category for r in records)
    both = Counter((r.category, r.kind) for r in records)
    by_kind = Counter(r.kind for r in records)
    counts = make_section("slimebook-usage-counts", "按类别和种类计数")
    kinds = [k for k in KINDS if by_kind[k]]
    rows: list[list[nodes.Node | str]] = []
    for category in get_table(page.app.env).categories:
        rows.append([make_para(make_ref(page.uri(category_page(category)), _code(category))),
                     *[str(both[(category, k)] or "·") for k in kinds], str(by_cat[category] or "0")])
    rows.append([make_para(nodes.strong("合计", "合计")), *[str(by_kind[k]) for k in kinds], str(len(records))])
    # a kind's header may wrap between its Chinese name and its code name, and inside the code name after "_"
    headers = ["类别", *[make_para(_KIND_TEXT[k], " ", _code(k)) for k in kinds], "合计"]
    counts += simple_table(headers, rows, ["slimebook-usage-counts"])
    return counts


def _overview_errors(page: GeneratedPage, result: ScanResult) -> nodes.section:
    """The files the scanner could not read, each linked to its snapshot."""
    errors = make_section("slimebook-usage-errors", "没有扫描成功的文件")
    items = nodes.bullet_list()
    for error in result.errors:
        where = f"{error.path}:{error.line}" if error.line else error.path
        uri = page.uri(snapshot_pagename(error.path)) + (f"#L{error.line}" if error.line else "")
        items += nodes.list_item("", make_para(make_ref(uri, _code(where)), f"：{error.message}"))
    errors += items
    return errors


def _category(page: GeneratedPage, category: str, cov: Coverage) -> nodes.section:
    records = [r for r in get_scan(page.app.env).records if r.category == category]
    section = make_section(f"slimebook-usage-{category}", f"用法索引：{category}")
    table = get_table(page.app.env)
    section += make_para(table.descriptions.get(category, ""))
    members = category_members(category, table)
    if members:
        section += make_para("类别表中属于这一类的名称（前缀）：", *interleave([_code(m) for m in members]), "。")
    section += make_para("回到", make_ref(page.uri(OVERVIEW_PAGE), "用法索引"), "，或看",
                         make_ref(page.uri(COVERAGE_PAGE), "课程覆盖表"), "。")
    if not records:
        section += make_para(f"固定提交 {page.render.lock.short} 中没有这一类的出现位置。",
                             classes=["slimebook-usage-empty"])
        return section

    groups: dict[str, list] = defaultdict(list)
    for record in records:
        groups[key_of(record)].append(record)
    keys = sorted(groups)
    by_kind = Counter(r.kind for r in records)
    files = len({r.path for r in records})
    section += make_para(f"共 {len(records)} 处，{len(keys)} 个名称，分布在 {files} 个文件中（",
                         "，".join(f"{_KIND_TEXT[k]} {by_kind[k]}" for k in KINDS if by_kind[k]), "）。")
    rows_by_key = {row.key: row for row in cov.rows}
    rows: list[list[nodes.Node | str]] = []
    for key in keys:
        group = groups[key]
        kinds = {r.kind for r in group}
        rows.append([
            make_para(make_ref(f"#{name_anchor(key)}", _code(key))),
            "、".join(k for k in KINDS if k in kinds),
            str(len(group)),
            str(len({r.path for r in group})),
            page.teaching(rows_by_key.get(key), kinds),
        ])
    section += simple_table(["名称", "种类", "次数", "文件", "讲解"], rows, ["slimebook-usage-names"], wrap=(4,))
    if category == "candidates":
        section += _settled_section(page, records)

    columns = ("id", "location", "code", "scope", "kind", "provenance")
    for key in keys:
        group = groups[key]
        sub = make_section(name_anchor(key), _code(key))
        sub += make_para(f"{len(group)} 处，{len({r.path for r in group})} 个文件。")
        sub.extend(usage_nodes(group, columns, page.render, f"展开 {key} 的全部 {len(group)} 处"))
        section += sub
    return section


def _settled_section(page: GeneratedPage, records: list) -> nodes.section:
    """On the candidates page: how many candidates a lesson confirmed, how many are left and why."""
    app = page.app
    notes = load_notes_file(app)
    section = make_section("slimebook-usage-candidates-settled", "确认与留下")
    if notes.path is None or not notes.exists or notes.error is not None:
        section += make_para("没有（有效的）候选说明文件，所以这些候选既没有确认，也没有写明留下的理由。",
                         classes=["slimebook-usage-gate-off"])
        return section
    result = book_settled(app, notes)
    where = Path(notes.path).relative_to(app.confdir) if Path(notes.path).is_relative_to(app.confdir) \
        else notes.path
    groups = result.by_reason()
    section += make_para(
        f"共 {len(records)} 处候选：已确认 {len(result.confirmed)} 处，留作候选 {len(result.left)} 处"
        f"（{len(groups)} 条理由），未说明 {len(result.open)} 处。确认的每一处都写在 ", _code(str(where)),
        " 里：它实际是哪个 API、依据是什么、哪一课引用了这一行；构建时核对这一处候选确实存在、API 在类别表里、"
        "那一课的引用确实覆盖这一行。留下的候选按理由归组。已确认的候选仍然只是候选，不计入课程覆盖表。")
    rows: list[list[nodes.Node | str]] = []
    for record, conf in result.confirmed:
        where_line = f"{record.path}:{record.line}"
        rows.append([
            make_para(make_ref(f"#{record.id}", _code(where_line))),
            make_para(_code(conf.api)),
            page.lesson(conf.lesson),
            conf.evidence,
        ])
    if rows:
        section += make_para(f"已确认（{len(rows)} 处）：")
        section += simple_table(["位置", "API", "读它的课", "依据"], rows, ["slimebook-usage-confirmed"], wrap=(3,))
    rows = []
    for rule, items in groups:
        names = "、".join(sorted({r.name for r in items}))
        files = len({r.path for r in items})
        rows.append([rule.reason, make_para(_code(names)), f"{len(items)}（{files} 个文件）"])
    if rows:
        section += make_para(f"留作候选（{len(result.left)} 处），按理由：")
        section += simple_table(["理由", "方法名", "处数"], rows, ["slimebook-usage-left"], wrap=(0,))
    if result.open:
        unsettled = [make_ref(f"#{r.id}", _code(f"{r.path}:{r.line} {r.name}")) for r in result.open]
        section += make_para(nodes.strong("未说明：", "未说明："), *interleave(unsettled), "。")
    return section


def _files(page: GeneratedPage) -> nodes.section:
    result = get_scan(page.app.env)
    categories = get_table(page.app.env).categories
    per_file: dict[str, Counter[str]] = defaultdict(Counter)
    for record in result.records:
        per_file[record.path][record.category] += 1
    section = make_section("slimebook-usage-files", "用法索引：按文件")
    scanned = [f for f in result.files if f.path in per_file]
    section += make_para(f"扫描的 {len(result.files)} 个文件中有 {len(scanned)} 个有记录（其余 "
                         f"{len(result.files) - len(scanned)} 个没有）。文件名链接到它的快照页，类别链接到类别页。"
                         "回到", make_ref(page.uri(OVERVIEW_PAGE), "用法索引"), "。")
    rows: list[list[nodes.Node | str]] = []
    for scanned_file in scanned:
        counts = per_file[scanned_file.path]
        cats = [make_ref(page.uri(category_page(c)), f"{c} {counts[c]}") for c in categories if counts[c]]
        rows.append([
            make_para(make_ref(page.uri(snapshot_pagename(scanned_file.path)), _code(scanned_file.path))),
            "代码" if scanned_file.source == "code" else "文档",
            str(sum(counts.values())),
            join_para(cats, " · "),
        ])
    section += simple_table(["文件", "来源", "记录", "按类别"], rows, ["slimebook-usage-files"], wrap=(3,))
    return section


def _coverage(page: GeneratedPage, cov: Coverage, waivers: WaiverFile) -> nodes.section:
    section = make_section("slimebook-usage-coverage", "课程覆盖表")
    section += make_para(
        "本表列出扫描在固定提交中找到的每个 API 名称和每种 async 语法"
        "（只计调用、引用、方法调用和语法；导入和候选不算），以及讲解它的课（由各课的 ", _code("lesson-teaches"),
        " 声明）或豁免它的理由。未覆盖的排在最前；构建时每个未覆盖的名称、每条不再起作用的豁免都是一条警告。")
    section += _waiver_file_note(page.app, waivers)
    section += make_para(f"共 {len(cov.rows)} 个名称：已讲解 {len(cov.by_status('taught'))}，"
                         f"豁免 {len(cov.by_status('waived'))}，未覆盖 {len(cov.by_status('unmapped'))}。")
    rows: list[list[nodes.Node | str]] = []
    for row in cov.rows:
        status = _STATUS_TEXT[row.status]
        rows.append([
            make_para(nodes.strong(status, status)) if row.status == "unmapped" else status,
            make_para(make_ref(page.uri(category_page(row.category)) + f"#{name_anchor(row.key)}", _code(row.key))),
            page.teaching(row, set()),
            str(row.count) + (f"（文档 {row.doc}）" if row.doc else ""),
            make_para(make_ref(page.uri(category_page(row.category)), row.category)),
        ])
    section += simple_table(["状态", "名称", "讲解或豁免", "次数", "类别"], rows, ["slimebook-usage-coverage"],
                             wrap=(2,))
    section += _absent_section(page, cov)
    if waivers.waivers:
        section += _waivers_section(cov, waivers)
    return section


def _waiver_file_note(app: Sphinx, waivers: WaiverFile) -> nodes.paragraph:
    """The coverage page's sentence on the waiver file: where it is and what it holds, or that there is none."""
    if waivers.path is None or not waivers.exists:
        return make_para("没有豁免文件，所以构建不检查覆盖。", classes=["slimebook-usage-gate-off"])
    where = Path(waivers.path).relative_to(app.confdir) if Path(waivers.path).is_relative_to(app.confdir) \
        else waivers.path
    reasons = len({w.reason for w in waivers.waivers})
    return make_para("豁免文件：", _code(str(where)), f"，{reasons} 条理由，{len(waivers.waivers)} 个名称模式。")


def _absent_section(page: GeneratedPage, cov: Coverage) -> nodes.section:
    """The names lessons teach that Slime does not use, then the classes used only through their instances."""
    absent = make_section("slimebook-usage-absent", "课程讲解、但 Slime 没有用到的名称")
    if cov.absent:
        items = nodes.bullet_list()
        for docname, pattern in cov.absent:
            items += nodes.list_item("", make_para(_code(pattern), "：", page.lesson(docname)))
        absent += items
    else:
        absent += make_para("没有。")
    if cov.instance_only:
        absent += make_para("下面这些类的名字在 Slime 里没有直接出现，但它的实例方法被调用过，所以不算“没有用到”：")
        items = nodes.bullet_list()
        for docname, pattern, uses in cov.instance_only:
            items += nodes.list_item("", make_para(_code(pattern), f"（实例方法 {uses} 处）：", page.lesson(docname)))
        absent += items
    return absent


def _waivers_section(cov: Coverage, waivers: WaiverFile) -> nodes.section:
    """The waiver file's entries: pattern, reason, names it matches, and why it no longer applies."""
    stale = {w.pattern: why for w, why in cov.stale}
    table = make_section("slimebook-usage-waivers", "豁免条目")
    rows = [[make_para(_code(w.pattern)), w.reason, str(len(cov.waiver_hits.get(w.pattern, []))),
             "不再起作用：" + stale[w.pattern] if w.pattern in stale else "—"] for w in waivers.waivers]
    table += simple_table(["模式", "理由", "匹配的名称", "问题"], rows, ["slimebook-usage-waivers"], wrap=(1, 3))
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
    titles = {OVERVIEW_PAGE: "用法索引", FILES_PAGE: "用法索引：按文件", COVERAGE_PAGE: "课程覆盖表"}
    titles.update((category_page(c), f"用法索引：{c}") for c in get_table(app.env).categories)
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
