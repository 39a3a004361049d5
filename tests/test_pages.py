"""Generated pages as a batch (``slimebook.sphinxext.pages.render``): cost-balanced chunks, the shared
navigation of
pages that are not documents, parallel writing with failures reported in the main process, and the page's
doctree handed to ``html-page-context``."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

import slimebook.sphinxext.accelerate.heap as heap
import slimebook.sphinxext.accelerate.navigation as navigation
import slimebook.sphinxext.accelerate.pagewriting as pages
from conftest import SourceRepo, copy_root
from slimebook.sphinxext.accelerate.pagewriting import chunks_by_cost
from slimebook.sphinxext.pages.render import PageJob, make_section, write_pages


@pytest.fixture
def build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    """``build(root_name, where, parallel=0) -> app``: a copy of a test root (under ``where``) built at the pin
    with the book's theme (Furo draws its sidebar from the page context's ``toctree``)."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))

    def _build(name: str, where: str, parallel: int = 0) -> SphinxTestApp:
        src = copy_root(name, tmp_path / where)
        (src / "sources.toml").write_text(source_repo.lock_text())
        return sphinx_build(src, "html", parallel=parallel, confoverrides={"html_theme": "furo"})

    return _build


def _generated(outdir: Path) -> dict[str, str]:
    """Every generated page of a build (snapshot and ``_slimebook`` pages): path → text."""
    found = [*(outdir / "_snapshot").rglob("*.html"), *(outdir / "_slimebook").rglob("*.html")]
    return {str(p.relative_to(outdir)): p.read_text() for p in found}


def _job(name: str, cost: float) -> PageJob:
    return PageJob(name, name, lambda page: make_section(name, name), cost=cost)


def test_chunks_follow_costs_and_keep_order() -> None:
    jobs = [_job("a", 3), _job("b", 3), _job("c", 3), _job("big", 100), _job("d", 3), _job("e", 3)]
    # total 115, four shares of 28.75: the small pages before and after the costly one form their own chunks
    chunks = chunks_by_cost(jobs, 4)
    assert [[job.pagename for job in chunk] for chunk in chunks] == [["a", "b", "c"], ["big"], ["d", "e"]]
    assert [[job.pagename for job in chunk] for chunk in chunks_by_cost(jobs[:3], 1)] == [["a", "b", "c"]]
    assert chunks_by_cost([], 4) == []


def test_chunks_start_most_costly_first_in_the_order_given() -> None:
    chunks = [[_job("a", 1)], [_job("b", 5), _job("c", 1)], [_job("d", 2)], [_job("e", 6)], [_job("f", 2)]]
    assert [[job.pagename for job in chunk] for chunk in pages.by_cost_first(chunks)] == [
        ["b", "c"], ["e"], ["d"], ["f"], ["a"]]
    finished: list[str] = []
    tasks = pages.OrderedTasks(1)
    for name in "abcd":  # one process: Sphinx's ParallelTasks would run a, then d, c, b (the last added first)
        tasks.add_task(lambda name: name, name, lambda _arg, result: finished.append(result))
    tasks.join()
    assert finished == ["a", "b", "c", "d"]


def _fails(name: str) -> str:
    if name == "a":
        raise ValueError("task a failed")
    return name


def test_a_task_that_fails_before_the_next_is_added_raises() -> None:
    import time

    from sphinx.errors import SphinxParallelError

    tasks = pages.OrderedTasks(2)
    tasks.add_task(_fails, "a")
    time.sleep(0.5)  # "a" has failed when "b" is added: Sphinx's add_task would stop the others and say nothing
    with pytest.raises(SphinxParallelError, match="task a failed"):
        tasks.add_task(_fails, "b")
        tasks.join()


