"""Generated pages as docutils nodes, rendered through the builder: the one way the book makes a page.

A page generator builds its body from the small node builders here and the usage tables of
:mod:`slimebook.sphinxext.pages.usagetables`; the body is rendered with ``builder.render_partial``, with every link
relative to the page itself (the way ``sphinx.ext.viewcode`` renders its pages from the theme). Two ways to hand a
page to the builder:

* **A batch** (the snapshot, usage and repository-map pages): the generator answers the event
  ``slimebook-generated-pages(app) -> PageBatch | None`` with one :class:`PageJob` per page that is missing or
  stale. :func:`write_pages` writes every job of the build in ``html-collect-pages``, through Sphinx's
  ``status_iterator`` like the chapters, one by one; an accelerator may answer ``slimebook-write-pages`` and write
  them in parallel instead (:mod:`slimebook.sphinxext.accelerate.pagewriting`). A job builds its body where it is
  rendered (perhaps a forked process); what must happen in the main process (warnings, stamps) happens in its
  ``failed`` callback and in the batch's ``done``.
* **One page from** ``html-collect-pages``: ``(pagename, {"title": …, "body": page.html(body)}, "page.html")``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import NoUri
from sphinx.util import logging
from sphinx.util.display import status_iterator
from sphinx.util.osutil import relative_uri

from ...usage import CoverageRow
from ..context import get_store
from ..gates.anchors import moved_ids_script
from ..locale import _, list_separator
from .usagetables import Render, scroll

__all__ = [
    "EVENT", "WRITE_EVENT", "GeneratedPage", "PageBatch", "PageJob", "field", "interleave", "join_para", "make_para",
    "make_ref", "make_section", "report_failures", "setup", "simple_table", "table_frame", "write_chunk",
    "write_pages",
]

logger = logging.getLogger(__name__)

#: The event a batch generator answers: ``slimebook-generated-pages(app) -> PageBatch | None``.
EVENT = "slimebook-generated-pages"
#: The event a page writer answers: ``slimebook-write-pages(app, jobs, summary) -> True | None`` (True: written).
WRITE_EVENT = "slimebook-write-pages"


# -- small node builders (every generated page is built from these) ------------------------------------------
def _node(part: nodes.Node | str) -> nodes.Node:
    """``part`` itself, or a text node of it (a string, or a lazy translated string of :mod:`..locale`)."""
    return part if isinstance(part, nodes.Node) else nodes.Text(str(part))


def make_para(*parts: nodes.Node | str, classes: list[str] | None = None) -> nodes.paragraph:
    """A paragraph of ``parts`` (strings become text nodes)."""
    para = nodes.paragraph(classes=classes or [])
    para.extend(_node(p) for p in parts)
    return para


def make_ref(uri: str, *children: nodes.Node | str, title: str = "") -> nodes.reference:
    """A link to ``uri`` (internal unless it starts with ``http:``/``https:``) holding ``children``."""
    ref = nodes.reference("", "", refuri=uri, internal=not uri.startswith(("http:", "https:")))
    if title:
        ref["reftitle"] = title
    ref.extend(_node(c) for c in children)
    return ref


def make_section(ids: str, title: str | nodes.Node) -> nodes.section:
    """A section with id ``ids`` and ``title``."""
    section = nodes.section(ids=[ids])
    section += nodes.title("", "", _node(title))
    return section


def table_frame(headers: list[str | nodes.paragraph], classes: list[str]) -> tuple[nodes.table, nodes.tbody]:
    """A table with ``classes``, one header row (a string header becomes a paragraph) and an empty body.

    Returns:
        ``(table, tbody)``: fill ``tbody`` with ``row`` nodes of ``len(headers)`` entries.
    """
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _header in headers:
        group += nodes.colspec(colwidth=10)
    head = nodes.thead()
    row = nodes.row()
    for header in headers:
        row += nodes.entry("", header if isinstance(header, nodes.paragraph) else make_para(header))
    head += row
    group += head
    body = nodes.tbody()
    group += body
    return table, body


def field(label: str, body: list[nodes.Node], messages: list[nodes.system_message]) -> nodes.field:
    """A field ``label: body`` of a field list, the parser's ``messages`` after the body."""
    item = nodes.field()
    label = str(label)
    item += nodes.field_name(label, label)
    para = nodes.paragraph()
    para.extend(body)
    item += nodes.field_body("", para, *messages)
    return item


