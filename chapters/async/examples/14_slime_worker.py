"""Lesson 14: the skeleton of Slime's fully-async rollout worker, with stdlib stand-ins.

Same structure and names as slime/rollout/fully_async_rollout.py and slime/utils/async_utils.py at
the pin; generation is a coroutine (group 2 sleeps 60 s, the others finish without waiting), the
data buffer is a deque. Times are scaled down (poll 1.0 -> 0.1 s, join 5 -> 0.5 s, drain wait
30 -> 3 s).

Deterministic: every thread writes only to its own log; the main thread prints the logs after the
worker has been stopped and has logged its drain (an Event, not a sleep), plus happens-before
checks taken from one global sequence counter. A finishing group returns in its first step, so
its done callback runs before the worker's poll sleep can resume the loop (the timer's wake-up
is queued behind it), however late the loop turn comes; no printed line depends on a duration.
"""

import asyncio
import atexit
import itertools
import queue
import threading
from collections import deque

# ---- logging: one list per thread, one global sequence number ------------------------------
_seq = itertools.count()
_seq_lock = threading.Lock()
LOGS: dict[str, list[str]] = {}
SEQ: dict[str, int] = {}  # event key -> sequence number


def log(text: str, key: str | None = None) -> None:
    name = threading.current_thread().name
    with _seq_lock:
        n = next(_seq)
        LOGS.setdefault(name, []).append(text)
        if key:
            SEQ[key] = n


def mark(key: str) -> None:
    with _seq_lock:
        SEQ[key] = next(_seq)


