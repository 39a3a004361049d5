"""The generated "源码核对" (source check) page: every citation, its blob, its drift since the last pin.

The page is not a document: like ``sphinx.ext.viewcode`` it is produced in ``html-collect-pages``
from the citations :mod:`.source` records on the environment, rendered with the book's theme
(``page.html``) and never written into the source tree. Its status column compares each citation,
as written and valid at the current pin, with the ``previous_commit`` recorded in the lock
(:func:`slimebook.drift.DriftChecker` run from the current pin to the previous one). Without a
recorded previous pin, or when that commit is not in the source cache, the page says so; the build
never fetches.

Link to it with ``{ref}`源码核对 <slimebook-source-check>```: the label is registered in the
standard domain at ``env-updated``.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ..drift import Cited, Drift, DriftChecker, Status, summarize
from ..spans import runs_label
from ..store import SourceError, SourceStore
from .context import builds_pages, get_store, reading_order
from .envrecords import CitationRecord
from .envrecords import citations as env_citations

__all__ = ["LABEL", "PAGENAME", "setup"]

#: Output page name (``_slimebook/source-check.html``) and the ``{ref}`` label that points at it.
PAGENAME = "_slimebook/source-check"
LABEL = "slimebook-source-check"
TITLE = "源码核对"

#: Status → the word on the page (the page compares the current pin with the previous one).
STATUS_TEXT: dict[Status, str] = {
    Status.UNCHANGED: "未变",
    Status.MOVED: "移动",
    Status.CHANGED: "有变化",
    Status.GONE: "上一个 pin 中没有",
    Status.BROKEN: "无法比较",
}

_INTRO = (
    "本页列出书中每一处 Slime 引用（<code>slime-source</code> 指令和 <code>{slime}</code> 行内角色）、"
    "构建时读取的 blob，以及它与锁文件记录的上一个 pin 相比的状态："
    "<strong>未变</strong>是上一个 pin 的同样行号上就是同样的文字；"
    "<strong>移动</strong>是文字相同、行号不同；"
    "<strong>有变化</strong>是文字不同，下面附有从上一个 pin 到当前 pin 的 diff；"
    "<strong>上一个 pin 中没有</strong>是路径或符号在上一个 pin 里还不存在。"
    "命令行的 <code>slimebook sources diff</code> 和 <code>slimebook sources repin</code> 做的是同一种比较。"
)


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


def _compare(store: SourceStore, records: list[CitationRecord]) -> tuple[str, list[Drift | None]]:
    """A sentence about the previous pin and one drift per record (None when not compared)."""
    lock = store.lock
    previous = lock.previous_commit
    if previous is None:
        return ("锁文件没有记录上一个 pin（<code>previous_commit</code>），所以下表只列出引用和 blob，不比较状态。"
                "用 <code>slimebook sources repin --write</code> 移动 pin 时会记录它。"), [None] * len(records)
    if previous == lock.commit:
        return "上一个 pin 与当前 pin 相同，没有可比较的内容。", [None] * len(records)
    old = SourceStore(dataclasses.replace(lock, commit=previous))
    if not old.is_present():
        return (f"上一个 pin <code>{previous}</code> 不在源码缓存 <code>{html.escape(str(old.root))}</code> 中，"
                "构建不会去获取它，所以下表不比较状态。要比较，先运行 "
                f"<code>slimebook sources diff --from {previous[:9]} --to {lock.commit[:9]}</code>"
                "（它会获取两个提交），再重新构建。"), [None] * len(records)
    checker = DriftChecker(store, old)
    try:
        drifts: list[Drift | None] = [
            checker.check(Cited(kind=r["kind"], path=r["path"], lines=r.get("lines") or None,
                                pyobject=r.get("pyobject") or None, ident=f"{r['docname']}:{r['lineno']}"))
            for r in records
        ]
    except SourceError as exc:
        return f"无法与上一个 pin <code>{previous}</code> 比较：{html.escape(str(exc))}", [None] * len(records)
    finally:
        old.close()
    return f"上一个 pin：<code>{previous}</code>。", drifts


def _status_cell(drift: Drift | None, anchor: str) -> str:
    if drift is None:
        return "—"
    text = html.escape(STATUS_TEXT[drift.status])
    cls = f"slimebook-status slimebook-status-{drift.status}"
    detail = ""
    if drift.status is Status.MOVED and drift.new_runs:
        detail = f"上一个 pin 在 {runs_label(drift.new_runs)}"
    elif drift.status is Status.CHANGED:
        detail = f'<a href="#{anchor}">diff</a>'
    elif drift.note:
        detail = _breakable(drift.note)
    cell = f'<span class="{cls}">{text}</span>'
    return cell + (f"<br/><small>{detail}</small>" if detail else "")


def _breakable(text: str) -> str:
    """Escaped ``text`` with a line-break opportunity after each ``/`` (long paths in narrow columns)."""
    return html.escape(text).replace("/", "/<wbr>")


def _selection(record: CitationRecord | dict[str, Any]) -> str:
    path = f"<code>{_breakable(record['path'])}</code>"
    if record.get("pyobject"):
        return f"{path} <code>{html.escape(record['pyobject'])}</code>"
    if record.get("lines"):
        return f"{path}:{html.escape(record['lines'])}"
    return path


def _render(app: Sphinx) -> str:
    env = app.env
    store = get_store(env)
    records = _records(env)
    sentence, drifts = _compare(store, records)
    lock = store.lock
    out = [f'<section id="{LABEL}">', f"<h1>{TITLE}</h1>", f"<p>{_INTRO}</p>",
           f"<p>当前 pin：<code>{lock.commit}</code>（{html.escape(lock.name)}）。{sentence}</p>"]
    compared = [d for d in drifts if d is not None]
    if compared:
        counts = "，".join(f"{STATUS_TEXT[s]} {n}" for s, n in summarize(compared).items() if n)
        out.append(f'<p class="slimebook-source-check-summary">共 {len(records)} 处引用：{counts}。</p>')
    else:
        out.append(f'<p class="slimebook-source-check-summary">共 {len(records)} 处引用。</p>')
    out.append('<div class="table-wrapper container"><table class="docutils align-default slimebook-source-check" '
               'style="table-layout: fixed; width: 100%">')
    out.append('<colgroup><col style="width: 27%"/><col style="width: 45%"/><col style="width: 28%"/></colgroup>')
    out.append("<thead><tr><th>位置</th><th>引用 · 当前行号 · blob</th><th>状态</th></tr></thead>")
    out.append("<tbody>")
    # one diff per distinct selection, listing every place that cites it
    diffs: dict[tuple[str, str | None, str | None], tuple[str, str, list[str]]] = {}
    for record, drift in zip(records, drifts, strict=True):
        docname = record["docname"]
        uri = app.builder.get_relative_uri(PAGENAME, docname)
        where = f"{env.doc2path(docname, False)}:{record['lineno']}"
        anchor = ""
        if drift is not None and drift.status is Status.CHANGED:
            key = (record["path"], record.get("lines"), record.get("pyobject"))
            if key not in diffs:
                text = drift.diff(reverse=True)  # previous pin → current pin
                block = app.builder.highlighter.highlight_block(text, "diff")
                diffs[key] = (f"slimebook-diff-{len(diffs) + 1}", block, [])
            anchor = diffs[key][0]
            diffs[key][2].append(f'<a href="{html.escape(uri)}">{html.escape(where)}</a>')
        out.append(
            "<tr>"
            f'<td><a href="{html.escape(uri)}">{_breakable(where)}</a><br/>'
            f"<small>{html.escape(record['kind'])}</small></td>"
            f"<td>{_selection(record)}<br/><small>{runs_label(record['runs'])} · blob "
            f'<code class="slimebook-blob" title="{record["blob"]}">{record["blob"][:12]}</code></small></td>'
            f"<td>{_status_cell(drift, anchor)}</td>"
            "</tr>"
        )
    out.append("</tbody></table></div>")
    if diffs:
        out.append('<section id="slimebook-source-check-diffs"><h2>有变化的引用</h2>')
        for (path, lines, pyobject), (anchor, block, places) in diffs.items():
            what = _selection({"path": path, "lines": lines, "pyobject": pyobject})
            out.append(f'<section id="{anchor}"><h3>{what}</h3><p>引用处：{"，".join(places)}</p>'
                       f'<div class="highlight-diff notranslate">{block}</div></section>')
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def _collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    if not builds_pages(app):
        return
    yield PAGENAME, {"title": TITLE, "body": _render(app), "parents": []}, "page.html"


def setup(app: Sphinx) -> None:
    """Register the page (``html-collect-pages``) and its ``{ref}`` label (``env-updated``)."""
    app.connect("env-updated", _register_label)
    app.connect("html-collect-pages", _collect_pages)
