"""The build's heap kept out of the cyclic collector (``slimebook.sphinxext.accelerate.heap``): frozen before Sphinx
forks
readers and writers, given back when the build ends, frozen again at interpreter exit."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from conftest import SourceRepo, copy_root

ROOT = Path(__file__).resolve().parent.parent


def test_frozen_while_reading_and_writing_thawed_after(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("source", tmp_path / "src")
    (src / "sources.toml").write_text(source_repo.lock_text())
    seen: dict[str, int] = {}
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
    try:
        # run after the extension's handlers (priority 900): they see what Sphinx's forks see
        app.connect("env-before-read-docs", lambda app, env, docnames: seen.update(read=gc.get_freeze_count()),
                    priority=950)
        app.connect("write-started", lambda app, builder: seen.update(write=gc.get_freeze_count()), priority=950)
        app.build()
    finally:
        app.cleanup()
    # frozen again before writing: the doctrees read since are frozen too
    assert 0 < seen["read"] < seen["write"]
    assert gc.get_freeze_count() == 0  # build-finished gave everything back: a test process frees each book


def test_a_merged_readers_environment_is_not_held(tmp_path: Path) -> None:
    from slimebook.sphinxext.accelerate import heap

    src = copy_root("parallelwrite", tmp_path / "src")  # ten documents, read by -j 2 in several chunks
    merged: list[weakref.ref] = []
    alive: list[int] = []
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO(), parallel=2)
    try:
        heap.setup(app)  # its hooks alone (the book's extension loads it)
        app.connect("env-merge-info", lambda app, env, docnames, other: merged.append(weakref.ref(other)))

        def count(*_args) -> None:
            gc.collect()
            alive.append(sum(ref() is not None for ref in merged))

        app.connect("write-started", count)
        app.build()
    finally:
        app.cleanup()
    assert merged
    assert alive == [0]  # garbage once merged: nothing froze it while it was alive


def test_forks_outside_a_heap_build_freeze_nothing(tmp_path: Path, sphinx_build) -> None:
    gc.unfreeze()
    src = copy_root("parallelwrite", tmp_path / "src")  # the parallel writer without the heap extension
    sphinx_build(src, "html", parallel=2)
    # nothing thaws what a fork would freeze here: every build of the process would keep its garbage
    assert gc.get_freeze_count() == 0


def test_a_build_that_fails_at_its_end_still_thaws(tmp_path: Path, sphinx_build) -> None:
    from slimebook.sphinxext.accelerate import heap

    app = SphinxTestApp("html", srcdir=copy_root("parallelwrite", tmp_path / "a"), status=StringIO(),
                        warning=StringIO(), parallel=2)
    try:
        heap.setup(app)

        def fail(app, exception) -> None:
            raise RuntimeError("a handler failed at build-finished")

        app.connect("build-finished", fail, priority=400)  # before handlers of the default priority
        with pytest.raises(Exception, match="a handler failed"):
            app.build()
    finally:
        app.cleanup()
    assert heap._BUILDING == [] and gc.get_freeze_count() == 0
    sphinx_build(copy_root("parallelwrite", tmp_path / "b"), "html", parallel=2)  # the writer without the heap
    assert gc.get_freeze_count() == 0


def test_an_app_that_is_never_built_starts_no_build(tmp_path: Path) -> None:
    from slimebook.sphinxext.accelerate import heap

    extensions = ["myst_parser", "slimebook.sphinxext.accelerate.parallelwrite", "slimebook.sphinxext.accelerate.heap"]
    app = SphinxTestApp("html", srcdir=copy_root("parallelwrite", tmp_path / "src"), status=StringIO(),
                        warning=StringIO(), confoverrides={"extensions": extensions})
    app.cleanup()
    # no build-finished will come: a later build's forks must not freeze as if inside this one
    assert heap._BUILDING == []


def test_an_earlier_build_is_freed_not_frozen_again(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a process that builds twice (the test suite does): the first book is garbage (app <-> builder <-> env are a
    # cycle) when the second build freezes its heap; it must be collected then, not frozen for the second build
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    lock = source_repo.lock_text()

    def build(name: str) -> SphinxTestApp:
        src = copy_root("source", tmp_path / name)
        (src / "sources.toml").write_text(lock)
        app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
        app.build()
        app.cleanup()
        return app

    first = weakref.ref(build("first"))
    gc.disable()  # no automatic collection decides it: only what the build itself does
    try:
        build("second")
        assert first() is None
    finally:
        gc.enable()


def _cat_file_children() -> int:
    """This process's ``git cat-file --batch`` children still running (read from ``/proc``)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and cmdline[:3] == [b"git", b"cat-file", b"--batch"]:
            count += 1
    return count


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes from /proc (Linux)")
def test_a_build_stops_its_git_process(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    gc.collect()  # earlier tests' stores: their processes end when the collector frees them
    before = _cat_file_children()
    running: list[int] = []

    def read_late(app, exception) -> None:
        # before the store closes (priority 900): a warm cache may have spared the build every blob read
        app.env.slimebook_store.read_bytes("README.md")
        running.append(_cat_file_children())

    for name in ("one", "two"):
        src = copy_root("source", tmp_path / name)
        (src / "sources.toml").write_text(source_repo.lock_text())
        app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
        app.connect("build-finished", read_late, priority=800)
        app.build()
        app.cleanup()
        assert running[-1] == before + 1
        assert _cat_file_children() == before  # stopped at build-finished, not left for the collector


def test_frozen_at_exit() -> None:
    # atexit runs its hooks last-registered first: the check registered before setup() runs after the hook
    script = textwrap.dedent("""
        import atexit, gc, sys
        atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
        from slimebook.sphinxext.accelerate import heap

        class App:
            def connect(self, event, handler, priority=500):
                pass

        heap.setup(App())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT / "_ext"), "PATH": ""})
    assert done.stdout.splitlines() == ["frozen at exit: True"]


def test_the_first_build_of_a_process_does_not_collect(monkeypatch: pytest.MonkeyPatch) -> None:
    # a process's first build has no earlier build's garbage to free: the full collection (0.07 s over the book's
    # environment) is paid only from the second build on
    from slimebook.sphinxext.accelerate import heap

    collections: list[int] = []
    monkeypatch.setattr(heap, "_ENDED", [])  # as in a fresh process
    monkeypatch.setattr(heap, "_BUILDING", [])  # the build these calls stand for ends with the test
    monkeypatch.setattr(heap.gc, "collect", lambda *args: collections.append(1) or 0)
    try:
        heap.collect_and_freeze()
        assert collections == [] and gc.get_freeze_count() > 0
        heap.thaw()
        heap.collect_and_freeze()
        assert collections == [1]
    finally:
        gc.unfreeze()


PAUSE_CONF = textwrap.dedent("""\
    import gc
    extensions = ["slimebook.sphinxext.accelerate.heap"]
    html_theme = THEME
    SEEN = []


    def setup(app):
        app.connect("config-inited", lambda app, config: SEEN.append(["config", gc.isenabled()]), priority=1000)
        app.connect("builder-inited", lambda app: SEEN.append(["builder", gc.isenabled(), gc.get_freeze_count() > 0]),
                    priority=1)
""")

PAUSE_SCRIPT = textwrap.dedent("""
    import gc, json, sys
    from io import StringIO
    from pathlib import Path
    from sphinx.application import Sphinx

    def build(src, theme):
        src.mkdir()
        (src / "conf.py").write_text(sys.argv[2].replace("THEME", repr(theme)))
        (src / "index.rst").write_text("Title\\n=====\\n")
        try:
            app = Sphinx(src, src, src / "_build", src / "_doctrees", "html", status=StringIO(), warning=StringIO())
        except Exception as exc:
            return [type(exc).__name__, gc.isenabled()]
        app.build()
        return [app.config._raw_config["SEEN"], gc.isenabled(), gc.get_freeze_count()]

    base = Path(sys.argv[1])
    print(json.dumps([build(base / "broken", "no-such-theme"), build(base / "first", "alabaster"),
                      build(base / "second", "alabaster")]))
""")


def test_the_collector_pauses_while_the_first_build_loads_its_environment(tmp_path: Path) -> None:
    # the first build of a process: paused from config-inited to builder-inited, then frozen; a build that failed
    # in between (an unknown theme) left it paused, and the next application started it again; the second build
    # of the process does not pause (an earlier build's garbage would be frozen with its environment)
    done = subprocess.run([sys.executable, "-c", PAUSE_SCRIPT, str(tmp_path), PAUSE_CONF], cwd=ROOT,
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "_ext")})
    broken, first, second = json.loads(done.stdout)
    assert broken == ["ThemeError", False]
    assert first == [[["config", False], ["builder", True, True]], True, 0]
    assert second == [[["config", True], ["builder", True, False]], True, 0]