def test_generated_pages_share_one_navigation_equal_to_sphinx_own(build, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[str] = []
    real = navigation.global_toctree_for_doc

    def counting(env, docname, builder, **kwargs):
        resolved.append(docname)
        return real(env, docname, builder, **kwargs)

    drawn: list[dict[str, str]] = []
    draw = navigation._Navigation._draw
    monkeypatch.setattr(navigation, "global_toctree_for_doc", counting)
    monkeypatch.setattr(navigation._Navigation, "_draw",
                        lambda self, tree, links: drawn.append(links) or draw(self, tree, links))
    shared = build("source", "shared")
    assert len(resolved) == 1  # once per build (Furo asks with one set of arguments), not once per page
    directories = {Path(name).parent for name in _generated(shared.outdir)}
    # drawn once per set of links: the directories at one depth below _snapshot or _slimebook share one drawing,
    # and the pages at the top (the index, the search page) another
    depths = {len(directory.parts) for directory in directories} | {0}
    assert len(drawn) == len(depths) < len(directories) + 1
    monkeypatch.setattr(navigation._Navigation, "applies", lambda self, pagename: False)  # Sphinx's own, page by page
    own = build("source", "own")
    assert len(resolved) == 1
    ours, theirs = _generated(shared.outdir), _generated(own.outdir)
    # two directory depths, each with the sidebar's links relative to it
    assert '<a class="reference internal" href="../../rstdoc.html">' in ours["_snapshot/pkg/mod.py.html"]
    assert '<a class="reference internal" href="../rstdoc.html">' in ours["_snapshot/README.md.html"]
    assert ours == theirs


def test_parallel_build_writes_pages_in_workers_and_reports_failures_here(build, monkeypatch) -> None:
    started: list[int] = []
    # objects kept out of the collector when a worker forks (slimebook.sphinxext.accelerate.heap)
    frozen: list[int] = []

    class Counting(pages.OrderedTasks):
        def add_task(self, task_func, arg=None, result_func=None) -> None:
            started.append(len(arg))
            frozen.append(gc.get_freeze_count())
            super().add_task(task_func, arg, result_func)

    monkeypatch.setattr(pages, "OrderedTasks", Counting)
    app = build("source", "parallel", parallel=2)
    assert started  # the snapshot pages were rendered by forked workers
    assert len(frozen) == len(started) and min(frozen) > 0
    assert gc.get_freeze_count() == 0  # thawed when the build ended
    serial = build("source", "serial")
    assert _generated(app.outdir) == _generated(serial.outdir)
    assert not (app.outdir / "_snapshot" / "pkg" / "blob.bin.html").exists()  # binary: no page, in a worker too

    # the first job is written here, the second in a worker: its exception comes back to the main process
    failures: list[Exception] = []

    def broken(page) -> nodes.section:
        raise ValueError(f"no body for {page.pagename}")

    started.clear()
    frozen.clear()
    monkeypatch.setattr(heap, "_BUILDING", [True])  # called after the build: as if inside one that thaws at its end
    write_pages(app, [PageJob("extra/ok", "OK", lambda page: make_section("ok", "OK")),
                      PageJob("extra/broken", "Broken", broken, skip=(ValueError,), failed=failures.append)])
    assert started == [1] and frozen[0] > 0  # write_pages froze the heap itself before forking
    gc.unfreeze()
    assert [str(exc) for exc in failures] == ["no body for extra/broken"]
    assert (app.outdir / "extra" / "ok.html").exists() and not (app.outdir / "extra" / "broken.html").exists()


def test_page_doctree_reaches_html_page_context(build, monkeypatch: pytest.MonkeyPatch) -> None:
    app = build("source", "doctree")
    seen: dict[str, object] = {}
    app.connect("html-page-context", lambda app, pagename, template, context, doctree: seen.update({pagename: doctree}))
    write_pages(app, [PageJob("extra/one", "One", lambda page: make_section("one", "One"))])
    doctree = seen["extra/one"]
    assert isinstance(doctree, nodes.document) and doctree.next_node(nodes.title).astext() == "One"


def _freeze_count() -> int:
    return gc.get_freeze_count()


def test_a_task_forks_with_the_heap_frozen_as_it_is_when_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(heap, "_BUILDING", [True])  # inside a build whose end thaws (the heap extension's hooks)
    base = gc.get_freeze_count()
    counts: list[int] = []
    tasks = pages.OrderedTasks(1)
    try:
        tasks.add_task(time.sleep, 0.3)  # the only worker is busy: the next task waits
        tasks.add_task(_freeze_count, None, lambda _arg, count: counts.append(count))
        kept = [[i] for i in range(50_000)]  # allocated after the task was added, before it forks
        tasks.join()
    finally:
        gc.unfreeze()
    # frozen right before the fork, the worker's collections do not walk (and copy) what the main process made
    assert len(kept) == 50_000 and counts and counts[0] >= base + 50_000


def test_terminated_workers_are_waited_for() -> None:
    import time

    tasks = pages.OrderedTasks(2)
    tasks.add_task(time.sleep, 30)
    pids = [proc.pid for proc in tasks._procs.values()]
    assert pids and all(pid for pid in pids)
    tasks.terminate()
    # reaped, not left a zombie of this process (Sphinx's terminate only sends SIGTERM)
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


def _ignore_sigterm_and_sleep(seconds: float) -> None:
    import signal
    import time

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as a handler inherited from a host program would
    time.sleep(seconds)


def test_a_worker_that_ignores_sigterm_is_killed() -> None:
    import time

    tasks = pages.OrderedTasks(2)
    tasks.add_task(_ignore_sigterm_and_sleep, 30)
    tasks.add_task(_ignore_sigterm_and_sleep, 30)
    pids = [proc.pid for proc in tasks._procs.values()]
    time.sleep(0.5)  # both ignore SIGTERM by now
    started = time.monotonic()
    tasks.terminate()
    assert time.monotonic() - started < 8  # one wait for all, not 5 s each
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []
