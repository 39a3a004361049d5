"""Lesson 15: events are latches, not queues; asyncio.Lock around check-then-act.

  1. asyncio.Event is a latch: three set() calls before anyone waits are one wake-up
  2. set() wakes every waiter at once; a Queue hands each item to one getter
  3. threading.Event across threads: wait(timeout) returns False when nobody set it
  4. threading.Event.wait() inside a coroutine blocks the whole loop; asyncio.Event.wait() does not
  5. a pause/stop monitor thread (the shape of Slime's health monitor): clear() wakes nobody
  6. asyncio.Lock: check-then-act with an await inside, with and without the lock

Nothing printed depends on thread scheduling: threads are ordered by events, and the one timed
comparison (scene 5: stop seen long before a 30 s interval runs out) has a margin of many seconds.
"""

import asyncio
import threading
import time


async def scene_latch() -> None:
    print("== 1. an event is a latch ==")
    ev = asyncio.Event()
    handled = 0

    async def consumer() -> None:
        nonlocal handled
        await ev.wait()
        handled += 1
        ev.clear()                          # re-arm, like a consumer that wants the next signal
        try:
            async with asyncio.timeout(0.05):
                await ev.wait()             # nobody sets it again
                handled += 1
        except TimeoutError:
            pass

    for _ in range(3):
        ev.set()                            # three "signals" before the consumer runs
    print(f"after 3 set(): is_set() = {ev.is_set()}")
    await consumer()
    print(f"signals sent = 3, signals handled = {handled}")
    ev.set()
    t = asyncio.create_task(ev.wait())
    await asyncio.sleep(0)
    print(f"wait() on a set event finished at once: {t.done()}")


async def scene_broadcast() -> None:
    print("== 2. set() wakes everyone; a Queue item goes to one ==")
    ev = asyncio.Event()
    woke: list[str] = []

    async def waiter(name: str) -> None:
        await ev.wait()
        woke.append(name)

    tasks = [asyncio.create_task(waiter(n)) for n in "ABC"]
    await asyncio.sleep(0)                  # all three are now parked in wait()
    ev.set()
    await asyncio.gather(*tasks)
    print(f"one set(), woken: {woke}")

    q: asyncio.Queue[str] = asyncio.Queue()
    got: list[str] = []

    async def getter(name: str) -> None:
        item = await q.get()
        got.append(f"{name}:{item}")

    tasks = [asyncio.create_task(getter(n)) for n in "ABC"]
    await asyncio.sleep(0)
    q.put_nowait("x")
    await asyncio.sleep(0)
    print(f"one put(), served: {got}, still waiting: {sum(not t.done() for t in tasks)}")
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def scene_threads() -> None:
    print("== 3. threading.Event across threads ==")
    started = threading.Event()
    box: dict[str, int] = {}

    def server(gate: threading.Event) -> None:
        gate.wait()                         # setup takes as long as main decides
        box["port"] = 8000
        started.set()

    gate = threading.Event()
    gate.set()
    t = threading.Thread(target=server, args=(gate,), daemon=True)
    t.start()
    print(f"fast setup: started.wait(timeout=5) -> {started.wait(timeout=5)}, port = {box['port']}")
    t.join()

    started.clear()
    box.clear()
    slow_gate = threading.Event()           # not set: the server is still "setting up"
    t = threading.Thread(target=server, args=(slow_gate,), daemon=True)
    t.start()
    ok = started.wait(timeout=0.05)
    print(f"slow setup: started.wait(timeout=0.05) -> {ok}")
    try:
        print(box["port"])
    except KeyError as e:
        print(f"ignoring that False: box['port'] -> KeyError {e}")
    slow_gate.set()
    t.join()
    print(f"after the server finishes: is_set() = {started.is_set()}, port = {box['port']}")


async def scene_blocking_wait() -> None:
    print("== 4. which wait() blocks the loop ==")
    ticks = 0
    stop = False

    async def ticker() -> None:
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0.005)

    tk = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = ticks
    threading.Event().wait(timeout=0.1)     # a thread-blocking call on the loop's thread
    print(f"threading.Event().wait(0.1): ticker advanced by {ticks - before}")

    before = ticks
    try:
        async with asyncio.timeout(0.1):
            await asyncio.Event().wait()    # suspends only this coroutine
    except TimeoutError:
        pass
    print(f"await asyncio.Event().wait() for 0.1 s: ticker advanced: {ticks - before > 0}")
    stop = True
    await tk


def scene_monitor() -> None:
    print("== 5. pause/stop monitor thread ==")
    poll = 0.5                              # the pause loop's poll, as in Slime
    interval = 30.0                         # the sleep between checks (Slime's default check interval)
    stop_ev = threading.Event()
    pause_ev = threading.Event()
    pause_ev.set()                          # start paused, as Slime's monitor does
    log: list[str] = []
    resumed = threading.Event()
    entered = threading.Event()
    stopped_at: list[float] = []

    def loop() -> None:
        while not stop_ev.is_set():
            while pause_ev.is_set() and not stop_ev.is_set():
                entered.set()
                woke_by_set = stop_ev.wait(timeout=poll)
                if not pause_ev.is_set():
                    log.append(f"resume noticed; the wait returned {woke_by_set} (timed out)")
            if stop_ev.is_set():
                break
            if not resumed.is_set():
                log.append("checking")
                resumed.set()
            if stop_ev.wait(interval):      # sleep that a stop request cuts short
                stopped_at.append(time.monotonic())
                log.append("stop noticed; the wait returned True")
                break

    th = threading.Thread(target=loop, daemon=True)
    th.start()
    entered.wait()                          # the thread is (about to be) inside stop_ev.wait(timeout=poll)
    pause_ev.clear()                        # resume: clear() wakes no waiter
    resumed.wait()
    asked = time.monotonic()
    stop_ev.set()
    th.join(timeout=interval)
    for line in log:
        print(f"  {line}")
    print(f"stop woke the thread long before the {interval:.0f} s interval ran out: "
          f"{stopped_at[0] - asked < interval / 2}")
    print(f"thread alive after join: {th.is_alive()}")


async def scene_lock() -> None:
    print("== 6. asyncio.Lock around check-then-act ==")

    async def run(use_lock: bool) -> None:
        state = {"in_progress": False}
        lock = asyncio.Lock()
        started: list[str] = []

        async def request(name: str) -> None:
            if use_lock:
                async with lock:
                    await check_and_start(name)
            else:
                await check_and_start(name)

        async def check_and_start(name: str) -> None:
            if state["in_progress"]:
                return
            await asyncio.sleep(0)          # any await between the check and the set
            state["in_progress"] = True
            started.append(name)

        await asyncio.gather(request("A"), request("B"))
        print(f"lock={use_lock}: updates started by {started}")

    await run(use_lock=False)
    await run(use_lock=True)


async def main() -> None:
    await scene_latch()
    await scene_broadcast()
    scene_threads()
    await scene_blocking_wait()
    scene_monitor()
    await scene_lock()


asyncio.run(main())
