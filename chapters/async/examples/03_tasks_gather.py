"""Lesson 03: create_task, keeping references, gather's result order, return_exceptions.

Stdlib only. Deterministic: every task of a part sleeps until an absolute loop time measured
from one start instant (loop.call_at), and timers fire in deadline order even when a busy machine
starts a task late or several timers expire in the same loop turn, so completion order cannot
flip (a relative asyncio.sleep would read the clock again in each task); in part C the task that must
still be running waits on an Event, not a timer; garbage collection is triggered explicitly;
no ids, addresses or times are printed.
"""

import asyncio
import gc
import weakref

finished: list[str] = []  # completion order


async def sleep_until(deadline: float) -> None:
    """Like asyncio.sleep, but to an absolute loop.time() shared by the tasks of one part."""
    loop = asyncio.get_running_loop()
    wakeup = loop.create_future()
    loop.call_at(deadline, wakeup.set_result, None)
    await wakeup


async def work(name: str, t0: float, seconds: float) -> str:
    print(f"  {name}: start")
    await sleep_until(t0 + seconds)
    finished.append(name)
    return f"{name}-result"


async def boom(name: str, t0: float, seconds: float) -> str:
    print(f"  {name}: start")
    await sleep_until(t0 + seconds)
    finished.append(name)
    raise ValueError(f"{name} failed")


async def part_a() -> None:
    print("== A. create_task schedules work; gather keeps argument order ==")
    t0 = asyncio.get_running_loop().time()
    tasks = [
        asyncio.create_task(work("slow", t0, 0.03)),
        asyncio.create_task(work("fast", t0, 0.01)),
        asyncio.create_task(work("mid", t0, 0.02)),
    ]
    print("  three tasks created; none has started yet")
    results = await asyncio.gather(*tasks)
    print("  completion order:", finished)
    print("  gather results:  ", results)


async def waits_for_signal(name: str, signal: asyncio.Event) -> None:
    try:
        await signal.wait()
        print(f"  {name}: got the signal")
    finally:
        print(f"  {name}: finally")


async def part_b() -> None:
    print("== B. the loop keeps only weak references ==")
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, ctx: print("  loop reports:", ctx["message"]))

    kept: set[asyncio.Task] = set()
    signal = asyncio.Event()
    task = asyncio.create_task(waits_for_signal("kept", signal))
    kept.add(task)  # a strong reference we own
    task.add_done_callback(kept.discard)  # removed again once it is done
    kept_ref = weakref.ref(task)
    del task

    # the other Event is referenced only by the coroutine that waits on it; the Event's
    # waiter future points back to the task, so task, coroutine and Event form a cycle
    # that nothing outside refers to
    orphan_ref = weakref.ref(asyncio.create_task(waits_for_signal("orphan", asyncio.Event())))

    await asyncio.sleep(0)  # let both tasks start and block on their events
    gc.collect()
    print("  kept alive:  ", kept_ref() is not None)
    print("  orphan alive:", orphan_ref() is not None)

    signal.set()
    await asyncio.gather(*kept)
    print("  kept is empty again:", not kept)


async def work_until(name: str, gate: asyncio.Event) -> str:
    print(f"  {name}: start")
    await gate.wait()  # cannot finish before main opens the gate, however slow the machine
    finished.append(name)
    return f"{name}-result"


async def part_c() -> None:
    print("== C. an exception in gather ==")
    finished.clear()
    gate = asyncio.Event()
    t0 = asyncio.get_running_loop().time()
    tasks = [
        asyncio.create_task(work("a", t0, 0.01)),
        asyncio.create_task(boom("b", t0, 0.02)),
        asyncio.create_task(work_until("c", gate)),
    ]
    try:
        await asyncio.gather(*tasks)
    except ValueError as exc:
        print("  gather raised:", exc)
        print("  c done at that moment:", tasks[2].done())
    gate.set()  # gather did not cancel c, so c can still finish on its own
    await asyncio.wait([tasks[2]])
    print("  later, c done:", tasks[2].done(), "->", tasks[2].result())

    print("== D. return_exceptions=True ==")
    finished.clear()
    t0 = asyncio.get_running_loop().time()
    coros = [work("a", t0, 0.01), boom("b", t0, 0.02), work("c", t0, 0.03)]
    results = await asyncio.gather(*coros, return_exceptions=True)
    for r in results:
        print(f"  {type(r).__name__}: {r}")


async def main() -> None:
    await part_a()
    await part_b()
    await part_c()


asyncio.run(main())
