"""Generated pages written in parallel: with ``-j N`` the jobs of :mod:`slimebook.sphinxext.pages.render` are cut in
chunks of about equal cost and rendered by ``N`` forked processes (``sphinx.util.parallel.ParallelTasks``, as Sphinx
writes documents), the most costly chunk first.

It answers ``slimebook-write-pages`` (stock: :func:`~slimebook.sphinxext.pages.render.write_pages` writes one page
after the other); :class:`OrderedTasks` reaches into ``ParallelTasks``' private state (``_precvs_waiting``,
``_join_one``, ``_pworking``, ``_precvs``, ``_procs``), checked by :func:`usable` before it is used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, TypeVar

from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.display import display_chunk, status_iterator
from sphinx.util.parallel import ParallelTasks

from ..guard import Requirement
from ..pages.render import WRITE_EVENT, PageJob, report_failures, write_chunk
from .heap import freeze_for_fork

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.util.parallel:ParallelTasks._join_one"),
    Requirement("sphinx.util.parallel:ParallelTasks.terminate"),
    Requirement("sphinx.util.parallel:ParallelTasks.__init__", ("nproc",)),
    Requirement("sphinx.util.parallel:ParallelTasks.add_task", ("task_func", "arg", "result_func")),
    Requirement("sphinx.util.parallel:ParallelTasks.join"),
    Requirement("sphinx.util.display:display_chunk"),
    Requirement("sphinx.util.display:status_iterator", ("iterable", "summary", "color", "length", "verbosity",
                                                        "stringify_func")),
)

__all__ = ["CHUNKS_PER_WORKER", "OrderedTasks", "by_cost_first", "chunks_by_cost", "setup", "usable",
           "write_in_parallel"]

logger = logging.getLogger(__name__)

_Item = TypeVar("_Item")

#: chunks of generated pages per worker: more chunks end closer together, each costs a fork and a navigation
CHUNKS_PER_WORKER = 6


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
    ``SphinxParallelError``, as ``join`` does. And the heap is frozen
    (:func:`~slimebook.sphinxext.accelerate.heap.freeze_for_fork`) right before a
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


def write_in_parallel(app: Sphinx, jobs: Sequence[PageJob], summary: str) -> bool | None:
    """``slimebook-write-pages``: write ``jobs`` through the builder in parallel, reported by Sphinx's
    ``status_iterator``; True when written, None (the stock serial writer then writes them) otherwise.

    When the builder writes documents in parallel (``-j N`` and every extension parallel-write safe), the jobs but
    the first are written in about :data:`CHUNKS_PER_WORKER` ``× N`` chunks of equal cost (:func:`chunks_by_cost`)
    by ``N`` forked processes, the most costly chunk first (:func:`by_cost_first`, :class:`OrderedTasks`), the heap
    frozen before each forks (:func:`~slimebook.sphinxext.accelerate.heap.freeze_for_fork`: a worker then copies no
    page of it). The first job is
    written here while the first chunk is (as Sphinx writes its first document before the other forks: templates
    and navigation ready); then the main process only waits. Each job's ``failed`` runs here, in the main process.
    """
    if not (getattr(app.builder, "parallel_ok", False) and app.parallel > 1 and len(jobs) > 1):
        return None
    verbosity = app.config.verbosity
    chunks = by_cost_first(chunks_by_cost(jobs[1:], CHUNKS_PER_WORKER * app.parallel))
    progress = status_iterator(chunks, summary, "darkgreen", len(chunks), verbosity, stringify_func=_display)
    freeze_for_fork()
    tasks = OrderedTasks(app.parallel)

    def on_done(chunk: Sequence[PageJob], failures: list[tuple[int, Exception]]) -> None:
        report_failures(chunk, failures)
        next(progress)

    try:
        # the most costly chunk starts at once; meanwhile the first page is written here, as Sphinx writes its
        # first document, so that the workers forked after it find the templates compiled and the navigation
        # resolved
        tasks.add_task(lambda chunk: write_chunk(app, chunk), chunks[0], on_done)
        report_failures(jobs[:1], write_chunk(app, jobs[:1]))
        for chunk in chunks[1:]:
            tasks.add_task(lambda chunk: write_chunk(app, chunk), chunk, on_done)
    except BaseException:
        tasks.terminate()
        raise
    tasks.join()
    logger.info("")
    return True


def usable() -> bool:
    """Whether a ``ParallelTasks`` still has the private instance members :class:`OrderedTasks` relies on (Sphinx
    9.0's); the guard calls it after ``REQUIRES`` (which checks the class's methods)."""
    probe = ParallelTasks(1)
    return all(hasattr(probe, name) for name in ("_precvs_waiting", "_pworking", "_precvs", "_procs")) and all(
        callable(getattr(ParallelTasks, name, None)) for name in ("_join_one", "terminate", "add_task", "join"))


def setup(app: Sphinx) -> None:
    """Answer ``slimebook-write-pages`` with the parallel writer."""
    app.connect(WRITE_EVENT, write_in_parallel)
