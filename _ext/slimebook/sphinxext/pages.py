"""Generated pages as docutils nodes, rendered through the builder: the one way the book makes a page.

A page generator builds its body from the small node builders here and the usage tables of :mod:`.usagetables`;
the body is rendered with ``builder.render_partial``, with every link relative to the page itself (the way
``sphinx.ext.viewcode`` renders its pages from the theme). Two ways to hand a page to the builder:

* **A batch** (the snapshot, usage and repository-map pages): the generator answers the event
  ``slimebook-generated-pages(app) -> PageBatch | None`` with one :class:`PageJob` per page that is missing or
  stale. :func:`write_pages` writes every job of the build in ``html-collect-pages``, through Sphinx's
  ``status_iterator`` like the chapters; in a parallel build (``-j N``, when the builder writes in parallel) the
  jobs are split in chunks rendered by ``N`` forked processes (``sphinx.util.parallel.ParallelTasks``, as Sphinx
  writes documents). A job builds its body where it is rendered; what must happen in the main process (warnings,
  stamps) happens in its ``failed`` callback and in the batch's ``done``.
* **One page from** ``html-collect-pages``: ``(pagename, {"title": …, "body": page.html(body)}, "page.html")``.

Either way the page is not a document, so its navigation (the whole toctree, which Furo turns into its sidebar)
does not depend on the page but on the directory its links are relative to: :func:`_share_navigation` resolves
it once per build and draws it once per set of links (the directories at one depth share one), instead of both
once per page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.adapters.toctree import global_toctree_for_doc
from sphinx.errors import NoUri
from sphinx.util import logging
from sphinx.util.display import display_chunk, status_iterator
from sphinx.util.osutil import relative_uri
from sphinx.util.parallel import ParallelTasks

from ..usage import CoverageRow
from .anchors import moved_ids_script
from .context import get_store
from .heap import freeze_for_fork
from .usagetables import Render, scroll

__all__ = [
    "CHUNKS_PER_WORKER", "GeneratedPage", "OrderedTasks", "PageBatch", "PageJob", "by_cost_first", "chunks_by_cost",
    "field", "interleave", "join_para", "make_para", "make_ref", "make_section", "setup", "simple_table",
    "table_frame", "write_pages",
]

logger = logging.getLogger(__name__)

#: The event a batch generator answers: ``slimebook-generated-pages(app) -> PageBatch | None``.
EVENT = "slimebook-generated-pages"

_Item = TypeVar("_Item")

#: chunks of generated pages per worker: more chunks end closer together, each costs a fork and a navigation
CHUNKS_PER_WORKER = 6


# -- small node builders (every generated page is built from these) ------------------------------------------
def make_para(*parts: nodes.Node | str, classes: list[str] | None = None) -> nodes.paragraph:
    """A paragraph of ``parts`` (strings become text nodes)."""
    para = nodes.paragraph(classes=classes or [])
    para.extend(nodes.Text(p) if isinstance(p, str) else p for p in parts)
    return para


def make_ref(uri: str, *children: nodes.Node | str, title: str = "") -> nodes.reference:
    """A link to ``uri`` (internal unless it starts with ``http:``/``https:``) holding ``children``."""
    ref = nodes.reference("", "", refuri=uri, internal=not uri.startswith(("http:", "https:")))
    if title:
        ref["reftitle"] = title
    ref.extend(nodes.Text(c) if isinstance(c, str) else c for c in children)
    return ref


def make_section(ids: str, title: str | nodes.Node) -> nodes.section:
    """A section with id ``ids`` and ``title``."""
    section = nodes.section(ids=[ids])
    section += nodes.title("", "", nodes.Text(title) if isinstance(title, str) else title)
    return section


def table_frame(headers: list[str | nodes.paragraph], classes: list[str]) -> tuple[nodes.table, nodes.tbody]:
    """A table with ``classes``, one header row (a string header becomes a paragraph) and an empty body.

    Returns:
        ``(table, tbody)``: fill ``tbody`` with ``row`` nodes of ``len(headers)`` entries.
    """
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
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


def join_para(items: list[nodes.Node], sep: str = "、") -> nodes.paragraph:
    """One paragraph of ``items`` separated by ``sep``."""
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
        snapshot pages, in the PDF's usage appendix: :mod:`.usageappendix`)."""
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
        """The "讲解" cell of a name: its lessons, its waiver reason, or why it has none."""
        if row is None:
            return make_para("—（导入）" if kinds == {"import"} else "—（不计入覆盖）")
        if row.lessons:
            return join_para([self.lesson(d) for d in row.lessons])
        if row.waiver is not None:
            return make_para(f"豁免：{row.waiver.reason}")
        return make_para(nodes.strong("未覆盖", "未覆盖"))

    def html(self, body: nodes.Element) -> str:
        """``body`` rendered by the builder as an HTML fragment (the page's ``body`` context value); for a builder
        that is not HTML, ``body`` itself (the PDF's usage appendix, :mod:`.usageappendix`, takes the nodes)."""
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


