"""Build benchmark: the book with ``-j 1`` against ``-j 2``, and ``slime-source`` against ``literalinclude``.

Usage::

    .venv/bin/python bench/build.py [--excerpts 300] [--skip-book] [--skip-excerpts] [--keep]
                                    [--accelerate on|off|both]

Measures, in one run (not a test; prints, never asserts):

1. **The book**, copied to a temporary directory (without _build, .venv, .git, caches): a full HTML build
   with fresh doctrees and output, ``-j 1``, then ``-j 2`` (``--repeat`` times, alternately; the least wall
   time of each counts). Prints every run's wall and CPU seconds with the load average before it, the ratio
   ``-j 2 / -j 1`` (target: at most 0.7 in wall time), the same ratio estimated for idle cores from the CPU
   seconds of each process and parallel section (``bench/sphinx_timed.py``: on a shared machine ``-j 2`` gets
   no second core to itself), the median ratio of each ``-j 2`` run to the ``-j 1`` run just before it (steadier
   when the machine's speed drifts over minutes), and whether the two outputs agree on every generated page (usage,
   repository-map records, snapshots), every lesson page and the usage downloads (byte for byte).
   ``--accelerate off`` builds with ``-D slimebook_accelerate=0`` (Sphinx's stock behaviour,
   :mod:`slimebook.sphinxext.accelerate`); ``both`` runs the accelerated and the stock builds in turn in the same
   run (``-j 1`` and ``-j 2`` of each), prints their figures side by side with the ratio accelerated / stock of
   each, and compares the two outputs file by file (all of them; ``.buildinfo`` without its configuration digest,
   which differs because the accelerators' ``stableconfig`` adds the late static directories before Sphinx takes it).
2. **Excerpts**: generated projects with the same ``--excerpts`` line ranges of the pinned ``.py`` files
   (10 documents): *slime-source* cites them with ``slime-source`` (read from git objects at the pin);
   *literalinclude* copies those files into the project and includes them with ``literalinclude`` and
   ``:lineno-match:``; two more projects hold the same documents with a sentence in place of each
   excerpt, one with the slimebook extension and one without, to split the fixed cost of the extension
   from the cost per excerpt. Each is built from scratch with ``-j 1``, with the ``singlehtml`` builder
   (no generated pages: the excerpts alone; the target slime-source / literalinclude ≤ 1.3 applies here)
   and with ``html`` (the slimebook projects also write a snapshot page per scanned file and the usage
   pages). Of ``--repeat`` runs the one with the least CPU counts; wall and CPU seconds (the build's and
   its children's) are both printed, since the machine may be shared.

The pinned Slime sources must be in the cache (``make sources``). The warm caches (scan, snapshot
fragments) of the machine are used as a normal build would.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from bookcopy import copy_book  # bench/ is the script directory, so first on sys.path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
SPHINX = [sys.executable, "-m", "sphinx"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Timing:
    """Wall and CPU seconds (the CPU of the build process and its children: steadier on a shared machine), and for a
    timed build (``bench/sphinx_timed.py``) the wall time it would take on idle cores (``ideal``)."""

    wall: float
    cpu: float
    ideal: float | None = None

    def __lt__(self, other: Timing) -> bool:
        return self.cpu < other.cpu

    def __str__(self) -> str:
        ideal = "" if self.ideal is None else f" {self.ideal:7.1f} s on idle cores"
        return f"{self.wall:7.1f} s wall {self.cpu:7.1f} s CPU{ideal}"


def _build(src: Path, out: Path, builder: str = "html", jobs: int = 1, warnings_fail: bool = True,
           timed: bool = False, accelerate: bool = True) -> Timing:
    """The time of one fresh build (raises with Sphinx's stderr when it fails); ``timed`` runs it through
    ``bench/sphinx_timed.py`` for the idle-core estimate; ``accelerate=False`` adds ``-D slimebook_accelerate=0``."""
    shutil.rmtree(out, ignore_errors=True)
    runner = [sys.executable, str(ROOT / "bench" / "sphinx_timed.py")] if timed else SPHINX
    args = ["-q", "-b", builder, "-j", str(jobs), "-d", str(out / "doctrees"), str(src), str(out / builder)]
    if not accelerate:
        args[0:0] = ["-D", "slimebook_accelerate=0"]
    if warnings_fail:
        args[0:0] = ["-W", "--keep-going"]
    cmd = [*runner, *args]
    cpu0, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    if proc.returncode:
        raise SystemExit(f"bench: {' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    reports = [line.split(" ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("SLIMEBOOK-TIMING ")]
    return Timing(wall, cpu, json.loads(reports[-1])["ideal_wall"] if reports else None)


def _compare(a: Path, b: Path) -> tuple[int, list[str]]:
    """Files compared and the differing ones: generated pages (usage, repository-map records, snapshots),
    downloads, lesson pages."""
    names = sorted(str(p.relative_to(a)) for p in (a / "_slimebook" / "usage").rglob("*") if p.is_file())
    names += sorted(str(p.relative_to(a)) for p in (a / "_snapshot").rglob("*.html"))
    names += sorted(str(p.relative_to(a)) for p in (a / "chapters" / "async").glob("*.html"))
    differ = [n for n in names if not (b / n).exists() or not filecmp.cmp(a / n, b / n, shallow=False)]
    return len(names), differ


#: ``--accelerate`` → the modes built: True is the accelerated build (the default), False the stock one
MODES = {"on": (True,), "off": (False,), "both": (True, False)}


def _label(accelerate: bool) -> str:
    return "accelerated" if accelerate else "stock"


def _same_files(a: Path, b: Path) -> tuple[int, list[str]]:
    """Every file of two outputs compared: how many, and those missing on one side or with other bytes
    (``.buildinfo`` without its ``config:`` line: see the module docstring)."""
    names = {str(p.relative_to(a)) for p in a.rglob("*") if p.is_file()}
    names |= {str(p.relative_to(b)) for p in b.rglob("*") if p.is_file()}

    def content(root: Path, name: str) -> bytes | None:
        path = root / name
        if not path.is_file():
            return None
        data = path.read_bytes()
        return re.sub(rb"(?m)^config: [0-9a-f]+\n", b"", data) if name == ".buildinfo" else data

    return len(names), sorted(n for n in names if content(a, n) != content(b, n))


def bench_book(work: Path, repeat: int, modes: tuple[bool, ...] = (True,)) -> None:
    book = work / "book"
    copy_book(book)
    print(f"book: {sum(1 for _ in (book / 'chapters').rglob('*.md'))} chapter files; {os.cpu_count()} CPUs; "
          f"-j 1 and -j 2 alternately, {repeat} of each, the least wall time of each counts; "
          f"{' and '.join(_label(m) for m in modes)}", flush=True)
    runs: dict[tuple[bool, int], list[Timing]] = {(mode, jobs): [] for mode in modes for jobs in (1, 2)}
    for _ in range(repeat):
        for mode in modes:
            for jobs in (1, 2):
                load = os.getloadavg()[0]
                timing = _build(book, work / f"{_label(mode)}-j{jobs}", jobs=jobs, timed=True, accelerate=mode)
                runs[mode, jobs].append(timing)
                print(f"  full build -j {jobs} {_label(mode):<12}{timing}   (load average {load:.1f} before)",
                      flush=True)
    best = {key: min(timings, key=lambda t: t.wall) for key, timings in runs.items()}
    idle = {key: min(t.ideal for t in timings if t.ideal is not None) for key, timings in runs.items()}
    for mode in modes:
        one, two = best[mode, 1], best[mode, 2]
        target = f"(target wall <= 0.7 {'met' if two.wall / one.wall <= 0.7 else 'NOT met'})" if mode else ""
        print(f"  {_label(mode)}")
        print(f"    ratio -j 2 / -j 1   {two.wall / one.wall:7.3f} wall {two.cpu / one.cpu:7.3f} CPU   {target}")
        pairs = sorted(b.wall / a.wall for a, b in zip(runs[mode, 1], runs[mode, 2], strict=True))
        print(f"    pairs               {statistics.median(pairs):7.3f} median wall ratio of each -j 2 run to the "
              f"-j 1 run just before it (the machine's speed drifts between runs): "
              f"{' '.join(f'{r:.3f}' for r in pairs)}")
        print(f"    on idle cores       {idle[mode, 2] / idle[mode, 1]:7.3f} estimated from the CPU seconds of every "
              f"process and parallel section (bench/sphinx_timed.py): {idle[mode, 2]:.1f} s / {idle[mode, 1]:.1f} s")
        count, differ = _compare(work / f"{_label(mode)}-j1" / "html", work / f"{_label(mode)}-j2" / "html")
        print(f"    outputs agree       {'yes' if not differ else 'NO'} ({count} files compared: usage, record and "
              f"snapshot pages, downloads, lesson pages){'' if not differ else ': ' + ', '.join(differ[:10])}")
    if len(modes) == 2:
        print("  accelerated / stock, the least wall time of each (wall, CPU, idle-core estimate)")
        for jobs in (1, 2):
            on, off = best[True, jobs], best[False, jobs]
            print(f"    -j {jobs}                {on.wall / off.wall:7.3f} wall {on.cpu / off.cpu:7.3f} CPU "
                  f"{idle[True, jobs] / idle[False, jobs]:7.3f} idle   ({on.wall:.1f} s / {off.wall:.1f} s)")
        for jobs in (1, 2):
            count, differ = _same_files(work / f"accelerated-j{jobs}" / "html", work / f"stock-j{jobs}" / "html")
            print(f"    -j {jobs} outputs agree  {'yes' if not differ else 'NO'} (every file, {count}: accelerated "
                  f"against stock){'' if not differ else ': ' + ', '.join(differ[:10])}", flush=True)


def _ranges(store, count: int) -> list[tuple[str, int, int]]:
    """``count`` deterministic 12-line ranges spread over the pinned .py files (largest files first)."""
    files = sorted(((len(store.read_lines(p)), p) for p in store.files(".py")), reverse=True)
    files = [(n, p) for n, p in files if n >= 40]
    ranges: list[tuple[str, int, int]] = []
    step = 0
    while len(ranges) < count:
        for n, path in files:
            start = 1 + (step * 37) % (n - 12)
            ranges.append((path, start, start + 11))
            if len(ranges) == count:
                break
        step += 1
    return ranges


_CONF = textwrap.dedent('''\
    project = "bench"
    extensions = ["myst_parser"{extra}]
    exclude_patterns = ["_build", "files"]
    {config}
    ''')


def _project(root: Path, ranges: list[tuple[str, int, int]], kind: str, lock: Path, extension: bool) -> Path:
    """A project of 10 documents citing ``ranges`` with ``kind`` (``slime``, ``literal`` or ``none``: the
    same documents with a paragraph in place of each excerpt)."""
    root.mkdir(parents=True)
    docs = 10
    per = -(-len(ranges) // docs)
    config = f"slimebook_lock = {str(lock)!r}" if extension else ""
    (root / "conf.py").write_text(_CONF.format(extra=', "slimebook"' if extension else "", config=config))
    names = [f"doc{n:02d}" for n in range(docs)]
    (root / "index.md").write_text("# Bench\n\n```{toctree}\n" + "\n".join(names) + "\n```\n")
    for n, name in enumerate(names):
        parts = [f"# Part {n}\n"]
        for path, start, end in ranges[n * per:(n + 1) * per]:
            if kind == "slime":
                parts.append(f"```{{slime-source}} {path}\n:lines: {start}-{end}\n```\n")
            elif kind == "literal":
                parts.append(f"```{{literalinclude}} /files/{path}\n:lines: {start}-{end}\n:lineno-match:\n"
                             f":caption: {path} · L{start}–L{end}\n```\n")
            else:
                parts.append(f"{path}, lines {start} to {end}.\n")
        (root / f"{name}.md").write_text("\n".join(parts))
    return root


def _best(repeat: int, fn) -> Timing:
    return min(fn() for _ in range(repeat))


def bench_excerpts(work: Path, count: int, repeat: int) -> None:
    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    lock_path = ROOT / "sources" / "sources.toml"
    store = SourceStore(load_lock(lock_path))
    store.require()
    ranges = _ranges(store, count)
    projects = {
        "slime-source": _project(work / "slime", ranges, "slime", lock_path, extension=True),
        "literalinclude": _project(work / "literal", ranges, "literal", lock_path, extension=False),
        "no excerpts, slimebook": _project(work / "bare-slime", ranges, "none", lock_path, extension=True),
        "no excerpts, plain": _project(work / "bare", ranges, "none", lock_path, extension=False),
    }
    for path in sorted({p for p, _, _ in ranges}):
        target = projects["literalinclude"] / "files" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(store.read_bytes(path))
    print(f"excerpts: {len(ranges)} ranges of 12 lines from {len({p for p, _, _ in ranges})} files in 10 "
          f"documents; fresh -j 1 builds, least CPU of {repeat}; load average {os.getloadavg()[0]:.1f}",
          flush=True)
    for builder, note in (("singlehtml", "no generated pages: the excerpts alone"),
                          ("html", "the slimebook projects also write snapshot and usage pages")):
        # ranges cut through docstrings: both projects get the same highlighting warnings, so no -W here
        wall = {name: _best(repeat, lambda src=src, b=builder: _build(src, work / f"out-{b}-{src.name}", b,
                                                                       warnings_fail=False))
                for name, src in projects.items()}
        print(f"  -b {builder} ({note})")
        for name, timing in wall.items():
            print(f"    {name:<24}{timing}")
        for what in ("wall", "cpu"):
            t = {name: getattr(timing, what) for name, timing in wall.items()}
            ratio = t["slime-source"] / t["literalinclude"]
            per_slime = (t["slime-source"] - t["no excerpts, slimebook"]) / len(ranges) * 1000
            per_literal = (t["literalinclude"] - t["no excerpts, plain"]) / len(ranges) * 1000
            fixed = t["no excerpts, slimebook"] - t["no excerpts, plain"]
            verdict = f"target <= 1.3 {'met' if ratio <= 1.3 else 'NOT met'}" if builder == "singlehtml" else ""
            print(f"    {what:<4} ratio slime-source / literalinclude {ratio:6.3f} {verdict:<17} per excerpt "
                  f"{per_slime:5.1f} ms vs {per_literal:5.1f} ms; fixed cost of the extension {fixed:5.1f} s",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--excerpts", type=int, default=300)
    parser.add_argument("--skip-book", action="store_true")
    parser.add_argument("--skip-excerpts", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="builds of each kind: best of N")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--accelerate", choices=sorted(MODES), default="on",
                        help="the book with the accelerators on (default), off (-D slimebook_accelerate=0), or both "
                             "in the same run, side by side")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="slimebook-bench-build-"))
    try:
        if not args.skip_book:
            bench_book(work, args.repeat, MODES[args.accelerate])
        if not args.skip_excerpts:
            bench_excerpts(work, args.excerpts, args.repeat)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
