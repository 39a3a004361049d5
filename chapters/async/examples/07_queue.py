"""Lesson 07: asyncio.Queue between producers and consumers.

  1. maxsize=2: a fast producer is held back by a slow consumer (backpressure);
     task_done()/join() tell the producer side when every item is processed;
     the consumer, an endless loop, is stopped with cancel()
  2. two consumers stopped by sentinels: one None per consumer
  3. a forgotten task_done(): join() never returns
  4. task_done() in finally, but the consumer dies on an error: join() still hangs,
     because the items after the failing one are never taken

The only timer in scene 1 is the single consumer's sleep, so the order cannot flip;
scenes 2-4 use no timers except the timeouts that end scenes 3 and 4.
"""

import asyncio


async def scene_backpressure() -> None:
    print("== 1. maxsize=2, backpressure, join, cancel ==")
    q: asyncio.Queue[int] = asyncio.Queue(maxsize=2)

    async def producer() -> None:
        for i in range(5):
            if q.full():
                print(f"producer: queue full, put({i}) waits")
            await q.put(i)
            print(f"producer: put {i}   qsize={q.qsize()}")
        print("producer: done")

    async def consumer() -> None:
        while True:                      # no exit of its own: stopped by cancel()
            item = await q.get()
            try:
                print(f"consumer: got {item}")
                await asyncio.sleep(0.05)   # slow work
            finally:
                q.task_done()            # exactly once per get(), even on error

    c = asyncio.create_task(consumer())
    await producer()
    print("main: producer returned, waiting on q.join()")
    await q.join()                       # returns when every put() has a task_done()
    print(f"main: join() returned, qsize={q.qsize()}")
    c.cancel()                           # the consumer sits in q.get(); cancel it there
    await asyncio.gather(c, return_exceptions=True)
    print(f"main: consumer cancelled = {c.cancelled()}")


async def scene_sentinel() -> None:
    print("== 2. two consumers, one sentinel each ==")
    q: asyncio.Queue[int | None] = asyncio.Queue()
    handled: dict[str, list[int]] = {"X": [], "Y": []}

    async def consumer(name: str) -> None:
        while True:
            item = await q.get()
            try:
                if item is None:         # the sentinel: stop, after marking it done
                    print(f"consumer {name}: sentinel, exit")
                    return
                handled[name].append(item)
                await asyncio.sleep(0)  # a bit of work that yields
            finally:
                q.task_done()

    workers = [asyncio.create_task(consumer(n)) for n in "XY"]
    for i in range(6):
        q.put_nowait(i)
    for _ in workers:
        q.put_nowait(None)               # one sentinel per consumer, after the data
    await asyncio.gather(*workers)
    print(f"main: handled {handled}, total {sum(len(v) for v in handled.values())}")
    print(f"main: qsize={q.qsize()}, every consumer returned normally")


async def scene_missing_task_done() -> None:
    print("== 3. a forgotten task_done() ==")
    q: asyncio.Queue[int] = asyncio.Queue()
    for i in range(3):
        q.put_nowait(i)
    for _ in range(3):
        item = q.get_nowait()
        if item != 1:                    # item 1 is "forgotten"
            q.task_done()
    print(f"main: qsize={q.qsize()} (empty), but 1 item has no task_done()")
    try:
        async with asyncio.timeout(0.05):
            await q.join()
    except TimeoutError:
        print("main: join() still waiting -> TimeoutError")


async def scene_consumer_dies() -> None:
    print("== 4. task_done() in finally, consumer dies ==")
    q: asyncio.Queue[int] = asyncio.Queue()

    async def consumer() -> None:
        while True:
            item = await q.get()
            try:
                if item == 1:
                    raise ValueError(f"bad item {item}")
                print(f"consumer: handled {item}")
            finally:
                q.task_done()            # runs for item 1 too, then the error ends the loop

    for i in range(4):
        q.put_nowait(i)
    c = asyncio.create_task(consumer())
    try:
        async with asyncio.timeout(0.05):
            await q.join()
    except TimeoutError:
        print(f"main: join() still waiting -> TimeoutError, qsize={q.qsize()}")
    print(f"main: consumer done = {c.done()}, exception = {c.exception()!r}")


async def main() -> None:
    await scene_backpressure()
    await scene_sentinel()
    await scene_missing_task_done()
    await scene_consumer_dies()


asyncio.run(main())
