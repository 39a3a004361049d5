"""Parallel reading with readers that end together: the documents ordered at ``env-before-read-docs``.

With ``-j N`` Sphinx (9.0, ``Builder._read_parallel``) cuts the sorted list of documents into consecutive chunks
(``sphinx.util.parallel.make_chunks``: 37 documents and ``-j 2`` give 13, 13 and 11) and forks a reader per
chunk, ``N`` at a time. The chunks hold equal numbers of documents, not equal work: on this book the last chunk
(the guide's long chapters, the reading order) took 1.8 s while the first two took 1.1 s, so one core sat idle for
0.6 s. ``env-before-read-docs`` lets an extension reorder the list in place; this module orders it so that the same
chunk sizes hold about equal work per core.

The plan (:func:`plan_chunks`) is pure: each document's cost is estimated from its source (:func:`estimate_seconds`:
its size and the marks of what is slow to read), the schedule of ``ParallelTasks`` is simulated (the first ``N``
chunks start at once; each later one, the last added first, when a reader ends; each reader also pays a fixed
start-up cost), and documents are placed, most costly first, where they lengthen the simulated build the least, then
swapped between chunks while a swap shortens it. The main process's own work once a reader's end leaves a core free
(jieba's dictionary, loaded there by ``slimebook.sphinxext.accelerate.search``, about
:data:`~slimebook.sphinxext.accelerate.search.LOAD_SECONDS`) is work on that core, and the plan counts it. Only the
order
changes: the same documents are read, each by one reader, and Sphinx merges what each reader found, in whatever order
the readers end, as it always does.

The order is changed only when Sphinx reads in parallel (``-j N`` and every extension parallel-read safe); a serial
read keeps the sorted order.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util.parallel import make_chunks, parallel_available

from ...names import DEFAULT_SOURCE, SourceNames
from ..context import source_names
from ..guard import Requirement, names_in
from . import search

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders:Builder._read_parallel", ("docnames", "nproc")),
    Requirement("sphinx.util.parallel:make_chunks", ("arguments", "nproc")),
    Requirement("sphinx.util.parallel:parallel_available"),
    Requirement("sphinx.util.parallel:ParallelTasks.add_task", ("task_func", "arg", "result_func")),
)

__all__ = ["estimate_seconds", "makespan", "marks", "plan_chunks", "setup", "usable"]

#: estimated seconds of reading per document and per byte of its source, beside what :data:`SECONDS_PER_MARK`
#: counts (least squares over this book's 38 documents read with ``-j 2``: the size alone explained little)
SECONDS_PER_DOCUMENT = 0.035
SECONDS_PER_BYTE = 1e-6
#: estimated seconds per occurrence of each mark in a source: what makes a page of this book slow to read (a
#: citation role resolves a name at the pin, about 1.8 ms; ``repo-map`` counts the lines of every file, 0.17 s).
#: ``{role}`` and ``{directive}`` stand for the book's citation names (``{slime}``, ``slime-source``: :func:`marks`).
SECONDS_PER_MARK = {"{role}`": 0.0018, "{directive}": 0.004, "{usage-index}": 0.01, "{repo-map}": 0.17}
#: what a reader pays once, whatever it reads (Pygments' filename patterns, the store's git process, the scan, the
#: environment pickled back to the main process): about 0.3 s measured per chunk
SECONDS_PER_READER = 0.3
#: how many trial makespans the swap phase of :func:`plan_chunks` may compute (about 0.2 s on a 2 GHz core)
SWAP_BUDGET = 40_000
#: how many trial makespans the greedy placement of :func:`plan_chunks` may compute, else no plan (0.3 s)
PLACE_BUDGET = 20_000


def marks(names: SourceNames) -> dict[str, float]:
    """:data:`SECONDS_PER_MARK` with the citation marks spelled for the book: ``{role}``` → ``{slime}```,
    ``{directive}`` → ``{slime-source}`` for the source name ``slime``."""
    spelled = {"{role}`": f"{{{names.role}}}`", "{directive}": f"{{{names.directive}}}"}
    return {spelled.get(mark, mark): seconds for mark, seconds in SECONDS_PER_MARK.items()}


def estimate_seconds(text: str, per_mark: dict[str, float]) -> float:
    """Estimated seconds to read a document whose source is ``text``: :data:`SECONDS_PER_DOCUMENT`, plus
    :data:`SECONDS_PER_BYTE` per byte of its UTF-8 form, plus the seconds of ``per_mark`` (:func:`marks`) for each
    mark it holds."""
    found = sum(text.count(mark) * seconds for mark, seconds in per_mark.items())
    return SECONDS_PER_DOCUMENT + SECONDS_PER_BYTE * len(text.encode("utf-8", "surrogatepass")) + found


def makespan(chunk_costs: Sequence[float], workers: int, startup: float = SECONDS_PER_READER,
             main_work: float = 0.0) -> float:
    """Seconds until the last of ``chunk_costs`` (seconds each) ends when run as ``ParallelTasks(workers)`` runs
    them, every chunk paying ``startup`` too, and until the main process has done ``main_work`` seconds from the
    end that leaves a core free (:func:`~slimebook.sphinxext.accelerate.search.merge_with_a_free_core`; no reader
    waits for
    it): chunks ``0 … workers-1`` start at 0; each later one starts when a worker is free, the last added first
    (``ParallelTasks`` pops its waiting tasks from the end of a dict)."""
    if not chunk_costs:
        return 0.0
    free = [0.0] * max(workers, 1)
    count = len(chunk_costs)
    order = list(range(min(workers, count)))
    order += list(range(count - 1, len(order) - 1, -1))
    ends = []
    for index in order:
        start = heapq.heappop(free)  # the earliest a worker is free
        ends.append(start + startup + chunk_costs[index])
        heapq.heappush(free, ends[-1])
    ends.sort()
    return max(ends[-1], ends[search.merge_with_a_free_core(count, workers) - 1] + main_work)


def plan_chunks(costs: dict[str, float], sizes: Sequence[int], workers: int,
                main_work: float = 0.0) -> list[list[str]]:
    """Documents (``costs``: docname → estimated seconds) placed into chunks of the given ``sizes`` (numbers of
    documents, summing to ``len(costs)``) so that :func:`makespan` with ``workers`` and ``main_work`` is short.

    Greedy, most costly document first, into the chunk with room where the makespan grows least (ties: the chunk
    that is cheapest so far, then the first); then single swaps between two chunks while one shortens the makespan
    by more than a microsecond, as long as the swaps tried stay within :data:`SWAP_BUDGET` makespans (each round
    tries every pair of documents in different chunks, so a round costs about ``len(costs)² / 2`` of them: a book
    of 1,000 documents stops after the greedy placement, which leaves its chunks within one document's cost of each
    other). When even the greedy placement would compute more than :data:`PLACE_BUDGET` makespans (documents times
    chunks: 3,000 documents with ``-j 8`` make 50 chunks and 150,000 trials, 3.6 s), the plan is Sphinx's own cut:
    the sorted documents in consecutive chunks. Deterministic: equal inputs give equal plans. Each chunk's documents
    are returned in sorted order. Raises ``ValueError`` when the sizes do not add up.
    """
    if sum(sizes) != len(costs):
        raise ValueError(f"chunk sizes {list(sizes)} hold {sum(sizes)} documents, not {len(costs)}")
    if len(costs) * len(sizes) > PLACE_BUDGET:
        ordered = sorted(costs)
        return [ordered[end - size:end] for end, size in zip(accumulate(sizes), sizes, strict=True)]
    chunks: list[list[str]] = [[] for _ in sizes]
    totals = [0.0] * len(sizes)
    for name in sorted(costs, key=lambda n: (-costs[n], n)):
        best: tuple[float, float, int] | None = None
        for index, size in enumerate(sizes):
            if len(chunks[index]) >= size:
                continue
            trial = totals.copy()
            trial[index] += costs[name]
            key = (makespan(trial, workers, main_work=main_work), totals[index], index)
            if best is None or key < best:
                best = key
        assert best is not None
        chunks[best[2]].append(name)
        totals[best[2]] += costs[name]
    pairs = sum(len(chunks[a]) * len(chunks[b]) for a in range(len(chunks)) for b in range(a + 1, len(chunks)))
    for _round in range(min(len(costs), SWAP_BUDGET // max(pairs, 1))):
        current = makespan(totals, workers, main_work=main_work)
        swap = _best_swap(chunks, totals, costs, workers, current, main_work)
        if swap is None:
            break
        a, i, b, j = swap
        chunks[a][i], chunks[b][j] = chunks[b][j], chunks[a][i]
        delta = costs[chunks[a][i]] - costs[chunks[b][j]]
        totals[a] += delta
        totals[b] -= delta
    return [sorted(chunk) for chunk in chunks]


def _best_swap(chunks: list[list[str]], totals: list[float], costs: dict[str, float], workers: int,
               current: float, main_work: float) -> tuple[int, int, int, int] | None:
    best: tuple[float, tuple[int, int, int, int]] | None = None
    for a in range(len(chunks)):
        for b in range(a + 1, len(chunks)):
            for i, x in enumerate(chunks[a]):
                for j, y in enumerate(chunks[b]):
                    delta = costs[y] - costs[x]
                    if abs(delta) < 1e-9:
                        continue
                    trial = totals.copy()
                    trial[a] += delta
                    trial[b] -= delta
                    span = makespan(trial, workers, main_work=main_work)
                    if span < current - 1e-6 and (best is None or span < best[0]):
                        best = (span, (a, i, b, j))
    return best[1] if best else None


def _reads_in_parallel(app: Sphinx) -> bool:
    """Whether Sphinx will read in parallel: what ``Builder.read`` asks, without the warnings
    ``Sphinx.is_parallel_allowed`` logs (Sphinx logs them itself when it asks)."""
    if not (parallel_available and app.parallel > 1):
        return False
    return all(getattr(ext, "parallel_read_safe", None) for ext in app.extensions.values())


def _source(env: Any, docname: str) -> str:
    try:
        return Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def order_for_readers(app: Sphinx, env: Any, docnames: list[str]) -> None:
    """``env-before-read-docs``: reorder ``docnames`` (in place) so that the chunks Sphinx will cut from it hold
    about equal work per reader (:func:`plan_chunks`); nothing changes for a serial read."""
    if len(docnames) < 2 or len(set(docnames)) != len(docnames) or not _reads_in_parallel(app):
        return  # a document listed twice (another handler's doing) is read as listed: the plan places each once
    sizes = [len(chunk) for chunk in make_chunks(docnames, app.parallel)]
    if len(sizes) < 2:
        return
    # the book's citation names; the extension's default when the accelerator runs without it (a test root)
    names = source_names(app.config) if "slimebook_source" in app.config else SourceNames(DEFAULT_SOURCE)
    per_mark = marks(names)
    costs = {name: estimate_seconds(_source(env, name), per_mark) for name in docnames}
    main_work = search.LOAD_SECONDS if search.loads_while_reading(app) else 0.0
    docnames[:] = [name for chunk in plan_chunks(costs, sizes, app.parallel, main_work) for name in chunk]


def usable() -> bool:
    """Whether ``Builder._read_parallel`` still cuts the documents with ``make_chunks`` and reads them with
    ``ParallelTasks``: the schedule :func:`makespan` simulates."""
    from sphinx.builders import Builder

    return names_in(Builder._read_parallel, "make_chunks", "ParallelTasks")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect :func:`order_for_readers` (late, after any extension that adds documents to read); returns the
    extension's metadata."""
    app.connect("env-before-read-docs", order_for_readers, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
