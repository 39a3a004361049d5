"""Lesson 12: spawn pools and processes, the __main__ guard, pickling, subprocess.

Stdlib only. Deterministic: starmap returns results in argument order; pids are never printed,
only compared; child programs are `python -c` one-liners; the one timeout is far shorter than the
child's sleep.
"""

import multiprocessing
import os
import subprocess
import sys
import textwrap

CONFIG = {"mode": "module default"}  # module level: runs again in every spawned child
IMPORTED_AS = __name__  # "__main__" in the parent, "__mp_main__" in a spawned child


def work(index: int, items: list[int], parent_pid: int) -> tuple:
    items.append(99)  # mutates the child's copy only
    return (index, sum(items), IMPORTED_AS, CONFIG["mode"], os.getpid() != parent_pid)


def fail(x: int) -> int:
    if x == 2:
        raise ValueError(f"bad input {x}")
    return x


def exit_with(code: int) -> None:
    sys.exit(code)


def part_a(ctx) -> None:
    print("== A. Pool.starmap in spawned workers ==")
    CONFIG["mode"] = "changed in parent"  # the children never see this
    items = [1, 2]
    with ctx.Pool(2) as pool:
        results = pool.starmap(work, [(0, items, os.getpid()), (1, [10], os.getpid()), (2, [20, 30], os.getpid())])
    for index, total, imported_as, mode, other_pid in results:
        print(f"  task {index}: sum={total} module={imported_as} CONFIG={mode!r} other process={other_pid}")
    print("  parent's list after the call:", items)


def part_b(ctx) -> None:
    print("== B. what crosses the boundary is pickled ==")
    with ctx.Pool(1) as pool:
        try:
            pool.starmap(lambda a, b: a + b, [(1, 2)])
        except Exception as exc:  # noqa: BLE001
            print("  a lambda as the function ->", type(exc).__name__, exc)
        try:
            pool.starmap(fail, [(1,), (2,), (3,)])
        except ValueError as exc:
            print("  worker raised, parent gets ->", type(exc).__name__, exc)


def part_c(ctx) -> None:
    print("== C. one Process ==")
    p = ctx.Process(target=exit_with, args=(5,))
    p.start()
    p.join()
    print("  alive after join:", p.is_alive(), "exitcode:", p.exitcode)


NO_GUARD = textwrap.dedent(
    """
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=print, args=("hello",))
    p.start()
    p.join()
    print("parent: child exitcode", p.exitcode)
    """
)


def part_d() -> None:
    print("== D. no __main__ guard: the child re-runs the module and tries to spawn again ==")
    with open("no_guard.py", "w", encoding="utf-8") as f:
        f.write(NO_GUARD)
    r = subprocess.run([sys.executable, "no_guard.py"], capture_output=True, text=True, timeout=60)
    print("  parent printed:", r.stdout.strip())
    print("  child's error mentions bootstrapping:", "bootstrapping phase" in r.stderr)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def part_e() -> None:
    print("== E. subprocess ==")
    r = subprocess.run(py("print('out'); import sys; sys.exit(3)"), capture_output=True, text=True)
    print("  run: returncode", r.returncode, "stdout", repr(r.stdout))
    try:
        subprocess.run(py("import sys; sys.exit(3)"), check=True)
    except subprocess.CalledProcessError as exc:
        print("  run(check=True) -> CalledProcessError, returncode", exc.returncode)
    print("  check_call ->", subprocess.check_call(py("pass")))
    print("  check_output ->", repr(subprocess.check_output(py("print(6 * 7)"), text=True)))
    merged = subprocess.run(
        py("import sys; print('to stdout'); sys.stdout.flush(); print('to stderr', file=sys.stderr)"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    print("  stdout=PIPE, stderr=STDOUT ->", merged.stdout.splitlines())
    try:
        subprocess.run(py("import time; time.sleep(30)"), timeout=0.5)
    except subprocess.TimeoutExpired as exc:
        print("  run(timeout=0.5) -> TimeoutExpired:", exc.cmd[-1], "(run killed the child before raising)")
    status = os.system(f'"{sys.executable}" -c "import sys; sys.exit(2)"')
    print("  os.system -> wait status", status, "= exit code", os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    spawn = multiprocessing.get_context("spawn")
    part_a(spawn)
    part_b(spawn)
    part_c(spawn)
    part_d()
    part_e()