def interleave(items: list[nodes.Node], sep: str = "、") -> list[nodes.Node]:
    """``items`` with a text node ``sep`` between each two."""
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


def _write_chunk(app: Sphinx, jobs: Sequence[PageJob]) -> list[tuple[int, Exception]]:
    failures = []
    for index, job in enumerate(jobs):
        exc = _write_job(app, job)
        if exc is not None:
            failures.append((index, exc))
    return failures


def _display(chunk: Sequence[PageJob]) -> str:
    return display_chunk([job.pagename for job in chunk])


def chunks_by_cost(jobs: Sequence[_Item], count: int,
                   cost: Callable[[_Item], float] = attrgetter("cost")) -> list[list[_Item]]:
    """``jobs`` (:class:`PageJob` by default, or anything ``cost(job)`` prices in seconds or any one unit) cut into
    consecutive runs whose costs add up to about ``1/count`` of the total each.

    Consecutive, so that pages of one directory stay together (their navigation is drawn once per process);
    a run ends before a job that would take it past its share, and a job costlier than a share is a run of its
    own. Unlike ``sphinx.util.parallel.make_chunks`` (equal numbers of pages) this keeps a few costly pages (the
    large usage tables) from landing in one chunk that a single worker then renders alone.
    """
    share = sum(cost(job) for job in jobs) / max(count, 1)
    chunks: list[list[_Item]] = []
    current: list[_Item] = []
    weight = 0.0
    for job in jobs:
        if current and weight + cost(job) > share:
            chunks.append(current)
            current, weight = [], 0.0
        current.append(job)
        weight += cost(job)
    if current:
        chunks.append(current)
    return chunks


class _FirstInFirstOut(dict):
    """A dict whose ``popitem`` takes the first item put in, not the last."""

    def popitem(self) -> tuple[Any, Any]:
        key = next(iter(self))
        return key, self.pop(key)


class OrderedTasks(ParallelTasks):
    """``ParallelTasks`` whose waiting tasks start in the order they were added, and whose failures always raise.

    Sphinx's (9.0) starts the first ``N`` at once and then, each time a process ends, the task added *last*
    (``dict.popitem`` on its waiting tasks), so a caller cannot say which work starts early. Here they start first
    in, first out. And when Sphinx's ``add_task`` finds that a finished task failed, it stops the running ones and
    returns as if nothing happened (the failed task's work is silently missing); here ``add_task`` raises that
    ``SphinxParallelError``, as ``join`` does. And the heap is frozen (:func:`.heap.freeze_for_fork`) right before a
    task forks, not only when the tasks were added: what the main process allocated meanwhile (the doctrees it resolved
    for the next chunks, the results it merged) would otherwise be walked by the worker's first collections, which
    copies its pages into the worker (profiled on the book's ``-j 2`` writers: a worker's first page spent up to
    0.3 s more than the same page written again right after it, in no function of its own; gone with this freeze).
    Everything else (forking, logs, results) is Sphinx's."""

    def __init__(self, nproc: int) -> None:
        super().__init__(nproc)
        self._precvs_waiting = _FirstInFirstOut()
        self._failure: Exception | None = None

    def _join_one(self) -> bool:
        if self._precvs_waiting and (self._pworking < self.nproc or any(p.poll() for p in self._precvs.values())):
            freeze_for_fork()  # a task forks in this call (or, if a worker ends between two polls, in the next)
        try:
            return super()._join_one()
        except Exception as exc:
            self._failure = exc
            raise

    def terminate(self) -> None:
        """Sphinx's ``terminate`` (each running worker sent ``SIGTERM``), then the workers waited for, 5 s for all of
        them, so that none is left a zombie in a process that goes on (a test run, a loop of builds); a worker
        still running then (one that ignores ``SIGTERM``, a handler it inherited) is killed, so that it cannot write
        on after the build failed."""
        running = [self._procs[tid] for tid in self._precvs]
        super().terminate()
        deadline = time.monotonic() + 5
        for proc in running:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()

    def add_task(self, task_func: Callable[..., Any], arg: Any = None,
                 result_func: Callable[[Any, Any], Any] | None = None) -> None:
        """Sphinx's ``add_task``; raises the error of a task that failed meanwhile (``SphinxParallelError``)."""
        super().add_task(task_func, arg, result_func)
        if self._failure is not None:
            raise self._failure


