"""Benchmark of the usage scanner on the pinned tree (not a test; prints, never asserts).

Usage::

    .venv/bin/python bench/scan.py [--lock sources/sources.toml] [--repeat N] [--jobs N]

Measures, in one run:

* libcst parse-only: ``libcst.parse_module`` over every ``.py`` file at the pin, one process
  (texts read beforehand, not timed);
* cold scan, one process: ``scan_store(store, jobs=1)`` into an empty cache (reads the blobs too);
* cold scan, all cores: ``scan_store(store)`` into another empty cache;
* warm scan: ``scan_store(store)`` again on that cache, with a fresh store object;

and prints wall-clock seconds (CPU seconds beside them: the machine may be shared), and the ratios
against the targets of issue 8: cold on all cores ≤ 2× one-process parse-only; warm ≤ 0.02× cold.
With ``--repeat N`` each measurement is the minimum of N runs. Caches live in a temporary
directory removed at the end; the real scan cache is not touched.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure(fn, repeat: int) -> tuple[float, float, object]:
    """(best wall seconds, CPU seconds of that run incl. children, last result)."""
    best_wall, best_cpu, result = float("inf"), 0.0, None
    for _ in range(repeat):
        cpu0, child0, wall0 = time.process_time(), _children_cpu(), time.perf_counter()
        result = fn()
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0 + _children_cpu() - child0
        if wall < best_wall:
            best_wall, best_cpu = wall, cpu
    return best_wall, best_cpu, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=ROOT / "sources" / "sources.toml")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None, help="workers of the all-cores run (default: all)")
    args = parser.parse_args(argv)

    import libcst

    from slimebook.lock import load_lock
    from slimebook.scan import scan_store
    from slimebook.scan.runner import _available_cores, scanner_version
    from slimebook.store import SourceStore

    lock = load_lock(args.lock)
    store = SourceStore(lock)
    store.require()
    paths = store.files(".py")
    texts = [store.read_text(p) for p in paths]
    size = sum(len(t) for t in texts)
    cores = args.jobs or _available_cores()
    print(f"slime@{lock.short}: {len(paths)} .py files ({size / 1e6:.2f} M chars), "
          f"{len(store.files('.md'))} .md files; scanner {scanner_version()}; {cores} cores; "
          f"load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}")

    def parse_only() -> None:
        for text in texts:
            libcst.parse_module(text)

    work = Path(tempfile.mkdtemp(prefix="slimebook-bench-"))
    try:
        counter = iter(range(10**6))

        def cold(jobs: int | None):
            def run():
                cache = work / f"cold-{next(counter)}"
                return scan_store(SourceStore(lock), jobs=jobs, cache_dir=cache)
            return run

        parse_wall, parse_cpu, _ = _measure(parse_only, args.repeat)
        one_wall, one_cpu, one = _measure(cold(1), args.repeat)
        all_wall, all_cpu, cold_result = _measure(cold(cores), args.repeat)
        warm_cache = work / "warm"
        scan_store(SourceStore(lock), jobs=cores, cache_dir=warm_cache)
        warm_wall, warm_cpu, warm_result = _measure(
            lambda: scan_store(SourceStore(lock), jobs=cores, cache_dir=warm_cache), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    same = one.records == cold_result.records == warm_result.records
    print(f"records: {len(cold_result.records)} (identical across the three scans: {same}); "
          f"errors: {len(cold_result.errors)}")
    rows = [
        ("libcst parse-only, 1 process", parse_wall, parse_cpu),
        ("cold scan, 1 process", one_wall, one_cpu),
        (f"cold scan, {cores} processes", all_wall, all_cpu),
        ("warm scan", warm_wall, warm_cpu),
    ]
    for label, wall, cpu in rows:
        print(f"  {label:<32}{wall:9.3f} s wall {cpu:9.3f} s CPU")
    ratio_cold = all_wall / parse_wall
    ratio_warm = warm_wall / all_wall
    print(f"  cold 1 process / parse-only     {one_wall / parse_wall:9.3f}")
    print(f"  cold all cores / parse-only     {ratio_cold:9.3f}   target <= 2    "
          f"{'met' if ratio_cold <= 2 else 'NOT met'}")
    print(f"  warm / cold all cores           {ratio_warm:9.4f}   target <= 0.02 "
          f"{'met' if ratio_warm <= 0.02 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
