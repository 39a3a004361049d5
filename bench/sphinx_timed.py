"""``sphinx-build`` that also says how long the build would take on idle cores (a measurement, not a test).

Usage::

    .venv/bin/python bench/sphinx_timed.py [sphinx-build arguments]

Runs Sphinx in this process and times every ``sphinx.util.parallel.ParallelTasks`` section (Sphinx reads and
writes documents with it, :func:`slimebook.sphinxext.pages.render.write_pages` writes generated pages with it): the CPU
seconds of each task (measured in its worker) and of the main process during the section. On a shared machine
``-j 2`` gets no second core to itself, so its wall time says little; the estimate does not depend on the load:

* outside the sections, the main process's CPU seconds and those of the subprocesses it waits for (git, the
  experiments when no worker runs them);
* each section: the longest of the main process's CPU during it, its tasks run on its workers in the order
  ``ParallelTasks`` starts them (each taking its CPU seconds, its subprocesses' included), and all its CPU
  seconds spread over the cores.

The last line on stderr is ``SLIMEBOOK-TIMING <json>``: ``{"cores", "cpu", "ideal_wall", "sections": [...]}``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any

import sphinx.builders
import sphinx.util.parallel as parallel
from sphinx.cmd.build import main as sphinx_main

MARK = "SLIMEBOOK-TIMING"
_SECTIONS: list[dict[str, Any]] = []


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class TimedTasks(parallel.ParallelTasks):
    """``ParallelTasks`` that records each task's CPU seconds (measured in the worker) and the main process's."""

    def __init__(self, nproc: int) -> None:
        super().__init__(nproc)
        self._section: dict[str, Any] = {"workers": nproc, "tasks": [], "order": [], "cpu_by_task": {},
                                         "main0": _self_cpu(), "wall0": time.perf_counter()}
        _SECTIONS.append(self._section)

    def add_task(self, task_func, arg=None, result_func=None) -> None:  # noqa: ANN001 - Sphinx's signature
        section = self._section

        def timed(*args: Any) -> tuple[Any, float]:  # in the worker: its CPU and its subprocesses' (experiments)
            start = _self_cpu() + _children_cpu()
            result = task_func(*args)
            return result, _self_cpu() + _children_cpu() - start

        index = len(section["order"])
        section["order"].append(index)

        def done(argument: Any, result: tuple[Any, float]) -> None:
            value, cpu = result
            section["tasks"].append(round(cpu, 3))
            section["cpu_by_task"][index] = cpu
            if result_func is not None:
                result_func(argument, value)

        super().add_task(timed, arg, done)

    def join(self) -> None:
        super().join()
        section = self._section
        section["main"] = round(_self_cpu() - section.pop("main0"), 3)
        section["wall"] = round(time.perf_counter() - section.pop("wall0"), 3)
        # the order ParallelTasks starts them in when all were added before one finished: the first ``nproc``,
        # then the waiting ones last-added first (it pops them from a dict)
        order, cpu = section.pop("order"), section.pop("cpu_by_task")
        section["tasks"] = [round(cpu[i], 3) for i in order[:self.nproc] + order[self.nproc:][::-1]]


def ideal_wall(serial_cpu: float, sections: list[dict[str, Any]], cores: int) -> float:
    """The estimate of the module docstring: ``serial_cpu`` plus each section's longest path."""
    total = serial_cpu
    for section in sections:
        workers = [0.0] * section["workers"]
        for cpu in section["tasks"]:  # in the order they start, each on the first free worker
            workers[workers.index(min(workers))] += cpu
        section["ideal"] = round(max(section["main"], max(workers), (section["main"] + sum(section["tasks"])) / cores),
                                 3)
        total += section["ideal"]
    return total


def main(argv: list[str]) -> int:
    parallel.ParallelTasks = TimedTasks  # type: ignore[misc]
    sphinx.builders.ParallelTasks = TimedTasks  # type: ignore[attr-defined]
    start = _self_cpu()
    status = sphinx_main(argv)
    main_cpu = _self_cpu() - start
    children = _children_cpu()
    sections = [s for s in _SECTIONS if "main" in s]
    tasks = sum(sum(s["tasks"]) for s in sections)
    # the main process's own serial CPU, and its subprocesses outside the workers (git, experiments of -j 1),
    # which it waits for
    serial = main_cpu - sum(s["main"] for s in sections) + max(children - tasks, 0.0)
    cores = os.cpu_count() or 1
    report = {"cores": cores, "cpu": round(main_cpu + children, 3),
              "ideal_wall": round(ideal_wall(serial, sections, cores), 3), "sections": sections}
    print(f"{MARK} {json.dumps(report)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