def by_cost_first(chunks: Sequence[Sequence[PageJob]]) -> list[Sequence[PageJob]]:
    """``chunks`` most costly first (equal costs: in their order), for :class:`OrderedTasks`: the longest
    processing time first rule (Graham, 1969), so that what ends the build last is a small chunk, not the one
    large page that happened to be added last."""
    return sorted(chunks, key=lambda chunk: -sum(job.cost for job in chunk))


def write_pages(app: Sphinx, jobs: Sequence[PageJob], summary: str = "writing generated pages... ") -> None:
    """Write ``jobs`` through the builder, reported by Sphinx's ``status_iterator``.

    When the builder writes documents in parallel (``-j N`` and every extension parallel-write safe), the jobs but
    the first are written in about :data:`CHUNKS_PER_WORKER` ``× N`` chunks of equal cost (:func:`chunks_by_cost`)
    by ``N`` forked processes, the most costly chunk first (:func:`by_cost_first`, :class:`OrderedTasks`), the heap
    frozen before each forks (:func:`.heap.freeze_for_fork`: a worker then copies no page of it). The first job is
    written here while the first chunk is (as Sphinx writes its first document before the other forks: templates
    and navigation ready); then the main process only waits. Else one by one in this process. Each job's ``failed``
    runs here, in the main process, in either case.
    """
    builder = app.builder
    verbosity = app.config.verbosity

    def report(chunk: Sequence[PageJob], failures: list[tuple[int, Exception]]) -> None:
        for index, exc in failures:
            if chunk[index].failed is not None:
                chunk[index].failed(exc)

    if getattr(builder, "parallel_ok", False) and app.parallel > 1 and len(jobs) > 1:
        chunks = by_cost_first(chunks_by_cost(jobs[1:], CHUNKS_PER_WORKER * app.parallel))
        progress = status_iterator(chunks, summary, "darkgreen", len(chunks), verbosity, stringify_func=_display)
        freeze_for_fork()
        tasks = OrderedTasks(app.parallel)

        def on_done(chunk: Sequence[PageJob], failures: list[tuple[int, Exception]]) -> None:
            report(chunk, failures)
            next(progress)

        try:
            # the most costly chunk starts at once; meanwhile the first page is written here, as Sphinx writes its
            # first document, so that the workers forked after it find the templates compiled and the navigation
            # resolved
            tasks.add_task(lambda chunk: _write_chunk(app, chunk), chunks[0], on_done)
            report(jobs[:1], _write_chunk(app, jobs[:1]))
            for chunk in chunks[1:]:
                tasks.add_task(lambda chunk: _write_chunk(app, chunk), chunk, on_done)
        except BaseException:
            tasks.terminate()
            raise
        tasks.join()
        logger.info("")
        return
    for job in status_iterator(jobs, summary, "darkgreen", len(jobs), verbosity,
                               stringify_func=lambda job: job.pagename):
        report([job], _write_chunk(app, [job]))


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


# -- one navigation for every page that is not a document ----------------------------------------------------
_NAV = "slimebook_shared_navigation"


class _Targets:
    """The builder, except that a link made by the toctree resolver keeps its target, between two NUL
    characters (made relative to a real page by :meth:`_Navigation.html`)."""

    def __init__(self, builder: Any) -> None:
        self._builder = builder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._builder, name)

    def get_relative_uri(self, from_: str, to: str, typ: str | None = None) -> str:
        return f"\0{to}\0"


