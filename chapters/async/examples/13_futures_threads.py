"""Lesson 13: concurrent and asyncio futures, callbacks, a loop in a background thread.

Stdlib only. Deterministic: every cross-thread step is ordered by Event.wait, Future.result or
join; thread names are fixed; the one "did it wake up?" check starts only once the background
loop has gone to sleep in select() (its selector counts those sleeps) and then waits 0.3 s for
something that cannot happen without a wake-up; part E's heartbeat is observed through an Event
the other loop waits for, not by counting ticks in a time window.
"""

import asyncio
import concurrent.futures
import selectors
import threading


def here() -> str:
    return threading.current_thread().name


def part_a() -> None:
    print("== A. concurrent.futures.Future: callbacks run in the thread that completes it ==")
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    seen: list[str] = []
    fut.add_done_callback(lambda f: seen.append(f"callback 1 got {f.result()} in thread {here()}"))
    setter = threading.Thread(target=fut.set_result, args=(42,), name="setter")
    setter.start()
    value = fut.result(timeout=5)  # blocks this thread until the setter thread fills it
    setter.join()
    print("  main got from result():", value)
    print(" ", seen[0])
    fut.add_done_callback(lambda f: print(f"  callback 2 (added after done) runs at once in {here()}"))


async def part_b() -> None:
    print("== B. asyncio.Future: callbacks are scheduled on the loop, not called inline ==")
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    fut.add_done_callback(lambda f: print(f"  done callback sees {f.result()!r}"))
    loop.call_soon(fut.set_result, "filled by call_soon")
    print("  awaiting the future...")
    print("  await returned:", await fut)
    await asyncio.sleep(0)
    fut2 = loop.create_future()
    fut2.set_result(1)
    fut2.add_done_callback(lambda f: print("  callback on an already-done future: next loop turn"))
    print("  add_done_callback returned")
    await asyncio.sleep(0)


class SleepCountingSelector(selectors.DefaultSelector):
    """Counts the times the loop went to sleep with nothing to do (select() with no timeout)."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeps = 0
        self.changed = threading.Condition()

    def select(self, timeout=None):
        if timeout is None:
            with self.changed:
                self.sleeps += 1
                self.changed.notify_all()
        return super().select(timeout)


class LoopThread:
    """A loop running forever in its own thread, like Slime's AsyncLoopThread."""

    def __init__(self) -> None:
        self.selector = SleepCountingSelector()  # not in Slime: lets part D see the loop fall asleep
        self.loop = asyncio.SelectorEventLoop(self.selector)
        self.thread = threading.Thread(target=self._main, name="loop-thread", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        print(f"  loop thread alive after join: {self.thread.is_alive()}; loop running: {self.loop.is_running()}")
        self.loop.close()


async def where(label: str) -> str:
    await asyncio.sleep(0.01)
    return f"{label} ran in {here()}"


async def boom() -> None:
    await asyncio.sleep(0)
    raise ValueError("raised on the loop thread")


async def slow(done: threading.Event) -> str:
    await asyncio.sleep(0.3)
    done.set()
    return "slow finished"


def part_c(bg: LoopThread) -> None:
    print("== C. run_coroutine_threadsafe from a plain thread ==")
    fut = asyncio.run_coroutine_threadsafe(where("coroutine"), bg.loop)
    print("  returned a", type(fut).__module__ + "." + type(fut).__qualname__)
    print("  result():", fut.result(timeout=5))
    try:
        asyncio.run_coroutine_threadsafe(boom(), bg.loop).result(timeout=5)
    except ValueError as exc:
        print("  result() re-raises:", exc)
    finished = threading.Event()
    fut = asyncio.run_coroutine_threadsafe(slow(finished), bg.loop)
    try:
        fut.result(timeout=0.05)
    except TimeoutError:
        print("  result(timeout=0.05) -> TimeoutError; coroutine cancelled?", fut.cancelled())
    finished.wait(5)
    print("  ...it kept running on the loop:", fut.result(timeout=5))


async def wait_for_future(fut: asyncio.Future, selector: SleepCountingSelector, sleeps: list[int],
                          waiting: threading.Event) -> str:
    sleeps.append(selector.sleeps)  # read on the loop thread: any later idle sleep comes after the await below
    waiting.set()
    return await fut


def part_d(bg: LoopThread) -> None:
    print("== D. completing a loop's future from another thread ==")
    for how in ("fut.set_result directly", "call_soon_threadsafe(fut.set_result)"):
        fut = asyncio.run_coroutine_threadsafe(_make_future(), bg.loop).result(timeout=5)
        waiting = threading.Event()
        sleeps: list[int] = []
        waiter = asyncio.run_coroutine_threadsafe(wait_for_future(fut, bg.selector, sleeps, waiting), bg.loop)
        waiting.wait(5)
        with bg.selector.changed:  # wait until the idle loop has gone back to sleep in select()
            bg.selector.changed.wait_for(lambda n=sleeps[0]: bg.selector.sleeps > n, timeout=5)
        if how.startswith("fut."):
            fut.set_result("value")  # not thread-safe: nobody wakes the sleeping loop
        else:
            bg.loop.call_soon_threadsafe(fut.set_result, "value")
        try:
            print(f"  {how}: waiter got {waiter.result(timeout=0.3)!r}")
        except TimeoutError:
            print(f"  {how}: waiter still asleep after 0.3 s")
            bg.loop.call_soon_threadsafe(lambda: None)  # any threadsafe call wakes the loop
            print(f"  after a wake-up call: waiter got {waiter.result(timeout=5)!r}")


async def _make_future() -> asyncio.Future:
    return asyncio.get_running_loop().create_future()


async def part_e(bg: LoopThread) -> None:
    print("== E. wrap_future: await the other loop's work without blocking this loop ==")
    ticks = 0
    beat = threading.Event()  # set by our heartbeat; the other loop's coroutine waits for it

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1
            beat.set()

    async def drain(timeout: float) -> str:  # runs on the other loop
        await asyncio.to_thread(beat.wait, timeout)  # finishes early only if our heartbeat beat
        return "drained"

    hb = asyncio.create_task(heartbeat())
    cf = asyncio.run_coroutine_threadsafe(drain(5), bg.loop)
    print("  awaited:", await asyncio.wrap_future(cf), "| our heartbeat kept ticking:", beat.is_set())
    ticks = 0
    beat.clear()
    cf = asyncio.run_coroutine_threadsafe(drain(0.1), bg.loop)
    print("  blocked in result():", cf.result(timeout=5), "| heartbeat ticks meanwhile:", ticks)
    hb.cancel()


def main() -> None:
    part_a()
    asyncio.run(part_b())
    bg = LoopThread()
    part_c(bg)
    part_d(bg)
    asyncio.run(part_e(bg))
    print("== F. stopping the background loop ==")
    bg.stop()


main()