def simple_table(headers: list[str | nodes.paragraph], rows: list[list[nodes.Node | str]], classes: list[str],
                  wrap: tuple[int, ...] = ()) -> nodes.Element:
    """A table whose cells wrap (see static/slimebook-usage.css); cells of the columns ``wrap`` (indexes) also get the
    class ``slimebook-wrap``."""
    table, body = table_frame(headers, ["colwidths-auto", "slimebook-usage-simple", *classes])
    for cells in rows:
        row = nodes.row()
        for index, cell in enumerate(cells):
            row += nodes.entry("", cell if isinstance(cell, nodes.Element) and not isinstance(cell, nodes.Inline)
                               else make_para(cell), classes=["slimebook-wrap"] if index in wrap else [])
        body += row
    return scroll(table, html=True)


def join_para(items: list[nodes.Node], sep: str | None = None) -> nodes.paragraph:
    """One paragraph of ``items`` separated by ``sep`` (default: the language's list separator)."""
    sep = list_separator() if sep is None else sep
    para = nodes.paragraph()
    for n, item in enumerate(items):
        if n:
            para += nodes.Text(sep)
        para += item
    return para


# -- the page context --------------------------------------------------------------------------------------
class GeneratedPage:
    """One generated page being built: its name, link helpers, and the ids it already holds.

    Args:
        app: the Sphinx application (its builder renders the page and resolves URIs).
        pagename: the page's name in the output (``_slimebook/usage/index``); links are relative to it.

    :meth:`html` renders a docutils body through the builder (``render_partial``), the one way a generated
    page becomes HTML; the page is then handed to ``html-collect-pages`` with ``page.html``.
    """

    def __init__(self, app: Sphinx, pagename: str) -> None:
        self.app = app
        self.pagename = pagename
        self.ids: set[str] = set()
        self.render = Render(get_store(app.env).lock, self.uri, self._claim, app.config.slimebook_usage_collapse)

    def uri(self, target: str) -> str:
        """The URI of page ``target`` relative to this page; ``""`` for a page this builder does not make (the
        snapshot pages, in the PDF's usage appendix: :mod:`slimebook.sphinxext.pages.usageappendix`)."""
        try:
            return self.app.builder.get_relative_uri(self.pagename, target)
        except NoUri:
            return ""

    def file_uri(self, path: str) -> str:
        """The URI of an output file ``path`` (a download) relative to this page."""
        return relative_uri(self.app.builder.get_target_uri(self.pagename), path)

    def _claim(self, occ_id: str) -> bool:
        if occ_id in self.ids:
            return False
        self.ids.add(occ_id)
        return True

    def lesson(self, docname: str) -> nodes.Node:
        """A link to document ``docname`` titled with its title."""
        env = self.app.env
        title = env.titles[docname].astext() if docname in env.titles else docname
        return make_ref(self.uri(docname), title)

    def teaching(self, row: CoverageRow | None, kinds: set[str]) -> nodes.Node:
        """The "taught by" cell of a name: its lessons, its waiver reason, or why it has none."""
        if row is None:
            return make_para(_("— (import)") if kinds == {"import"} else _("— (not counted in the coverage)"))
        if row.lessons:
            return join_para([self.lesson(d) for d in row.lessons])
        if row.waiver is not None:
            return make_para(_("Waived: {reason}").format(reason=row.waiver.reason))
        word = _("not covered")
        return make_para(nodes.strong(word, word))

    def html(self, body: nodes.Element) -> str:
        """``body`` rendered by the builder as an HTML fragment (the page's ``body`` context value); for a builder
        that is not HTML, ``body`` itself (the PDF's usage appendix, :mod:`slimebook.sphinxext.pages.usageappendix`,
        takes the nodes)."""
        builder = self.app.builder
        if builder.format != "html":
            return body  # type: ignore[return-value]
        # The translator numbers titles from ``builder.fignumbers``, which belongs to the last document
        # written (and is missing when none was): a generated page has no figure numbers.
        saved = builder.__dict__.get("fignumbers")
        builder.fignumbers = {}  # type: ignore[attr-defined]
        try:
            return builder.render_partial(body)["fragment"] + moved_ids_script(self.app, self.pagename)
        finally:
            if saved is None:
                del builder.fignumbers  # type: ignore[attr-defined]
            else:
                builder.fignumbers = saved  # type: ignore[attr-defined]

    def write(self, title: str, body: nodes.Element) -> None:
        """Render ``body`` (:meth:`html`) and write the page now with the theme's ``page.html``
        (``builder.handle_page``). ``html-page-context`` handlers get the page's doctree (the document ``body``
        was rendered in) as their ``doctree``, as for a chapter: a handler that adds something only to pages
        that need it (mermaid's script) sees what this page holds."""
        fragment = self.html(body)
        doctree = body.document if isinstance(body.document, nodes.document) else None
        self.app.builder.handle_page(  # type: ignore[attr-defined]
            self.pagename, {"title": title, "body": fragment, "parents": []}, "page.html", event_arg=doctree)


