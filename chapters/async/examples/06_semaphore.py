"""Lesson 06: asyncio.Semaphore bounds how many are inside at once.

  1. Semaphore(2) with five jobs: who gets in, who waits, who is let in on each release
  2. it is not a rate limiter: short jobs all start at once, only "inside at once" is bounded
  3. acquire()/release() by hand: forgetting release on an error leaks a permit
  4. taking the same semaphore twice on one path: deadlock with a real suspension
     point between the two acquires; none while nothing awaits as long as the permits
     are held; deadlock again, with back-to-back acquires, once the work inside awaits
     and enough callers queue

Ordering comes from events and from the semaphore's FIFO waiters; scene 2's clock is virtual (it
ticks only when every unfinished job is waiting for a tick, so a busy machine cannot slip a tick
in between); the only timers are the timeouts that end a wait that can never succeed.
"""

import asyncio


async def until(pred) -> None:
    """Yield to the loop until pred() is true (no timers involved)."""
    while not pred():
        await asyncio.sleep(0)


async def scene_bound() -> None:
    print("== 1. Semaphore(2), five jobs ==")
    sem = asyncio.Semaphore(2)
    gates = {name: asyncio.Event() for name in "ABCDE"}
    inside: list[str] = []
    waiting: list[str] = []
    peak = 0

    async def job(name: str) -> None:
        nonlocal peak
        waiting.append(name)
        async with sem:                 # acquire() on entry, release() on exit
            waiting.remove(name)
            inside.append(name)
            peak = max(peak, len(inside))
            print(f"  {name} enters   inside={inside} waiting={waiting}")
            await gates[name].wait()    # the "work": ends when main opens the gate
            inside.remove(name)
        print(f"  {name} leaves")

    tasks = [asyncio.create_task(job(n)) for n in "ABCDE"]
    await until(lambda: len(waiting) == 3)
    print(f"main: sem.locked() = {sem.locked()}, waiting = {waiting}")
    for name in "BADCE":                # finish in an order different from arrival
        print(f"main: open gate {name}")
        gates[name].set()
        expected = max(0, len(waiting) - 1)
        await until(lambda name=name, expected=expected: name not in inside and len(waiting) == expected)
    await asyncio.gather(*tasks)
    print(f"main: peak inside = {peak}, sem.locked() = {sem.locked()}")


async def scene_not_rate_limit() -> None:
    print("== 2. not a rate limiter ==")
    sem = asyncio.Semaphore(2)
    ticks = 0
    tokens = asyncio.Semaphore(0)       # used by the rate-limited variant below
    waiting_for_tick = 0                # jobs blocked until the clock hands out a token
    started_at_tick: list[int] = []

    async def run_with_clock(jobs) -> None:
        """A virtual clock: it ticks only when every unfinished job is waiting for a tick."""
        nonlocal ticks
        tasks = [asyncio.create_task(job) for job in jobs]

        def unfinished() -> int:
            return sum(not t.done() for t in tasks)

        while unfinished():
            await until(lambda: unfinished() == 0 or waiting_for_tick == unfinished())
            if unfinished():
                before = waiting_for_tick
                ticks += 1
                tokens.release()        # one token per tick
                await until(lambda before=before: waiting_for_tick < before)  # somebody took it

    async def short_job() -> None:
        async with sem:
            started_at_tick.append(ticks)
            await asyncio.sleep(0)      # a very short piece of work

    await run_with_clock([short_job() for _ in range(10)])
    print(f"10 jobs with Semaphore(2): started at ticks {started_at_tick}")

    # what a rate limiter does instead: one new start per tick
    started_at_tick.clear()
    start = ticks

    async def limited_job() -> None:
        nonlocal waiting_for_tick
        waiting_for_tick += 1
        await tokens.acquire()          # a token is spent, never given back
        waiting_for_tick -= 1
        started_at_tick.append(ticks - start)

    await run_with_clock([limited_job() for _ in range(4)])
    print(f"4 jobs, one token per tick: started {started_at_tick} ticks after start")


async def scene_leak() -> None:
    print("== 3. acquire/release by hand ==")
    sem = asyncio.Semaphore(1)

    async def careless() -> None:
        await sem.acquire()
        raise RuntimeError("boom")      # release() is never reached
        sem.release()

    async def careful() -> None:
        await sem.acquire()
        try:
            raise RuntimeError("boom")
        finally:
            sem.release()

    for fn in (careful, careless):
        try:
            await fn()
        except RuntimeError:
            pass
        print(f"after {fn.__name__}(): sem.locked() = {sem.locked()}")
    try:
        async with asyncio.timeout(0.05):
            await sem.acquire()
    except TimeoutError:
        print("next acquire(): TimeoutError, the permit leaked")

    bounded = asyncio.BoundedSemaphore(1)
    try:
        bounded.release()
    except ValueError as e:
        print(f"BoundedSemaphore: extra release() -> ValueError: {e}")


async def scene_nested() -> None:
    print("== 4. same semaphore taken twice ==")
    sem = asyncio.Semaphore(2)
    holding_outer = 0

    async def tool_call(name: str, peers: int) -> None:
        nonlocal holding_outer
        async with sem:                 # outer: the caller limits tool calls
            holding_outer += 1
            print(f"  {name}: took outer permit")
            await until(lambda: holding_outer >= peers)
            async with sem:             # inner: the tool limits itself again
                print(f"  {name}: took inner permit, inside tool")
        holding_outer -= 1

    await tool_call("solo", peers=1)
    try:
        async with asyncio.timeout(0.05):
            await asyncio.gather(tool_call("A", peers=2), tool_call("B", peers=2))
    except TimeoutError:
        print("timeout: A and B each hold one permit and wait for a second -> deadlock")

    # the same two acquires with no await anywhere while the permits are held (as in
    # a tool whose async def body never awaits): an acquire() that finds a free permit
    # and nobody queued does not yield, so each call runs from the outer acquire to the
    # last release without letting anyone else in
    sem = asyncio.Semaphore(2)
    holders = peak = 0

    async def tool_call_no_await(name: str) -> None:
        nonlocal holders, peak
        async with sem:
            holders += 1                # callers holding an outer permit right now
            peak = max(peak, holders)
            async with sem:
                pass                    # the work: no await
            holders -= 1

    async with asyncio.timeout(0.05):
        await asyncio.gather(*(tool_call_no_await(n) for n in "ABCDEFGH"))
    print(f"no await while holding: 8 calls finished, peak outer holders = {peak}, no deadlock")

    # the acquires are still back to back, but the work inside awaits (as a tool
    # would after switching to an async subprocess): the first caller holds both
    # permits across that await while others queue at the OUTER acquire; its two
    # releases hand one outer permit to each of the next two, and both then wait
    # for an inner permit that nobody will give back
    async def tool_call_awaits_inside(name: str) -> None:
        async with sem:
            async with sem:
                print(f"  {name}: took both permits, working")
                await asyncio.sleep(0)  # the work suspends while both permits are held
        print(f"  {name}: done")

    for callers in ("AB", "ABC"):
        sem = asyncio.Semaphore(2)
        try:
            async with asyncio.timeout(0.05):
                await asyncio.gather(*(tool_call_awaits_inside(n) for n in callers))
            print(f"await inside, {len(callers)} callers: all finished")
        except TimeoutError:
            print(f"await inside, {len(callers)} callers: timeout -> deadlock")


async def main() -> None:
    await scene_bound()
    await scene_not_rate_limit()
    await scene_leak()
    await scene_nested()


asyncio.run(main())
