"""Lesson 05: cancellation and timeouts.

Four small scenes, each printing the order in which things happen:
  1. Task.cancel(): the task sees CancelledError at its await, cleans up in finally
  2. asyncio.timeout(): the body is cancelled, the block turns it into TimeoutError
  3. asyncio.wait_for(): same idea as a function; the inner coroutine is finished before it returns
  4. asyncio.shield(): cancelling one waiter must not cancel a shared future

Every timeout here is 0.05 s against a sleep of 10 s, so the order cannot flip.
"""

import asyncio

LONG = 10      # a wait that never finishes on its own in this script
SHORT = 0.05   # every timeout below


async def worker(started: asyncio.Event) -> str:
    started.set()
    try:
        print("worker: waiting (sleep 10 s)")
        await asyncio.sleep(LONG)
        return "finished"          # never reached
    except asyncio.CancelledError:
        print("worker: CancelledError arrived at the await")
        raise                      # re-raise: the task must end as cancelled
    finally:
        print("worker: finally: cleanup starts")
        await asyncio.sleep(0)     # awaiting inside finally is allowed
        print("worker: finally: cleanup done")


async def scene_cancel() -> None:
    print("== 1. Task.cancel ==")
    started = asyncio.Event()
    task = asyncio.create_task(worker(started))
    await started.wait()           # make sure the worker is inside its try
    print("main: cancel() returned", task.cancel())
    print("main: task.done() right after cancel() =", task.done())
    try:
        await task
    except asyncio.CancelledError:
        print("main: await task raised CancelledError")
    print("main: task.cancelled() =", task.cancelled())


async def scene_timeout() -> None:
    print("== 2. asyncio.timeout ==")
    try:
        async with asyncio.timeout(SHORT) as cm:
            try:
                print("body: waiting (sleep 10 s)")
                await asyncio.sleep(LONG)
            except asyncio.CancelledError:
                print("body: sees CancelledError, not TimeoutError")
                raise
            finally:
                print("body: finally runs")
    except TimeoutError:
        print("main: outside the block it is TimeoutError")
    print("main: cm.expired() =", cm.expired())
    print("main: asyncio.TimeoutError is TimeoutError:", asyncio.TimeoutError is TimeoutError)


async def slow() -> str:
    try:
        print("slow: started")
        await asyncio.sleep(LONG)
        return "slow result"
    finally:
        print("slow: finally runs")


async def scene_wait_for() -> None:
    print("== 3. asyncio.wait_for ==")
    try:
        await asyncio.wait_for(slow(), timeout=SHORT)
    except TimeoutError:
        print("main: wait_for raised TimeoutError (after slow's finally)")


async def waiter(name: str, aw) -> None:
    try:
        print(f"{name}: got {await aw!r}")
    except asyncio.CancelledError:
        print(f"{name}: cancelled")
        raise


async def scene_shield() -> None:
    print("== 4. asyncio.shield ==")
    loop = asyncio.get_running_loop()

    # 4a: two waiters await the same future directly
    shared = loop.create_future()
    a = asyncio.create_task(waiter("A", shared))
    b = asyncio.create_task(waiter("B", shared))
    await asyncio.sleep(0)         # let A and B reach their await
    a.cancel()
    await asyncio.gather(a, b, return_exceptions=True)
    print("4a without shield: shared.cancelled() =", shared.cancelled())

    # 4b: the same, but each waiter awaits shield(shared)
    shared = loop.create_future()
    a = asyncio.create_task(waiter("A", asyncio.shield(shared)))
    b = asyncio.create_task(waiter("B", asyncio.shield(shared)))
    await asyncio.sleep(0)
    a.cancel()
    await asyncio.sleep(0)         # A's cancellation is delivered
    print("4b with shield: shared.cancelled() =", shared.cancelled())
    shared.set_result("update ok")
    await asyncio.gather(a, b, return_exceptions=True)


async def main() -> None:
    await scene_cancel()
    await scene_timeout()
    await scene_wait_for()
    await scene_shield()


asyncio.run(main())