class _Navigation:
    """The global toctree of pages that are not documents, resolved once per build and set of arguments, drawn
    once per set of links: directories whose links to the tree's targets are the same (``../../chapters/…`` from
    every directory two levels below a top directory no document lives in) share one drawing.

    Why this is exact: Sphinx resolves the global toctree for a page (``global_toctree_for_doc``) from the
    page's name in three places only: its ancestors in the toctrees and the ``current`` classes (none for a
    page no toctree names), and each link, made relative to the page (``builder.get_relative_uri``, which keeps
    only the page's directory). So the tree is resolved once with the links' targets kept (:class:`_Targets`),
    each directory's links to those targets are made by the builder, and each distinct set of links gets a copy
    of the tree with them, rendered as ``Builder._get_local_toctree`` renders it (same argument defaults,
    ``render_partial``). Two directories with the same links get the same HTML, so Furo's sidebar (cached by
    that HTML) is computed once for both too.
    """

    def __init__(self, app: Sphinx) -> None:
        self.app = app
        env = app.env
        #: every entry a toctree names (documents and the special pages a toctree may name)
        self.entries = {ref for toc in env.tocs.values() for node in toc.findall(addnodes.toctree)
                        for _title, ref in node["entries"]}
        self._trees: dict[Any, nodes.Element | None] = {}
        self._targets: dict[Any, tuple[str, ...]] = {}  # the targets the tree links to, in order
        self._drawn: dict[Any, str] = {}  # (their links from a directory, arguments) -> HTML
        self._html: dict[Any, str] = {}  # (directory, arguments) -> HTML

    def applies(self, pagename: str) -> bool:
        """True for a page that is neither a document nor named by a toctree."""
        return pagename not in self.app.env.all_docs and pagename not in self.entries

    def html(self, pagename: str, collapse: bool = True, **kwargs: Any) -> str:
        """What the page context's ``toctree(**kwargs)`` returns for ``pagename``."""
        builder = self.app.builder
        kwargs.setdefault("includehidden", False)  # the defaults of Builder._get_local_toctree
        if kwargs.get("maxdepth") == "":
            kwargs.pop("maxdepth")
        key = (collapse, tuple(sorted(kwargs.items())))
        directory = builder.get_target_uri(pagename).rsplit("#", 1)[0].rpartition("/")[0]
        if (directory, key) in self._html:
            return self._html[directory, key]
        if key not in self._trees:
            tree = global_toctree_for_doc(self.app.env, pagename, _Targets(builder),  # type: ignore[arg-type]
                                          tags=builder.tags, collapse=collapse, **kwargs)
            self._trees[key] = tree
            self._targets[key] = () if tree is None else tuple(dict.fromkeys(
                ref["refuri"][1:].partition("\0")[0] for ref in tree.findall(nodes.reference)
                if ref["refuri"].startswith("\0")))
        links = tuple(builder.get_relative_uri(pagename, target) for target in self._targets[key])
        if (links, key) not in self._drawn:
            self._drawn[links, key] = self._draw(self._trees[key], dict(zip(self._targets[key], links, strict=True)))
        self._html[directory, key] = self._drawn[links, key]
        return self._html[directory, key]

    def _draw(self, tree: nodes.Element | None, links: dict[str, str]) -> str:
        """``tree`` rendered with each kept target replaced by its link in ``links`` (target → relative URI)."""
        if tree is not None:
            tree = tree.deepcopy()
            for ref in tree.findall(nodes.reference):
                if ref["refuri"].startswith("\0"):
                    target, _, anchor = ref["refuri"][1:].partition("\0")
                    ref["refuri"] = links[target] + anchor
        return self.app.builder.render_partial(tree)["fragment"]


def _share_navigation(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    """``html-page-context`` (before Furo's): a page that is not a document gets a ``toctree`` that resolves
    the navigation once per build and draws it once per set of links (:class:`_Navigation`). Furo builds its
    sidebar from that HTML and caches its own work by the HTML's text, so it too works once per drawing."""
    if "toctree" not in context or pagename in app.env.all_docs:
        return
    navigation = app.builder.__dict__.get(_NAV)
    if navigation is None:
        navigation = app.builder.__dict__[_NAV] = _Navigation(app)
    if navigation.applies(pagename):
        context["toctree"] = lambda **kwargs: navigation.html(pagename, **kwargs)


def _forget_navigation(app: Sphinx, env: BuildEnvironment) -> None:
    app.builder.__dict__.pop(_NAV, None)


def setup(app: Sphinx) -> None:
    """Register the batch event, its writer and the shared navigation."""
    app.add_event(EVENT)
    app.connect("html-collect-pages", _write_batches)
    app.connect("html-page-context", _share_navigation, priority=400)  # before Furo's (500) reads it
    app.connect("env-updated", _forget_navigation)
