"""Lesson 17: executor futures -- results, exceptions, as_completed, shutdown.

  1. submit() returns at once; result(timeout) raises TimeoutError but does not stop the work
  2. an exception travels inside the future; nobody sees it unless result()/exception() is called
  3. as_completed() yields futures in the order they finish, not the order they were submitted
  4. shutdown(): wait=True runs queued work, cancel_futures=True drops it; no submit() afterwards
  5. the `with` form when result() raises: queued work still runs before the exception gets out
  6. the shape of Slime's delta encoder: a bounded in-flight deque and shutdown() in `finally`

Each worker blocks on an Event that main opens, or the pool has one worker: nothing printed
depends on which thread the OS schedules first.
"""

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor, TimeoutError, as_completed


def scene_result_timeout() -> None:
    print("== 1. submit() and result(timeout) ==")
    gate = threading.Event()

    def slow() -> str:
        gate.wait()
        return "done"

    with ThreadPoolExecutor(max_workers=1) as pool:
        fut = pool.submit(slow)
        print(f"submit() returned a Future, done() = {fut.done()}")
        try:
            fut.result(timeout=0.05)
        except TimeoutError:
            print(f"result(timeout=0.05): TimeoutError; cancelled = {fut.cancelled()}, done = {fut.done()}")
        gate.set()
        print(f"result() after the gate opens: {fut.result()!r}")


def scene_exceptions() -> None:
    print("== 2. exceptions travel inside the future ==")

    def fail(x: int) -> int:
        raise ValueError(f"bad input {x}")

    with ThreadPoolExecutor(max_workers=1) as pool:
        ignored = pool.submit(fail, 1)      # nobody looks at it: nothing is printed, ever
        checked = pool.submit(fail, 2)
        err = checked.exception()           # waits, then returns the exception object
        print(f"exception() -> {type(err).__name__}: {err}")
        try:
            checked.result()
        except ValueError as e:
            print(f"result() re-raises it in the caller's thread: {e}")
    print(f"the ignored future failed silently: done={ignored.done()}, "
          f"exception={ignored.exception()!r}")


def scene_as_completed() -> None:
    print("== 3. as_completed yields in finishing order ==")
    gates = {name: threading.Event() for name in "ABC"}

    def job(name: str) -> str:
        gates[name].wait()
        return name

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {pool.submit(job, name): name for name in "ABC"}   # future -> what it was for
        it = as_completed(futures)
        order = []
        for name in "CAB":                  # finish in an order different from submission
            gates[name].set()
            fut = next(it)
            order.append(f"{futures[fut]}={fut.result()}")
        print(f"submitted A, B, C; as_completed gave {order}")


def shutdown_with(wait: bool, cancel: bool) -> None:
    gate = threading.Event()

    def job(i: int) -> int:
        if i == 0:
            gate.wait()                     # job 0 occupies the only worker
        return i

    pool = ThreadPoolExecutor(max_workers=1)
    futs = [pool.submit(job, i) for i in range(4)]
    while not futs[0].running():            # job 0 has been picked up; 1..3 are queued
        gate.wait(0.001)
    if wait:
        gate.set()                          # otherwise shutdown(wait=True) would wait forever
    pool.shutdown(wait=wait, cancel_futures=cancel)
    if not wait:
        print(f"  shutdown(wait=False, cancel_futures=True) returned while job 0 runs: "
              f"{futs[0].running()}")
        gate.set()
        futs[0].result()
    states = ["cancelled" if f.cancelled() else f"ran->{f.result()}" for f in futs]
    print(f"  wait={wait}, cancel_futures={cancel}: {states}")
    try:
        pool.submit(job, 9)
    except RuntimeError as e:
        print(f"  submit() after shutdown: RuntimeError: {e}")


def scene_shutdown() -> None:
    print("== 4. what shutdown() does to queued work ==")
    shutdown_with(wait=True, cancel=False)
    shutdown_with(wait=False, cancel=True)


def scene_with_on_error() -> None:
    print("== 5. the `with` form when result() raises ==")
    ran: list[str] = []

    def process(name: str) -> None:
        ran.append(name)
        if name == "f0":
            raise OSError(f"cannot read {name}")

    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            futures = [pool.submit(process, f"f{i}") for i in range(4)]
            for fut in futures:             # in submission order, like the fp8 converter
                fut.result()
    except OSError as e:
        print(f"caught {e!r}; by then the pool had run: {ran}")


def scene_bounded_inflight() -> None:
    print("== 6. bounded in-flight work, shutdown() in finally ==")
    computed: list[int] = []
    collected: list[int] = []
    peak = 0

    def encode(i: int) -> int:
        computed.append(i)
        if i == 1:
            raise ValueError(f"item {i} failed")
        return i * 10

    def collect(fut) -> None:
        collected.append(fut.result() // 10)    # re-raises the worker's exception

    pool = ThreadPoolExecutor(max_workers=1)
    inflight: deque = deque()
    try:
        try:
            for i in range(6):
                inflight.append(pool.submit(encode, i))
                peak = max(peak, len(inflight))
                if len(inflight) >= 2:
                    collect(inflight.popleft())
            while inflight:
                collect(inflight.popleft())
        finally:
            pool.shutdown()                 # wait=True: in-flight work finishes first
    except ValueError as e:
        print(f"caught: {e}")
    print(f"submitted 0..{computed[-1]} of 0..5, computed {computed}, collected {collected}, "
          f"peak in flight {peak}")


scene_result_timeout()
scene_exceptions()
scene_as_completed()
scene_shutdown()
scene_with_on_error()
scene_bounded_inflight()