# ---- slime/utils/async_utils.py: one background loop, run() blocks the caller --------------
class AsyncLoopThread:
    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._start_loop, daemon=True, name="rollout-loop")
        self._thread.start()

    def _start_loop(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


async_loop = None


def run(coro):
    global async_loop
    if async_loop is None:
        async_loop = AsyncLoopThread()
    return async_loop.run(coro)


# ---- stand-ins for the data buffer and for generate_and_rm_group ---------------------------
STUCK_GROUP = 2  # never finishes in time; every other group finishes in its first step


class DataBuffer:
    def __init__(self, n: int):
        self.groups = deque([[i] for i in range(n)])

    def get_samples(self, n: int) -> list[list[int]]:
        return [self.groups.popleft()] if self.groups else []


async def generate_and_rm_group(group: list[int]) -> list[int]:
    if group[0] == STUCK_GROUP:
        await asyncio.sleep(60.0)
    return group


# ---- slime/rollout/fully_async_rollout.py ------------------------------------------------
_global_worker = None
_worker_lock = threading.Lock()


def _get_global_worker(data_buffer):
    global _global_worker
    with _worker_lock:
        if _global_worker is None or not _global_worker.worker_thread.is_alive():
            log("_get_global_worker: new AsyncRolloutWorker, start()", "worker-created")
            _global_worker = AsyncRolloutWorker(data_buffer, concurrency=2)
            _global_worker.start()
        else:
            log("_get_global_worker: reuse the running worker")
        return _global_worker


def _stop_global_worker() -> None:
    global _global_worker
    log("atexit: _stop_global_worker()", "stop-called")
    with _worker_lock:
        if _global_worker is not None:
            _global_worker.stop()
            _global_worker = None


class AsyncRolloutWorker:
    def __init__(self, data_buffer, concurrency: int = 10):
        self.data_buffer = data_buffer
        self.concurrency = concurrency
        self.running = True
        self.output_queue: queue.Queue = queue.Queue()
        self.poll_interval = 0.1
        self.worker_thread: threading.Thread | None = None
        self.tasks_by_gid: dict[int, asyncio.Task] = {}  # not in Slime: only for the report

    def start(self) -> None:
        if self.worker_thread is None or not self.worker_thread.is_alive():
            self.worker_thread = threading.Thread(target=self._thread_main, name="fully-async-rollout", daemon=True)
            self.worker_thread.start()

    def stop(self) -> None:
        self.running = False
        log("stop(): running = False, join(timeout=0.5)")
        if self.worker_thread and self.worker_thread.is_alive():
            self.worker_thread.join(timeout=0.5)
        alive = self.worker_thread.is_alive()
        log(f"stop(): join returned, worker thread alive = {alive}", "join-returned")
        WORKER_ALIVE_AFTER_JOIN.append(alive)

    def get_completed_groups(self, limit=None):
        completed = []
        while limit is None or len(completed) < limit:
            try:
                gid, group = self.output_queue.get_nowait()
            except queue.Empty:
                break
            mark(f"get-{gid}")
            completed.append((gid, group))
        return completed

    def _thread_main(self) -> None:
        log("_thread_main: asyncio.run(self._loop())")
        asyncio.run(self._loop())
        log("asyncio.run returned")  # not reached in this run: the interpreter exits first

    async def _loop(self) -> None:
        active_tasks: set[asyncio.Task] = set()
        max_concurrent = self.concurrency
        gid_counter = 0
        while self.running:
            if active_tasks:
                done = {t for t in active_tasks if t.done()}
                active_tasks -= done
            while len(active_tasks) < max_concurrent and self.output_queue.qsize() < max_concurrent and self.running:
                groups = self.data_buffer.get_samples(1)
                if not groups:
                    break
                for group in groups:
                    gid = gid_counter
                    gid_counter += 1
                    log(f"create_task gid {gid}", f"create-{gid}")
                    task = asyncio.create_task(generate_and_rm_group(group))
                    task.add_done_callback(self._make_done_cb(gid))
                    active_tasks.add(task)
                    self.tasks_by_gid[gid] = task
            await asyncio.sleep(self.poll_interval)
        pending = sorted(gid for gid, t in self.tasks_by_gid.items() if not t.done())
        log(f"left the while loop; not done: gids {pending}; asyncio.wait(active_tasks, timeout=3)", "drain")
        DRAIN_LOGGED.set()  # not in Slime: lets the report wait for this line
        await asyncio.wait(active_tasks, timeout=3)

    def _make_done_cb(self, gid: int):
        def _cb(done_task: asyncio.Task) -> None:
            result = done_task.result()
            log(f"done callback: output_queue.put(gid {gid})", f"put-{gid}")
            self.output_queue.put((gid, result))

        return _cb


WORKER_ALIVE_AFTER_JOIN: list[bool] = []
DRAIN_LOGGED = threading.Event()


async def _generate_rollout_async(rollout_id: int, data_buffer, target: int):
    worker = _get_global_worker(data_buffer)
    collected = {}
    while len(collected) < target:
        drained = 0
        for gid, group in worker.get_completed_groups(limit=target - len(collected)):
            collected[gid] = group
            drained += 1
        if not drained:
            await asyncio.sleep(0.05)
    out = sorted(collected.values(), key=lambda g: g[0])
    log(f"rollout {rollout_id}: collected gids {sorted(collected)}, return", f"return-{rollout_id}")
    return out


def generate_rollout_fully_async(rollout_id, data_buffer, target):
    log(f"generate_rollout_fully_async({rollout_id}): run(...) blocks in result()", f"call-{rollout_id}")
    out = run(_generate_rollout_async(rollout_id, data_buffer, target))
    log(f"generate_rollout_fully_async({rollout_id}) returned {out}")
    return out


def report() -> None:
    DRAIN_LOGGED.wait(10)  # the worker wakes from its poll sleep on its own schedule
    for name in ("MainThread", "rollout-loop", "fully-async-rollout"):
        print(f"== thread {name} ==")
        for line in LOGS.get(name, []):
            print("  " + line)
    print("== happens-before checks (global sequence numbers) ==")
    gets = sorted(int(k[4:]) for k in SEQ if k.startswith("get-"))
    print("  worker created after the first call:", SEQ["call-0"] < SEQ["worker-created"])
    print("  every group put before it was got:", all(SEQ[f"put-{g}"] < SEQ[f"get-{g}"] for g in gets))
    print("  groups got by the caller side:", gets)
    print("  stop called after the last rollout returned:", SEQ["return-1"] < SEQ["stop-called"])
    print("  worker entered its drain after stop() set running = False:", SEQ["stop-called"] < SEQ["drain"])
    print("  worker thread abandoned after join(timeout):", WORKER_ALIVE_AFTER_JOIN == [True])


atexit.register(report)  # registered first, so it runs after _stop_global_worker
atexit.register(_stop_global_worker)  # like Slime: registered at import time

buffer = DataBuffer(6)
generate_rollout_fully_async(0, buffer, target=4)
generate_rollout_fully_async(1, buffer, target=1)
log("main script ends; interpreter exit runs the atexit handlers")
