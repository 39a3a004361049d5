"""Mutation testing of the pure readers and writers with cosmic-ray (``make mutation``; not in CI).

For each module below, one cosmic-ray session (``_build/mutation/<name>.sqlite``): every mutant of the module is
applied in place, the module's own unit tests run (``pytest -x``, no Sphinx build, one mutant at a time: the machine
is shared), and the file is restored. A mutant whose tests run past ``--timeout`` seconds (default 30: a loop that
never ends) counts as killed. A module's run stops after ``--budget`` seconds (default 900); run the command again to
go on where it stopped (the session keeps what was tested). A session made from another text of its module (the
module changed since: its mutants' diffs no longer match the file) is reported as stale and never continued:
delete it and run again. Then one summary line per module:

    module       mutants  killed  survived  equivalent  timeout  not run  score

``score`` is killed / (killed + survived − equivalent + timeout): the share of the non-equivalent mutants the tests
kill. Mutants that cannot change behaviour are listed in ``bench/mutation_equivalent.toml`` with the reason; each
entry names the module, the operator, the source line (stripped) of the mutant and, where one operator makes several
mutants of that line, the mutated line. ``--survivors`` prints every surviving mutant not listed there (operator,
line, mutated line), to kill with a new test or to list with a reason, and every entry no survivor matches any more.
After adding tests, ``--retest-survivors`` runs the unlisted survivors of the named modules again.

Operators left out (``EXCLUDED_OPERATORS``): arithmetic swaps other than ``+``/``-`` (``*``, ``/``, ``%``,
``**``, shifts and bit operators between integers of these modules either crash at once or are killed by the
same tests as ``+``/``-``; they multiply the run time by ten), and ``VariableInserter``/``VariableReplacer``.

Usage (``make mutation MUTATION_ARGS="--budget 600 drift.relocate"`` passes the arguments; run it under
``nice -n 10`` on a shared machine)::

    .venv/bin/python bench/mutation.py [--budget S] [--timeout S] [--survivors] [--retest-survivors] [--report-only]
                                       [MODULE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "mutation"
EXT = "_ext/slimebook"

# The narrowest fast test command per module: its unit tests only, no Sphinx build, so a mutant costs a second or
# two. Fast, discriminating files first (``-x`` stops at the first failure). A test file left out of a module's list
# can only make its score lower, never higher. The scanner's property tests (Hypothesis) scan code, not Markdown.
_SCAN = {name: f"tests/test_scan_{name}.py"
         for name in ("fixtures", "ids", "docs", "categories", "runner", "properties")}


def _scan_tests(*names: str) -> list[str]:
    return [_SCAN[name] for name in names]


#: test_drift.py without its three Sphinx builds of the source-check page (they read the drift, they do not decide it)
_DRIFT_TESTS = ["tests/test_drift.py", "-k", "not source_check_page"]

#: the lock's own tests: test_lock.py, the lock-file reader's errors (test_store.py) and the re-pin rewrite
#: (test_drift.py), without the store fetches and the drift checks that only read a lock
_LOCK_TESTS = ["tests/test_lock.py", *(f"tests/test_store.py::test_{name}" for name in (
    "lock_errors", "real_lock_is_the_pin")), *(f"tests/test_drift.py::test_{name}" for name in (
    "lock_previous_commit_is_optional_and_checked", "repin_lock_text_keeps_comments",
    "repin_lock_keeps_an_unusual_layout_byte_for_byte", "repin_lock_refuses_what_it_cannot_edit",
    "repin_lock_text_edits_only_its_table", "update_lock_file_replaces_a_previous_commit_that_is_not_a_string",
    "update_lock_file_edits_the_key_not_a_string_that_reads_like_it"))]

#: module name → (file, the pytest arguments that select its tests), in the order ``make mutation`` runs them.
MODULES: dict[str, tuple[str, list[str]]] = {
    "atomicio": (f"{EXT}/atomicio.py", ["tests/test_atomicio.py"]),
    "lock": (f"{EXT}/lock.py", _LOCK_TESTS),
    "lines": (f"{EXT}/lines.py", ["tests/test_lines.py", "tests/test_lines_property.py", "tests/test_cases.py"]),
    "experiments": (f"{EXT}/experiments.py", [f"tests/test_experiments.py::test_{name}" for name in (
        "experiment_failures_are_reported", "cache_is_keyed_by_content_and_holds_the_exact_output",
        "an_unexpected_success_and_the_tail_of_a_failure", "the_script_gets_the_environment_without_python_variables",
        "results_are_frozen_and_the_default_timeout_is_a_minute")]),
    "excerpt": (f"{EXT}/excerpt.py", ["tests/test_excerpt_reader.py", "tests/test_lines_property.py",
                                      "tests/test_rangecache.py::test_excerpts_read_symbols_through_the_cache"]),
    "pyranges": (f"{EXT}/pyranges.py", ["tests/test_pyranges.py", "tests/test_excerpt_reader.py"]),
    "anchorcheck": (f"{EXT}/anchorcheck.py", ["tests/test_anchorcheck.py"]),
    "drift.model": (f"{EXT}/drift/model.py", _DRIFT_TESTS),
    "drift.relocate": (f"{EXT}/drift/relocate.py", _DRIFT_TESTS),
    "drift.checker": (f"{EXT}/drift/checker.py", _DRIFT_TESTS),
    "drift.repin": (f"{EXT}/drift/repin.py", _DRIFT_TESTS),
    "scan.imports": (f"{EXT}/scan/imports.py", _scan_tests("fixtures", "ids", "docs", "properties")),
    "scan.records": (f"{EXT}/scan/records.py", _scan_tests("ids", "runner", "fixtures", "docs")),
    "scan.positions": (f"{EXT}/scan/positions.py", _scan_tests("fixtures", "docs", "ids", "properties")),
    "scan.evidence": (f"{EXT}/scan/evidence.py", _scan_tests("fixtures", "ids", "docs", "properties")),
    "scan.walker": (f"{EXT}/scan/walker.py", _scan_tests("fixtures", "ids", "docs", "runner", "properties")),
    "scan.resolve": (f"{EXT}/scan/resolve.py", _scan_tests("fixtures", "ids", "docs", "runner", "properties")),
    "scan.visitor": (f"{EXT}/scan/visitor.py", _scan_tests("fixtures", "ids", "docs", "runner", "properties")),
    "scan.tokens": (f"{EXT}/scan/tokens.py", _scan_tests("docs", "fixtures", "runner")),
    "scan.repair": (f"{EXT}/scan/repair.py", _scan_tests("docs", "fixtures", "runner")),
    "scan.fallback": (f"{EXT}/scan/fallback.py", _scan_tests("docs", "fixtures", "runner")),
    "scan.docs": (f"{EXT}/scan/docs.py", _scan_tests("docs", "fixtures", "runner")),
    "scan.categories": (f"{EXT}/scan/categories.py", _scan_tests("categories", "fixtures", "ids", "docs", "runner")),
    "scan.runner": (f"{EXT}/scan/runner.py", _scan_tests("runner", "categories", "fixtures")),
}

_ARITH = "Mul|Div|FloorDiv|Mod|Pow|RShift|LShift|BitOr|BitAnd|BitXor"
EXCLUDED_OPERATORS = [
    rf"core/ReplaceBinaryOperator_({_ARITH})_.*",
    rf"core/ReplaceBinaryOperator_.*_({_ARITH})$",
    r"core/VariableInserter",
    r"core/VariableReplacer",
]

EQUIVALENT_FILE = ROOT / "bench" / "mutation_equivalent.toml"


def _config(name: str, path: str, tests: list[str], timeout: float) -> Path:
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    text = "\n".join([
        "[cosmic-ray]",
        f"module-path = {json.dumps(path)}",
        f"timeout = {timeout}",
        "excluded-modules = []",
        f"test-command = {json.dumps(shlex.join(pytest))}",
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
        "[cosmic-ray.filters.operators-filter]",
        f"exclude-operators = {json.dumps(EXCLUDED_OPERATORS)}",
        "",
    ])
    config = OUT / f"{name}.toml"
    config.write_text(text, encoding="utf-8")
    return config


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _forget_survivors(name: str, session: Path) -> None:
    """Mark the session's surviving mutants not listed as equivalent as not run, so the next run tests them again
    (after new tests)."""
    import sqlite3

    equivalent = [e for e in _equivalents() if e["module"] == name]
    jobs = [item["job_id"] for item, result in _results(name)
            if result and result.get("test_outcome") == "survived"
            and not _matching(equivalent, MODULES[name][0], item["mutations"][0], result.get("diff", ""))]
    with sqlite3.connect(session) as db:
        db.executemany("DELETE FROM work_results WHERE job_id = ?", [(job,) for job in jobs])


def _run(name: str, budget: float, retest: bool = False, timeout: float = 30.0) -> None:
    path, tests = MODULES[name]
    session = OUT / f"{name}.sqlite"
    if session.exists() and _stale(name):
        sys.exit(f"{name}: {session} was made from another text of {path}; delete it and run again")
    config = _config(name, path, tests, timeout=timeout)
    if retest and session.exists():
        _forget_survivors(name, session)
    if not session.exists():
        subprocess.run([_bin("cosmic-ray"), "init", str(config), str(session)], cwd=ROOT, check=True)
        subprocess.run([_bin("cr-filter-operators"), str(session), str(config)], cwd=ROOT, check=True)
    # the tests import the mutated tree, whichever checkout the editable install points at
    paths = [str(ROOT / "_ext"), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.Popen([_bin("cosmic-ray"), "exec", str(config), str(session)], cwd=ROOT, env=env,
                            start_new_session=True)
    try:
        proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        # stop the session's process group: cosmic-ray restores the mutated file on SIGINT
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        subprocess.run(["git", "checkout", "--", path], cwd=ROOT, check=False)  # never leave a mutant behind
        print(f"{name}: stopped after the {budget:g} s budget; run again to go on", file=sys.stderr)


def _equivalents() -> list[dict]:
    if not EQUIVALENT_FILE.is_file():
        return []
    return tomllib.loads(EQUIVALENT_FILE.read_text(encoding="utf-8")).get("mutant", [])


def _results(name: str) -> list[tuple[dict, dict | None]]:
    session = OUT / f"{name}.sqlite"
    dump = subprocess.run([_bin("cosmic-ray"), "dump", str(session)], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout
    return [tuple(json.loads(line)) for line in dump.splitlines() if line.strip()]


def _made_from(lines: list[str], diff: str) -> bool:
    """Whether a cosmic-ray diff was made from ``lines`` (the module's text now): every context and removed line of
    each hunk stands where the hunk's header puts it."""
    old = None  # the number of the next old line of the hunk; None before the first hunk (the file headers)
    for d in diff.splitlines():
        if d.startswith("@@"):
            old = int(d.split()[1].lstrip("-").split(",")[0])
        elif old is not None and not d.startswith(("+", "\\")):
            if old > len(lines) or lines[old - 1] != d[1:]:
                return False
            old += 1
    return True


def _stale(name: str) -> int:
    """How many tested mutants of the module's session were made from another text of the module (the session is
    older than the module's last change: its line numbers name other lines now)."""
    lines = (ROOT / MODULES[name][0]).read_text(encoding="utf-8").split("\n")  # as the diffs split it
    return sum(1 for _, result in _results(name) if result and result.get("diff")
               and not _made_from(lines, result["diff"]))


def _line(path: str, mutation: dict) -> str:
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return lines[mutation["start_pos"][0] - 1].strip()


def _mutated(diff: str) -> str:
    """The mutated source line of a cosmic-ray diff, stripped (its one ``+`` line)."""
    added = [d[1:].strip() for d in diff.splitlines() if d.startswith("+") and not d.startswith("+++")]
    return added[0] if added else ""


def _listed(entry: dict, operator: str, line: str, mutated: str) -> bool:
    """Whether an entry of ``mutation_equivalent.toml`` names this mutant: its operator and source line, and, when
    the entry gives ``mutated``, the mutated line (one operator often makes several mutants of one line)."""
    return (entry["operator"] == operator and entry["line"] == line
            and entry.get("mutated", mutated) == mutated)


def _matching(equivalent: list[dict], path: str, mutation: dict, diff: str) -> list[int]:
    """The indexes of the entries of ``equivalent`` (one module's) that name the mutant ``mutation`` of ``path``
    whose cosmic-ray diff is ``diff`` (see :func:`_listed`)."""
    line, mutated = _line(path, mutation), _mutated(diff)
    return [k for k, e in enumerate(equivalent) if _listed(e, mutation["operator_name"], line, mutated)]


def summarize(name: str, show_survivors: bool) -> tuple[int, int]:
    path = MODULES[name][0]
    stale = _stale(name)
    if stale:
        print(f"{name:<16}stale: {stale} tested mutants no longer match {path}; delete {name}.sqlite, run again")
        return 0, 0
    equivalent = [e for e in _equivalents() if e["module"] == name]
    counts = dict.fromkeys(("mutants", "killed", "survived", "equivalent", "timeout", "not run"), 0)
    survivors = []
    used: set[int] = set()
    for item, result in _results(name):
        mutation = item["mutations"][0]
        if result and result.get("worker_outcome") == "skipped":
            continue  # an excluded operator
        counts["mutants"] += 1
        if result is None:
            counts["not run"] += 1
            continue
        outcome, worker = result.get("test_outcome"), result.get("worker_outcome")
        if worker == "abnormal" or outcome is None and worker not in ("normal", None):
            counts["timeout"] += 1
        elif outcome in ("killed", "incompetent"):
            counts["killed"] += 1
        else:
            diff = result.get("diff", "")
            known = _matching(equivalent, path, mutation, diff)
            used.update(known)
            if known:
                counts["equivalent"] += 1
            else:
                survivors.append((mutation, _line(path, mutation), diff))
            counts["survived"] += 1
    listed = counts["survived"] - counts["equivalent"]
    denominator = counts["killed"] + listed + counts["timeout"]
    score = f"{100 * counts['killed'] / denominator:5.1f}%" if denominator else "    -"
    print(f"{name:<16}" + "".join(f"{v:>11}" for v in counts.values()) + f"{score:>9}")
    if show_survivors:
        for mutation, line, diff in survivors:
            print(f"  survived: {mutation['operator_name']} #{mutation['occurrence']} "
                  f"L{mutation['start_pos'][0]}: {line}\n            → {_mutated(diff)}")
        if not counts["not run"]:
            for k, e in enumerate(equivalent):
                if k not in used:
                    print(f"  listed as equivalent but no survivor matches: {e['operator']}: {e['line']}")
    return counts["killed"], denominator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", choices=[[], *MODULES], default=[], metavar="MODULE",
                        help=f"modules to test (default: all): {', '.join(MODULES)}")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per module run (default 900)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds one mutant's tests may take before the mutant counts as killed (a loop that "
                             "never ends); default 30, about ten times the slowest module's tests")
    parser.add_argument("--survivors", action="store_true", help="print every surviving, unlisted mutant")
    parser.add_argument("--report-only", action="store_true", help="summarize the sessions without running")
    parser.add_argument("--retest-survivors", action="store_true",
                        help="test the surviving mutants of an existing session not listed as equivalent again "
                             "(after adding tests)")
    args = parser.parse_args(argv)
    names = args.modules or list(MODULES)
    OUT.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if not args.report_only:
        for name in names:
            _run(name, args.budget, args.retest_survivors, args.timeout)
    print(f"{'module':<16}" + "".join(f"{h:>11}" for h in ("mutants", "killed", "survived", "equivalent",
                                                           "timeout", "not run")) + f"{'score':>9}")
    total_killed = total = 0
    for name in names:
        if (OUT / f"{name}.sqlite").exists():
            killed, denominator = summarize(name, args.survivors)
            total_killed, total = total_killed + killed, total + denominator
    if total:
        print(f"{'all':<16}{'':>66}{100 * total_killed / total:8.1f}%")
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
