"""``python -m slimebook.livehtml ARGS…``: run ``sphinx-autobuild ARGS…`` so that stopping ``make livehtml`` stops
the server too, however it is stopped.

The problem: ``make livehtml`` runs ``sh -c "sphinx-autobuild …"``. Ctrl-C in a terminal reaches every process of
the foreground group, but terminating ``make`` by its process id (a background job, an editor's task runner, a test)
left ``sphinx-autobuild`` and the ``sphinx-build`` it had started running, holding the port.

This launcher is what ``make livehtml`` execs. It starts ``sphinx-autobuild`` in a process group of its own and:

* on SIGINT, SIGTERM or SIGHUP stops that whole group (SIGTERM, then SIGKILL after :data:`GRACE` seconds);
* asks Linux to send it SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``), so even a ``make`` killed
  with SIGKILL takes the server down.

Returns ``sphinx-autobuild``'s exit status (128 + signal number when it was stopped by a signal).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

__all__ = ["GRACE", "main"]

#: seconds the server gets to stop after SIGTERM before its group is killed
GRACE = 5.0

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Linux only: SIGTERM to this process when its parent exits (a no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sphinx-autobuild`` with ``argv`` (default: ``sys.argv[1:]``) until it exits or we are stopped.

    Returns:
        the server's exit status, or 128 + the signal that stopped us; 2 when sphinx-autobuild is not installed (a
        book's own choice, in this book's ``book`` extra), with a sentence saying so.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("sphinx_autobuild") is None:
        print("slimebook.livehtml: sphinx-autobuild is not installed: install it (pip install sphinx-autobuild; this "
              "book's `make venv` installs it with the book extra)", file=sys.stderr)
        return 2
    _die_with_parent()
    child = subprocess.Popen([sys.executable, "-m", "sphinx_autobuild", *args], start_new_session=True)
    stopped: list[tuple[int, float]] = []

    def _on_signal(signum: int, _frame: object) -> None:  # only signals; the loop below waits and escalates
        if not stopped:
            stopped.append((signum, time.monotonic()))
            _signal_group(child.pid, signal.SIGTERM)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    if os.getppid() == 1:  # the parent died before PR_SET_PDEATHSIG took effect
        _on_signal(signal.SIGTERM, None)
    while True:
        try:
            code = child.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if stopped and time.monotonic() - stopped[0][1] > GRACE:
                _signal_group(child.pid, signal.SIGKILL)
    _signal_group(child.pid, signal.SIGKILL)  # whatever the server left in its group (a sphinx-build) goes too
    return 128 + stopped[0][0] if stopped else code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
