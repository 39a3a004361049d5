"""The generated source-check page: every citation, its blob, its drift since the last pin.

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

Link to it with ``{ref}`slimebook-source-check```: the label is registered in the standard domain at
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
from ..locale import _, clause_separator, fill, ngettext, source_title
from .render import EVENT, GeneratedPage, PageBatch, PageJob, interleave, make_para, make_ref, make_section, table_frame
from .usagetables import breakable_literal, scroll, wbr

__all__ = ["LABEL", "PAGENAME", "setup"]

#: Output page name (``_slimebook/source-check.html``) and the ``{ref}`` label that points at it.
PAGENAME = "_slimebook/source-check"
LABEL = "slimebook-source-check"
TITLE = _("Source check")
#: The page's styles (``static/`` beside this module), added to this page only.
CSS_FILE = "slimebook-sourcecheck.css"
_STAMP = "_slimebook/.source-check.stamp"
_CODE = tuple(Path(__file__).with_name(n) for n in ("sourcecheck.py", "render.py", "usagetables.py"))

#: Status → the word on the page (the page compares the current pin with the previous one; lazy: translated when
#: drawn).
STATUS_TEXT: dict[Status, str] = {
    Status.UNCHANGED: _("unchanged"),
    Status.MOVED: _("moved"),
    Status.CHANGED: _("changed"),
    Status.GONE: _("not in the previous pin"),
    Status.BROKEN: _("cannot compare"),
}

#: The table's columns and their shares of the width.
COLUMNS: tuple[tuple[str, int], ...] = ((_("Location"), 27), (_("Citation · current lines · blob"), 45),
                                        (_("Status"), 28))

Parts = list[nodes.Node | str]


def _code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def _strong(status: Status) -> nodes.strong:
    word = str(STATUS_TEXT[status])
    return nodes.strong(word, word)


def _intro(project: str, names: SourceNames) -> Parts:
    """The page's first paragraph; ``project`` names the upstream project (:func:`..locale.source_title`), ``names``
    the book's citation directive and role."""
    return fill(
        _("This page lists every citation of {project} in the book (the {directive} directive and the {role} inline "
          "role), the blob the build read, and its status compared with the previous pin the lock records: "
          "{unchanged} means the same text at the same lines of the previous pin; {moved}, the same text at other "
          "lines; {changed}, other text, with the diff from the previous pin to the current one below; {gone}, a "
          "path or symbol the previous pin does not have yet. The command line's {diff} and {repin} make the same "
          "comparison."),
        project=project, directive=_code(names.directive), role=_code(f"{{{names.role}}}"),
        unchanged=_strong(Status.UNCHANGED), moved=_strong(Status.MOVED), changed=_strong(Status.CHANGED),
        gone=_strong(Status.GONE), diff=_code("slimebook sources diff"), repin=_code("slimebook sources repin"))


def _register_label(app: Sphinx, env: BuildEnvironment) -> None:
    std = env.get_domain("std")
    std.anonlabels[LABEL] = (PAGENAME, "")  # type: ignore[attr-defined]
    std.labels[LABEL] = (PAGENAME, "", str(TITLE))  # type: ignore[attr-defined]


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
        return fill(_("The lock records no previous pin ({field}), so the table below lists the citations and their "
                      "blobs without comparing them. {command} records it when it moves the pin."),
                    field=_code("previous_commit"), command=_code("slimebook sources repin --write")), none
    if previous == lock.commit:
        return fill(_("The previous pin is the current pin: there is nothing to compare.")), none
    old = SourceStore(dataclasses.replace(lock, commit=previous))
    if not old.is_present():
        return fill(_("The previous pin {commit} is not in the source cache {cache}, and the build does not fetch "
                      "it, so the table below compares nothing. To compare, run {command} (it fetches both commits), "
                      "then build again."),
                    commit=_code(previous), cache=_code(str(old.root)),
                    command=_code(f"slimebook sources diff --from {previous[:9]} --to {lock.commit[:9]}")), none
    checker = DriftChecker(store, old)
    try:
        drifts: list[Drift | None] = [
            checker.check(Cited(kind=r["kind"], path=r["path"], lines=r.get("lines") or None,
                                pyobject=r.get("pyobject") or None, ident=f"{r['docname']}:{r['lineno']}"))
            for r in records
        ]
    except SourceError as exc:
        return fill(_("Cannot compare with the previous pin {commit}: {error}"), commit=_code(previous),
                    error=str(exc)), none
    finally:
        old.close()
    return fill(_("Previous pin: {commit}."), commit=_code(previous)), drifts


