"""The generated "源码核对" (source check) page: every citation, its blob, its drift since the last pin.

The page is not a document: like ``sphinx.ext.viewcode`` it is produced in ``html-collect-pages`` (one job of the
generated pages' batch, :mod:`slimebook.sphinxext.pages.render`) from the citations
:mod:`slimebook.sphinxext.directives.source` records on the environment; its body is
docutils nodes rendered through the builder (:class:`~slimebook.sphinxext.pages.render.GeneratedPage`) into the book's
theme (``page.html``),
never written into the source tree. Its styles are ``static/slimebook-sourcecheck.css``, added to this page alone.
The page is written again only when what it shows changes (``_slimebook/.source-check.stamp`` holds a digest of its
rows, the comparison, the navigation and configuration, and this code), as the usage pages are. Its status column
compares each citation, as written and valid at the current pin, with the ``previous_commit`` recorded in the lock
(:func:`slimebook.drift.DriftChecker` run from the current pin to the previous one). Without a recorded previous
pin, or when that commit is not in the source cache, the page says so; the build never fetches.

Link to it with ``{ref}`源码核对 <slimebook-source-check>```: the label is registered in the standard domain at
``env-updated``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ...atomicio import atomic_write
from ...drift import Cited, Drift, DriftChecker, Status, summarize
from ...names import SourceNames
from ...spans import runs_label
from ...store import SourceError, SourceStore
from ..context import builds_pages, get_store, page_stamp_base, reading_order, source_names
from ..environment.envrecords import CitationRecord
from ..environment.envrecords import citations as env_citations
from ..gates.anchors import moved_ids_script
from .render import EVENT, GeneratedPage, PageBatch, PageJob, interleave, make_para, make_ref, make_section, table_frame
from .usagetables import breakable_literal, scroll, wbr

__all__ = ["LABEL", "PAGENAME", "setup"]

#: Output page name (``_slimebook/source-check.html``) and the ``{ref}`` label that points at it.
PAGENAME = "_slimebook/source-check"
LABEL = "slimebook-source-check"
TITLE = "源码核对"
#: The page's styles (``static/`` beside this module), added to this page only.
CSS_FILE = "slimebook-sourcecheck.css"
_STAMP = "_slimebook/.source-check.stamp"
_CODE = tuple(Path(__file__).with_name(n) for n in ("sourcecheck.py", "render.py", "usagetables.py"))

#: Status → the word on the page (the page compares the current pin with the previous one).
STATUS_TEXT: dict[Status, str] = {
    Status.UNCHANGED: "未变",
    Status.MOVED: "移动",
    Status.CHANGED: "有变化",
    Status.GONE: "上一个 pin 中没有",
    Status.BROKEN: "无法比较",
}

#: The table's columns and their shares of the width.
COLUMNS: tuple[tuple[str, int], ...] = (("位置", 27), ("引用 · 当前行号 · blob", 45), ("状态", 28))

Parts = list[nodes.Node | str]


def _code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def _intro(names: SourceNames) -> Parts:
    """The page's first paragraph; it names the book's citation directive and role (``names``)."""
    return [
        "本页列出书中每一处 Slime 引用（", _code(names.directive), " 指令和 ", _code(f"{{{names.role}}}"),
        " 行内角色）、"
        "构建时读取的 blob，以及它与锁文件记录的上一个 pin 相比的状态：",
        nodes.strong("未变", "未变"), "是上一个 pin 的同样行号上就是同样的文字；",
        nodes.strong("移动", "移动"), "是文字相同、行号不同；",
        nodes.strong("有变化", "有变化"), "是文字不同，下面附有从上一个 pin 到当前 pin 的 diff；",
        nodes.strong("上一个 pin 中没有", "上一个 pin 中没有"), "是路径或符号在上一个 pin 里还不存在。"
        "命令行的 ", _code("slimebook sources diff"), " 和 ", _code("slimebook sources repin"), " 做的是同一种比较。",
    ]


def _register_label(app: Sphinx, env: BuildEnvironment) -> None:
    std = env.get_domain("std")
    std.anonlabels[LABEL] = (PAGENAME, "")  # type: ignore[attr-defined]
    std.labels[LABEL] = (PAGENAME, "", TITLE)  # type: ignore[attr-defined]


def _records(env: BuildEnvironment) -> list[CitationRecord]:
    """Every recorded citation, in reading order (documents outside the toctrees last), then by line."""
    citations = env_citations(env)
    records = [r for docname in citations if docname in env.all_docs for r in citations[docname]]
    order = {docname: n for n, docname in enumerate(reading_order(env))}
    return sorted(records, key=lambda r: (order.get(r["docname"], len(order)), r["docname"], r["lineno"]))


# -- the comparison with the previous pin ---------------------------------------------------------------------
def _compare(store: SourceStore, records: list[CitationRecord]) -> tuple[Parts, list[Drift | None]]:
    """A sentence about the previous pin and one drift per record (None when not compared)."""
    lock = store.lock
    previous = lock.previous_commit
    none: list[Drift | None] = [None] * len(records)
    if previous is None:
        return ["锁文件没有记录上一个 pin（", _code("previous_commit"), "），所以下表只列出引用和 blob，不比较状态。"
                "用 ", _code("slimebook sources repin --write"), " 移动 pin 时会记录它。"], none
    if previous == lock.commit:
        return ["上一个 pin 与当前 pin 相同，没有可比较的内容。"], none
    old = SourceStore(dataclasses.replace(lock, commit=previous))
    if not old.is_present():
        return ["上一个 pin ", _code(previous), " 不在源码缓存 ", _code(str(old.root)), " 中，"
                "构建不会去获取它，所以下表不比较状态。要比较，先运行 ",
                _code(f"slimebook sources diff --from {previous[:9]} --to {lock.commit[:9]}"),
                "（它会获取两个提交），再重新构建。"], none
    checker = DriftChecker(store, old)
    try:
        drifts: list[Drift | None] = [
            checker.check(Cited(kind=r["kind"], path=r["path"], lines=r.get("lines") or None,
                                pyobject=r.get("pyobject") or None, ident=f"{r['docname']}:{r['lineno']}"))
            for r in records
        ]
    except SourceError as exc:
        return ["无法与上一个 pin ", _code(previous), f" 比较：{exc}"], none
    finally:
        old.close()
    return ["上一个 pin：", _code(previous), "。"], drifts


def _summary(records: list[CitationRecord], drifts: list[Drift | None]) -> nodes.paragraph:
    """``共 N 处引用：未变 a，移动 b…。`` (the counts only when the page compares)."""
    compared = [d for d in drifts if d is not None]
    counts = "，".join(f"{STATUS_TEXT[s]} {n}" for s, n in summarize(compared).items() if n) if compared else ""
    text = f"共 {len(records)} 处引用：{counts}。" if compared else f"共 {len(records)} 处引用。"
    return make_para(text, classes=["slimebook-source-check-summary"])


# -- cells ----------------------------------------------------------------------------------------------------
_AFTER_SLASH = re.compile(r"(?<=/)(?=.)")


def _breakable(text: str) -> Parts:
    """``text`` with a line-break opportunity after each ``/`` (long paths in narrow columns)."""
    parts: Parts = []
    for n, part in enumerate(_AFTER_SLASH.split(text)):
        parts += [wbr(), part] if n else [part]
    return parts


def _note(*parts: nodes.Node | str) -> nodes.paragraph:
    """The small second line of a cell."""
    return make_para(*parts, classes=["slimebook-source-check-note"])


def _selection(path: str, lines: str | None, pyobject: str | None) -> Parts:
    """``path symbol`` or ``path:lines`` or ``path`` (the citation as written)."""
    if pyobject:
        return [breakable_literal(path), " ", _code(pyobject)]
    if lines:
        return [breakable_literal(path), f":{lines}"]
    return [breakable_literal(path)]


def _status_cell(drift: Drift | None, anchor: str) -> list[nodes.Node]:
    """The status word, and below it where a moved citation was, a link to a change's diff, or the drift's note."""
    if drift is None:
        return [make_para("—")]
    word = nodes.inline(STATUS_TEXT[drift.status], STATUS_TEXT[drift.status],
                        classes=["slimebook-status", f"slimebook-status-{drift.status}"])
    if drift.status is Status.MOVED and drift.new_runs:
        return [make_para(word), _note(f"上一个 pin 在 {runs_label(drift.new_runs)}")]
    if drift.status is Status.CHANGED:
        return [make_para(word), _note(make_ref(f"#{anchor}", "diff"))]
    if drift.note:
        return [make_para(word), _note(*_breakable(drift.note))]
    return [make_para(word)]


def _entry(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    entry.extend(children)
    return entry


# -- the page ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class _Diff:
    """One changed selection: its anchor on the page, the diff text, the links to every place citing it."""

    anchor: str
    text: str
    places: list[nodes.reference] = dataclasses.field(default_factory=list)


#: A cited selection: ``(path, lines, pyobject)`` as written.
Selection = tuple[str, str | None, str | None]


def _add_diff(diffs: dict[Selection, _Diff], record: CitationRecord, drift: Drift, place: nodes.reference) -> str:
    """Record ``place`` as citing the changed selection of ``record`` (one diff per selection); its anchor."""
    key = (record["path"], record.get("lines"), record.get("pyobject"))
    if key not in diffs:
        diffs[key] = _Diff(f"slimebook-diff-{len(diffs) + 1}", drift.diff(reverse=True))  # previous → current
    diffs[key].places.append(place)
    return diffs[key].anchor


def _row(page: GeneratedPage, record: CitationRecord, drift: Drift | None, diffs: dict[Selection, _Diff]) -> nodes.row:
    """The table row of ``record``; a changed citation's diff is added to ``diffs``."""
    docname = record["docname"]
    where = f"{page.app.env.doc2path(docname, False)}:{record['lineno']}"
    anchor = ""
    if drift is not None and drift.status is Status.CHANGED:
        anchor = _add_diff(diffs, record, drift, make_ref(page.uri(docname), where))
    blob = record["blob"]
    row = nodes.row()
    row += _entry(make_para(make_ref(page.uri(docname), *_breakable(where))), _note(record["kind"]))
    row += _entry(make_para(*_selection(record["path"], record.get("lines"), record.get("pyobject"))),
                  _note(f"{runs_label(record['runs'])} · blob ",
                        nodes.literal("", "", nodes.abbreviation(blob[:12], blob[:12], explanation=blob,
                                                                 classes=["slimebook-blob"]))))
    row += _entry(*_status_cell(drift, anchor))
    return row


