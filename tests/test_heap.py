"""The build's heap kept out of the cyclic collector (``slimebook.sphinxext.heap``): frozen before Sphinx forks
readers and writers, given back when the build ends, frozen again at interpreter exit."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
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


def test_frozen_at_exit() -> None:
    # atexit runs its hooks last-registered first: the check registered before setup() runs after the hook
    script = textwrap.dedent("""
        import atexit, gc, sys
        atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
        from slimebook.sphinxext import heap

        class App:
            def connect(self, event, handler, priority=500):
                pass

        heap.setup(App())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT / "_ext"), "PATH": ""})
    assert done.stdout.splitlines() == ["frozen at exit: True"]