def _summary(records: list[CitationRecord], drifts: list[Drift | None]) -> nodes.paragraph:
    """``12 citations in all: unchanged 10, moved 2.`` (the counts only when the page compares)."""
    compared = [d for d in drifts if d is not None]
    citations = ngettext("{n} citation", "{n} citations", len(records)).format(n=len(records))
    if compared:
        counts = clause_separator().join(f"{STATUS_TEXT[s]} {n}" for s, n in summarize(compared).items() if n)
        text = _("{citations} in all: {counts}.").format(citations=citations, counts=counts)
    else:
        text = _("{citations} in all.").format(citations=citations)
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
    status = str(STATUS_TEXT[drift.status])
    word = nodes.inline(status, status, classes=["slimebook-status", f"slimebook-status-{drift.status}"])
    if drift.status is Status.MOVED and drift.new_runs:
        return [make_para(word), _note(_("at {lines} in the previous pin").format(lines=runs_label(drift.new_runs)))]
    if drift.status is Status.CHANGED:
        return [make_para(word), _note(make_ref(f"#{anchor}", _("diff")))]
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
    table, body = table_frame([name for name, _share in COLUMNS], ["slimebook-source-check", "colwidths-given"])
    for spec, (_name, share) in zip(table.findall(nodes.colspec), COLUMNS, strict=True):
        spec["colwidth"] = share
    body.extend(rows)
    return scroll(table, html=True)


def _diff_section(diffs: dict[Selection, _Diff]) -> nodes.section:
    """One subsection per changed selection: where it is cited and its diff from the previous pin."""
    section = make_section("slimebook-source-check-diffs", _("Changed citations"))
    for (path, lines, pyobject), diff in diffs.items():
        title = nodes.title()
        title.extend(nodes.Text(p) if isinstance(p, str) else p for p in _selection(path, lines, pyobject))
        sub = nodes.section(ids=[diff.anchor])
        sub += title
        sub += make_para(*fill(_("Cited at: {places}"), places=interleave(list(diff.places), clause_separator())))
        sub += nodes.literal_block(diff.text, diff.text, language="diff")
        section += sub
    return section


def _body(page: GeneratedPage, records: list[CitationRecord], sentence: Parts,
          drifts: list[Drift | None]) -> nodes.section:
    """The page's body: the introduction, the pins, the counts, the table and the diffs."""
    lock = get_store(page.app.env).lock
    section = make_section(LABEL, TITLE)
    section += make_para(*_intro(source_title(lock), source_names(page.app.config)))
    section += make_para(*fill(_("Current pin: {commit} ({name}). "), commit=_code(lock.commit), name=lock.name),
                         *sentence)
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
    job = PageJob(PAGENAME, str(TITLE), lambda page: _body(page, records, sentence, drifts), cost=len(records) / 2)
    return PageBatch([job], lambda: atomic_write(stamp_file, stamp))


def _page_styles(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if pagename == PAGENAME:
        app.add_css_file(CSS_FILE)  # on this page only (Sphinx resets page-added files after each page)


def setup(app: Sphinx) -> None:
    """Register the page (a job of the generated pages' batch), its styles and its ``{ref}`` label (``env-updated``)."""
    app.connect("env-updated", _register_label)
    app.connect(EVENT, _batch)
    app.connect("html-page-context", _page_styles)