def _table(rows: list[nodes.row]) -> nodes.Element:
    table, body = table_frame([name for name, _ in COLUMNS], ["slimebook-source-check", "colwidths-given"])
    for spec, (_, share) in zip(table.findall(nodes.colspec), COLUMNS, strict=True):
        spec["colwidth"] = share
    body.extend(rows)
    return scroll(table, html=True)


def _diff_section(diffs: dict[Selection, _Diff]) -> nodes.section:
    """One subsection per changed selection: where it is cited and its diff from the previous pin."""
    section = make_section("slimebook-source-check-diffs", "有变化的引用")
    for (path, lines, pyobject), diff in diffs.items():
        title = nodes.title()
        title.extend(nodes.Text(p) if isinstance(p, str) else p for p in _selection(path, lines, pyobject))
        sub = nodes.section(ids=[diff.anchor])
        sub += title
        sub += make_para("引用处：", *interleave(list(diff.places), "，"))
        sub += nodes.literal_block(diff.text, diff.text, language="diff")
        section += sub
    return section


def _body(page: GeneratedPage, records: list[CitationRecord], sentence: Parts,
          drifts: list[Drift | None]) -> nodes.section:
    """The page's body: the introduction, the pins, the counts, the table and the diffs."""
    lock = get_store(page.app.env).lock
    section = make_section(LABEL, TITLE)
    section += make_para(*_intro(source_names(page.app.config)))
    section += make_para("当前 pin：", _code(lock.commit), f"（{lock.name}）。", *sentence)
    section += _summary(records, drifts)
    diffs: dict[Selection, _Diff] = {}
    section += _table([_row(page, record, drift, diffs) for record, drift in zip(records, drifts, strict=True)])
    if diffs:
        section += _diff_section(diffs)
    return section


