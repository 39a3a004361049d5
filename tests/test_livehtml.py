"""``make livehtml HOST=… PORT=…``: terminating ``make`` by its process id stops the server and everything it
started (issue 20). Runs the real Makefile target with the output in a temporary directory."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "sphinx-autobuild").exists(),
                                reason="the project's venv has no sphinx-autobuild (run make venv)")


def _pin_present() -> bool:
    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    return SourceStore(load_lock(ROOT / "sources" / "sources.toml")).is_present()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processes_mentioning(text: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next((line for line in (entry / "status").read_text().splitlines() if line.startswith("State:")),
                         "")
        except OSError:
            continue
        if text in cmdline and "zombie" not in state:
            found.append((int(entry.name), cmdline))
    return found


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_terminating_make_stops_the_server(tmp_path: Path) -> None:
    if not _pin_present():
        pytest.skip("the pinned Slime commit is not in the cache (make sources)")
    builddir = tmp_path / "livehtml-build"
    port = _free_port()
    cmd = ["make", "--no-print-directory", "-C", str(ROOT), "livehtml", "HOST=127.0.0.1", f"PORT={port}",
           f"BUILDDIR={builddir}"]
    make = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        # the server process is up, on the host and port asked for
        assert _wait_for(lambda: any("sphinx_autobuild" in c and f"--port {port}" in c and "--host 127.0.0.1" in c
                                     for _, c in _processes_mentioning(str(builddir))), 120), \
            "sphinx-autobuild did not start"
        os.kill(make.pid, signal.SIGTERM)  # make alone, by its id: not its process group
        make.wait(timeout=30)
        assert _wait_for(lambda: not _processes_mentioning(str(builddir)), 30), _processes_mentioning(str(builddir))
    finally:
        for pid, _ in _processes_mentioning(str(builddir)):  # never leave one behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
