"""Lesson 13, exercise 1: cancel a run_coroutine_threadsafe future, then stop the loop: does the
coroutine's cleanup run?

Stdlib only. Deterministic: in part 1 the loop thread is held in a callback until both the
cancellation and the stop are queued, so they run in the same loop turn (the usual case when one
thread calls fut.cancel() and call_soon_threadsafe(loop.stop) back to back; without the hold it is
a thread race). Every log is read only after the thread that wrote it has been joined.
"""

import asyncio
import threading


def here() -> str:
    return threading.current_thread().name


class AppLoop:
    """A loop in a daemon thread, as run_app_in_thread builds one; drain=True adds asyncio.run's exit step."""

    def __init__(self, drain: bool) -> None:
        self.loop = asyncio.new_event_loop()
        self.drain = drain
        self.thread = threading.Thread(target=self._main, name="app-loop", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        self.loop.run_forever()
        if self.drain:  # after run_forever returns: cancel what is left and run the loop until it has finished
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))


async def cleanup(log: list[str], started: threading.Event, tasks: list[asyncio.Task]) -> None:
    tasks.append(asyncio.current_task())
    started.set()
    try:
        await asyncio.sleep(3600)  # a cleanup much slower than the caller's timeout
    finally:
        log.append(f"cleanup's finally ran in {here()}")


def cancel_then_stop(app: AppLoop, log: list[str], tasks: list[asyncio.Task]) -> None:
    started = threading.Event()
    fut = asyncio.run_coroutine_threadsafe(cleanup(log, started, tasks), app.loop)
    started.wait(5)
    try:
        fut.result(timeout=0.05)
    except TimeoutError:
        inside, gate = threading.Event(), threading.Event()
        app.loop.call_soon_threadsafe(lambda: (inside.set(), gate.wait(5)))
        inside.wait(5)  # the loop thread is busy in that callback: what we queue now runs in its next turn
        fut.cancel()  # queues task.cancel on the loop (call_soon_threadsafe)
        app.loop.call_soon_threadsafe(app.loop.stop)
        gate.set()
    app.thread.join(timeout=5)
    print("  fut.cancelled():", fut.cancelled(), "| task done:", tasks[0].done(), "| log:", log)


def part_1() -> None:
    print("== 1. fut.cancel(), then call_soon_threadsafe(loop.stop) ==")
    log: list[str] = []
    tasks: list[asyncio.Task] = []
    app = AppLoop(drain=False)
    cancel_then_stop(app, log, tasks)
    app.loop.run_until_complete(asyncio.gather(tasks[0], return_exceptions=True))  # only so the script ends clean
    print("  after the main thread ran that loop again:", log, "| task cancelled:", tasks[0].cancelled())
    app.loop.close()


def part_2() -> None:
    print("== 2. the same, but the thread runs the loop until the leftover tasks finish ==")
    log: list[str] = []
    tasks: list[asyncio.Task] = []
    app = AppLoop(drain=True)
    cancel_then_stop(app, log, tasks)
    print("  task cancelled:", tasks[0].cancelled())
    app.loop.close()


def part_3() -> None:
    print("== 3. the timeout on the loop side: wait_for cancels and waits, then stop ==")
    log: list[str] = []
    tasks: list[asyncio.Task] = []
    app = AppLoop(drain=False)
    started = threading.Event()
    fut = asyncio.run_coroutine_threadsafe(asyncio.wait_for(cleanup(log, started, tasks), timeout=0.05), app.loop)
    try:
        fut.result(timeout=5)
    except TimeoutError:
        log.append("result() raised TimeoutError")
    app.loop.call_soon_threadsafe(app.loop.stop)
    app.thread.join(timeout=5)
    print("  task cancelled:", tasks[0].cancelled(), "| log:", log)
    app.loop.close()


part_1()
part_2()
part_3()