def _stamp(app: Sphinx, records: list[CitationRecord], sentence: Parts, drifts: list[Drift | None]) -> str:
    """A digest of what the page shows: the rows, the comparison with the previous pin, the script of its moved
    ids, what every generated page depends on (:func:`.context.page_stamp_base`) and the code that draws it."""
    shown = [None if d is None else [str(d.status), d.new_runs, d.note,
                                     d.diff(reverse=True) if d.status is Status.CHANGED else ""] for d in drifts]
    payload = json.dumps([
        page_stamp_base(app), source_names(app.config).source, [dict(r) for r in records], shown,
        "".join(p if isinstance(p, str) else p.astext() for p in sentence), moved_ids_script(app, PAGENAME),
        [hashlib.sha256(p.read_bytes()).hexdigest() for p in _CODE],
    ], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _batch(app: Sphinx) -> PageBatch | None:
    """``slimebook-generated-pages``: the page as one job of the batch (written beside the other generated pages,
    in a worker with ``-j N``), unless it exists and its stamp is current; the stamp is written when the batch is
    done."""
    if not builds_pages(app):
        return None
    records = _records(app.env)
    sentence, drifts = _compare(get_store(app.env), records)
    stamp = _stamp(app, records, sentence, drifts)
    stamp_file = Path(app.outdir, _STAMP)
    try:
        current = stamp_file.read_text(encoding="utf-8") == stamp
    except OSError:
        current = False
    if current and Path(app.builder.get_outfilename(PAGENAME)).exists():
        return None
    # a record costs about half a usage-table row (measured: 1,436 records 1.08 s, 1,579 usage rows 2.38 s)
    job = PageJob(PAGENAME, TITLE, lambda page: _body(page, records, sentence, drifts), cost=len(records) / 2)
    return PageBatch([job], lambda: atomic_write(stamp_file, stamp))


def _page_styles(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if pagename == PAGENAME:
        app.add_css_file(CSS_FILE)  # on this page only (Sphinx resets page-added files after each page)


def setup(app: Sphinx) -> None:
    """Register the page (a job of the generated pages' batch), its styles and its ``{ref}`` label (``env-updated``)."""
    app.connect("env-updated", _register_label)
    app.connect(EVENT, _batch)
    app.connect("html-page-context", _page_styles)
