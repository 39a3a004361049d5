"""Live preview benchmark: `make livehtml`'s full build against a one-chapter incremental rebuild, in one run.

Copies the book (without _build, .venv, .git, caches) to a temporary directory and runs the real `make livehtml`
target there, with this checkout's virtualenv, on a free port of 127.0.0.1. It waits for the initial build (a
full build with fresh doctrees), appends a paragraph to one chapter, waits for the rebuild, and then watches a
quiet period to make sure the rebuild does not trigger another one (a loop). It prints:

    full build        seconds of the initial build
    chapter rebuild   seconds of the rebuild the edit triggered (and edit → served)
    ratio             rebuild / full build (target ≤ 0.1)
    documents re-read the documents Sphinx read again (target: 1, the edited chapter)
    rebuilds          rebuilds the single edit triggered (target: 1)

The pinned Slime sources must be in the cache (`make sources`). Timing is reported, never asserted; `--strict`
makes the exit status 1 when a target is missed.

    .venv/bin/python bench/livehtml.py [--chapter chapters/async/02-await.md] [--quiet 10] [--strict]
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bookcopy import copy_book  # bench/ is the script directory, so first on sys.path

VENV_BIN = Path(sys.executable).parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
READING = re.compile(r"reading sources\.\.\. \[\s*\d+%\] (\S+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Output:
    """The server's output, line by line with arrival times, read by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.log: list[tuple[float, str]] = []
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()

    def _pump(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.put((time.monotonic(), ANSI.sub("", line.rstrip("\n"))))

    def until(self, pattern: str, timeout: float) -> tuple[float, list[str]]:
        """Wait for a line containing ``pattern``; return its time and the lines seen up to it."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                stamp, line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"no line with {pattern!r} within {timeout:.0f} s; last lines:\n"
                                       + "\n".join(line for _, line in self.log[-25:])) from None
                continue
            self.log.append((stamp, line))
            seen.append(line)
            if pattern in line:
                return stamp, seen

    def drain(self, seconds: float) -> list[str]:
        end = time.monotonic() + seconds
        seen = []
        while (left := end - time.monotonic()) > 0:
            try:
                stamp, line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.log.append((stamp, line))
            seen.append(line)
        return seen


@dataclass(frozen=True)
class LiveResult:
    """What one edit under ``make livehtml`` cost: seconds of the initial build and of the rebuild, edit → served,
    the documents re-read and the rebuilds the edit triggered."""

    full: float
    rebuild: float
    served: float
    reread: list[str]
    updating: str
    rebuilds: int


def measure(chapter: str, *, quiet: float = 10.0, timeout: float = 1800.0, keep: bool = False,
            verbose: bool = False) -> LiveResult:
    """Run `make livehtml` on a copy of the book, append a paragraph to ``chapter`` once it serves, and time it."""
    tmp = Path(tempfile.mkdtemp(prefix="slimebook-livehtml-"))
    book = tmp / "book"
    copy_book(book)
    stamp = tmp / "installed"  # the Makefile's venv stamp: this checkout's venv is already installed
    stamp.touch()
    port = free_port()
    cmd = ["make", "--no-print-directory", "-C", str(book), "livehtml", f"BIN={VENV_BIN}", f"STAMP={stamp}",
           "HOST=127.0.0.1", f"PORT={port}"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    print(f"bench: {' '.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    out = Output(proc)
    try:
        start, _ = out.until("Starting initial build", 600)
        served, _ = out.until("Serving on", timeout)
        full = served - start
        out.drain(2.0)  # let the watcher settle before editing

        edited = time.monotonic()
        with (book / chapter).open("a", encoding="utf-8") as handle:
            handle.write("\n\n基准测试追加的一段，用来触发一次增量构建。\n")
        rebuilding, _ = out.until("Rebuilding", 120)
        done, lines = out.until("Serving on", timeout)
        if verbose:
            for stamp_, line in out.log:
                if stamp_ >= rebuilding:
                    print(f"  +{stamp_ - rebuilding:6.2f}s  {line}")
        reread = [m.group(1) for line in lines if (m := READING.search(line))]
        updating = next((line.split(":", 1)[1].strip() for line in lines if "updating environment" in line), "?")
        later = out.drain(quiet)
        rebuilds = 1 + sum("Rebuilding" in line for line in later)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return LiveResult(full, done - rebuilding, done - edited, reread, updating, rebuilds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", default="chapters/async/02-await.md", help="the chapter to edit")
    parser.add_argument("--quiet", type=float, default=10.0, help="seconds to watch for a second rebuild")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed for the full build")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument("--verbose", action="store_true", help="print the rebuild's output with timestamps")
    args = parser.parse_args(argv)
    live = measure(args.chapter, quiet=args.quiet, timeout=args.timeout, keep=args.keep, verbose=args.verbose)

    ratio = live.rebuild / live.full
    expected = args.chapter.removesuffix(".md")
    print()
    print(f"full build (initial, fresh doctrees) : {live.full:7.1f} s")
    print(f"chapter rebuild ({args.chapter})  : {live.rebuild:7.1f} s   (edit → served {live.served:.1f} s)")
    print(f"ratio rebuild / full                 : {ratio:7.3f}   (target ≤ 0.1)")
    print(f"documents re-read                    : {len(live.reread):7d}   (target 1) {', '.join(live.reread)}")
    print(f"  sphinx: updating environment: {live.updating}")
    print(f"rebuilds triggered by one edit       : {live.rebuilds:7d}   (target 1; watched {args.quiet:.0f} s after)")
    missed = [name for name, ok in (("ratio", ratio <= 0.1), ("re-read", live.reread == [expected]),
                                    ("rebuilds", live.rebuilds == 1)) if not ok]
    print(f"targets missed: {', '.join(missed)}" if missed else "all targets met")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