def interleave(items: list[nodes.Node], sep: str | None = None) -> list[nodes.Node]:
    """``items`` with a text node ``sep`` between each two (default: the language's list separator)."""
    sep = list_separator() if sep is None else sep
    out: list[nodes.Node] = []
    for n, item in enumerate(items):
        if n:
            out.append(nodes.Text(sep))
        out.append(item)
    return out


# -- writing pages in batches ------------------------------------------------------------------------------
@dataclass(frozen=True)
class PageJob:
    """One generated page to write.

    Attributes:
        pagename: the page's name in the output (``_snapshot/slime/utils/misc.py``; ``.html`` is added).
        title: the page's title (the HTML ``<title>``).
        body: builds the page's body as docutils nodes, given the page (:class:`GeneratedPage`: its name, its
            link helpers). It runs where the page is rendered: in a forked worker of a parallel build, so it
            must not change the environment (warn from ``failed`` instead).
        skip: exception types of ``body`` that mean "no page": the page is not written and ``failed`` gets the
            exception in the main process (exceptions must pickle: they travel from a worker).
        failed: called in the main process with an exception of ``skip``.
        cost: how much work the page is, roughly the number of table rows it holds (a snapshot page, with no
            table, counts 3): a parallel build splits the jobs in chunks of about equal cost.
    """

    pagename: str
    title: str
    body: Callable[[GeneratedPage], nodes.Element]
    skip: tuple[type[Exception], ...] = ()
    failed: Callable[[Exception], None] | None = None
    cost: float = 1.0


@dataclass(frozen=True)
class PageBatch:
    """A generator's answer to ``slimebook-generated-pages``: the pages it writes in this build.

    Attributes:
        jobs: the pages to write (only the missing or stale ones: a generator stamps its pages).
        done: called in the main process once every job of the build ran (its ``failed`` callbacks included):
            where the generator records its stamps.
    """

    jobs: Sequence[PageJob]
    done: Callable[[], None] | None = None


def _write_job(app: Sphinx, job: PageJob) -> Exception | None:
    """Write one page; the exception of ``job.skip`` it raised instead, if any."""
    page = GeneratedPage(app, job.pagename)
    try:
        body = job.body(page)
    except job.skip as exc:
        return exc
    page.write(job.title, body)
    return None


def write_chunk(app: Sphinx, jobs: Sequence[PageJob]) -> list[tuple[int, Exception]]:
    """Write ``jobs`` in order; returns ``(index, exception)`` for each job whose ``body`` raised one of its
    ``skip`` exceptions (that page is not written)."""
    failures = []
    for index, job in enumerate(jobs):
        exc = _write_job(app, job)
        if exc is not None:
            failures.append((index, exc))
    return failures


def _write_batches(app: Sphinx) -> list[tuple[str, dict[str, Any], str]]:
    """``html-collect-pages``: write every generator's batch (``slimebook-generated-pages``) in one pool."""
    batches = [b for b in app.events.emit(EVENT) if b is not None]
    jobs = [job for batch in batches for job in batch.jobs]
    if jobs:
        write_pages(app, jobs)
    for batch in batches:
        if batch.done is not None:
            batch.done()
    return []


def write_pages(app: Sphinx, jobs: Sequence[PageJob], summary: str = "writing generated pages... ") -> None:
    """Write ``jobs`` through the builder, reported by Sphinx's ``status_iterator``, one by one in this process;
    each job's ``failed`` runs here. A handler of :data:`WRITE_EVENT` that returns True has written them instead
    (the parallel writer of :mod:`slimebook.sphinxext.accelerate.pagewriting`)."""
    if app.emit_firstresult(WRITE_EVENT, jobs, summary):
        return
    for job in status_iterator(jobs, summary, "darkgreen", len(jobs), app.config.verbosity,
                               stringify_func=lambda job: job.pagename):
        report_failures([job], write_chunk(app, [job]))


def report_failures(chunk: Sequence[PageJob], failures: list[tuple[int, Exception]]) -> None:
    """Call each failed job's ``failed`` with its exception (``failures``: ``(index in chunk, exception)``)."""
    for index, exc in failures:
        if chunk[index].failed is not None:
            chunk[index].failed(exc)


def setup(app: Sphinx) -> None:
    """Register the batch event, the write event and the writer."""
    app.add_event(EVENT)
    app.add_event(WRITE_EVENT)
    app.connect("html-collect-pages", _write_batches)
