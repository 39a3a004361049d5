"""Lesson 10: async with, async for, async generators.

  1. a class with __aenter__/__aexit__: what async with calls, and what __aexit__ is told
  2. @asynccontextmanager: setup before yield, cleanup in finally -- on error, on cancellation,
     and why a setup that fails half-way must clean up by itself
  3. async generators: async for, async comprehensions, and what runs when the consumer stops early
  4. asyncio.Lock: a check-then-act on shared state, with and without the lock

No timers decide the order: every step is ordered by awaits, events and the lock's FIFO.
"""

import asyncio
import contextlib


# -- 1 ---------------------------------------------------------------------------------------
class Resource:
    def __init__(self, name: str) -> None:
        self.name = name

    async def __aenter__(self) -> "Resource":
        await asyncio.sleep(0)                   # may wait: that is why it is a coroutine
        print(f"  {self.name}: __aenter__")
        return self                              # bound by "as"

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        await asyncio.sleep(0)
        print(f"  {self.name}: __aexit__(exc_type={getattr(exc_type, '__name__', None)})")
        return False                             # False: do not swallow the exception


async def scene_class() -> None:
    print("== 1. __aenter__ / __aexit__ ==")
    async with Resource("r1") as r:
        print(f"  body runs with {r.name}")
    try:
        async with Resource("r2"):
            raise ValueError("boom")
    except ValueError as e:
        print(f"  ValueError still reaches the caller: {e}")


# -- 2 ---------------------------------------------------------------------------------------
alive: set[str] = set()                         # sandboxes that exist and must be killed


async def kill(name: str) -> None:
    await asyncio.sleep(0)                       # cleanup may await, even while being cancelled
    alive.discard(name)
    print(f"  {name}: killed")


@contextlib.asynccontextmanager
async def sandbox(name: str, fail_setup: bool = False):
    alive.add(name)
    print(f"  {name}: booted")
    try:
        if fail_setup:
            raise RuntimeError("install failed")  # after boot, before yield
    except BaseException:
        await kill(name)                         # nobody else will: __aexit__ is not called
        raise
    try:
        yield f"<{name}>"                        # the body of the caller's async with runs here
    finally:
        await kill(name)


async def scene_asynccontextmanager() -> None:
    print("== 2. @asynccontextmanager ==")
    async with sandbox("s1") as sb:
        print(f"  body uses {sb}")
    try:
        async with sandbox("s2") as sb:
            raise KeyError("bad diff")           # thrown into the generator at the yield
    except KeyError:
        print("  KeyError reached the caller after the cleanup")
    try:
        async with asyncio.timeout(0.05):        # like a wall-clock guard around a whole rollout
            async with sandbox("s3") as sb:
                await asyncio.Event().wait()     # the agent never finishes
    except TimeoutError:
        print("  TimeoutError after the cleanup ran")
    try:
        async with sandbox("s4", fail_setup=True) as sb:
            print("  (never printed: the body does not run)")
    except RuntimeError as e:
        print(f"  RuntimeError({e}): the body never ran")
    print(f"  sandboxes still alive: {sorted(alive)}")


# -- 3 ---------------------------------------------------------------------------------------
log: list[str] = []


async def numbers(n: int):
    try:
        for i in range(n):
            await asyncio.sleep(0)               # an async generator may await between items
            yield i
        log.append("ran to the end")
    finally:
        log.append("finally")


async def scene_async_generators() -> None:
    print("== 3. async generators ==")
    total = 0
    async for x in numbers(3):
        total += x
    print(f"  async for over all items: total={total}, log={log}")
    log.clear()

    squares = [x * x async for x in numbers(4) if x % 2 == 0]
    print(f"  async comprehension: {squares}, log={log}")
    log.clear()

    gen = numbers(10)
    async for x in gen:
        if x == 2:
            break
    print(f"  break at 2, generator kept in a variable: log={log} (suspended at its yield)")
    await gen.aclose()                           # throws GeneratorExit in at the yield
    print(f"  after await gen.aclose():            log={log}")
    log.clear()

    async for x in numbers(10):
        if x == 2:
            break
    print(f"  break at 2, no reference left:       log={log} (the loop's finalizer will close it)")
    for _ in range(5):
        await asyncio.sleep(0)
    print(f"  a few loop iterations later:         log={log}")
    log.clear()

    async with contextlib.aclosing(numbers(10)) as gen:
        async for x in gen:
            if x == 2:
                break
    print(f"  break inside aclosing(...):          log={log}")


# -- 4 ---------------------------------------------------------------------------------------
async def two_updates(use_lock: bool) -> None:
    lock = asyncio.Lock()
    state = {"in_progress": None}
    outcome: list[str] = []

    async def update(path: str) -> None:
        async with lock if use_lock else contextlib.nullcontext():
            busy = state["in_progress"]          # check
            await asyncio.sleep(0)               # any await here lets the other request in
            if busy is None:
                state["in_progress"] = path      # act
                outcome.append(f"{path}: started")
            else:
                outcome.append(f"{path}: 409, {busy} in progress")
        # the long update itself would run here, outside the lock

    await asyncio.gather(update("ckpt-A"), update("ckpt-B"))
    label = "with asyncio.Lock" if use_lock else "no lock"
    print(f"  {label:17}: {outcome}, in_progress={state['in_progress']}")


async def scene_lock() -> None:
    print("== 4. asyncio.Lock around check-then-act ==")
    await two_updates(use_lock=False)
    await two_updates(use_lock=True)


async def main() -> None:
    await scene_class()
    await scene_asynccontextmanager()
    await scene_async_generators()
    await scene_lock()


asyncio.run(main())
