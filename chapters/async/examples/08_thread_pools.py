"""Lesson 08: blocking work inside async def, and how to move it off the loop.

  1. a heartbeat task ticks every 0.01 s; a job waits in three ways and we count the beats
  2. to_thread / run_in_executor: which thread runs the job, and how many run at once per pool
  3. loops by hand: get_running_loop, new_event_loop, set_event_loop, run_until_complete,
     run_forever, all_tasks, and a loop owned by another thread

Timings are never printed: beat counts are bucketed (zero / at least one), pool sizes are hard limits, and gated jobs
are released only after main has seen them all running. Scene 1's buckets hold by construction, not by margins:
time.sleep runs with no await, so the heartbeat cannot run at all; asyncio.sleep(0.2) ends at a later deadline than
the heartbeat's pending 0.01 s timer, and due timers run in deadline order; the pool thread's blocking wait ends
only when the heartbeat has set an Event.
"""

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

WAIT = 0.2


def bucket(beats: int) -> str:
    # two buckets only: even on a starved machine the heartbeat gets at least one beat
    # whenever the loop is free, while a blocked loop gives it exactly zero
    return "0 (stalled)" if beats == 0 else "some (kept beating)"


async def scene_heartbeat() -> None:
    print("== 1. a heartbeat while a job waits ==")
    beats = 0
    beat = threading.Event()                      # set by the heartbeat on every beat

    async def heartbeat() -> None:
        nonlocal beats
        while True:
            await asyncio.sleep(0.01)
            beats += 1
            beat.set()

    def wait_for_beat() -> None:
        beat.wait(5)                              # a blocking call: its thread sleeps until the heartbeat beats

    async def job_time_sleep() -> None:
        time.sleep(WAIT)                          # blocks the thread, and the loop with it

    async def job_asyncio_sleep() -> None:
        await asyncio.sleep(WAIT)                 # suspends this task only

    async def job_to_thread() -> None:
        await asyncio.to_thread(wait_for_beat)    # the blocking call runs in a pool thread

    hb = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.05)                     # let the heartbeat get going
    for job in (job_time_sleep, job_asyncio_sleep, job_to_thread):
        before = beats
        beat.clear()
        await job()
        print(f"  {job.__name__:18} beats during the job: {bucket(beats - before)}")
    hb.cancel()
    await asyncio.gather(hb, return_exceptions=True)


async def scene_pools() -> None:
    print("== 2. who runs the job, and how many at once ==")
    lock = threading.Lock()
    gate = threading.Event()
    active = 0
    peak = 0
    names: list[str] = []

    def blocking_job(i: int) -> int:
        nonlocal active, peak
        with lock:                                # several pool threads update these counters
            active += 1
            peak = max(peak, active)
            names.append(threading.current_thread().name)
        gate.wait()                               # "blocking I/O" that ends when main opens the gate
        with lock:
            active -= 1
        return i * i

    loop = asyncio.get_running_loop()
    print(f"  the loop runs in thread: {threading.current_thread().name}")
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pool")
    ways = {
        # to_thread returns a coroutine: nothing is submitted until it runs, so wrap it in a task
        "asyncio.to_thread": lambda i: asyncio.create_task(asyncio.to_thread(blocking_job, i)),
        "run_in_executor(None)": lambda i: loop.run_in_executor(None, blocking_job, i),
        "run_in_executor(pool of 2)": lambda i: loop.run_in_executor(pool, blocking_job, i),
    }
    for label, submit in ways.items():
        gate.clear()
        names.clear()
        peak = 0
        futures = [submit(i) for i in range(4)]
        expected = 2 if "pool of 2" in label else 4
        while active < expected:                  # the loop stays free while the jobs block
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)                 # give a fifth, third... thread every chance to start
        with lock:
            running = active
        gate.set()
        results = await asyncio.gather(*futures)
        prefixes = sorted({n.rsplit("_", 1)[0] for n in names})
        print(f"  {label:27} running at once: {running}, peak: {peak}, "
              f"thread names start with {prefixes}, results {results}")
    pool.shutdown()


def scene_loops() -> None:
    print("== 3. loops by hand ==")
    try:
        asyncio.get_running_loop()
    except RuntimeError as e:
        print(f"  get_running_loop() outside a coroutine: RuntimeError: {e}")

    async def who_am_i(tag: str) -> str:
        loop = asyncio.get_running_loop()
        wrapped = asyncio.all_tasks() == {asyncio.current_task()}
        return (f"{tag}: thread={threading.current_thread().name}, running loop is owner: {loop is owner}, "
                f"all_tasks() is just the task wrapping this coroutine: {wrapped}")

    owner = asyncio.new_event_loop()
    asyncio.set_event_loop(owner)
    print(f"  after set_event_loop: get_event_loop() is owner -> {asyncio.get_event_loop() is owner}")
    print(" ", owner.run_until_complete(who_am_i("run_until_complete")))

    async def ticker(n: int) -> None:
        for _i in range(n):
            await asyncio.sleep(0)
        pending = sorted(t.get_name() for t in asyncio.all_tasks())
        print(f"  ticker: {n} steps done, all_tasks() = {pending}; calling owner.stop()")
        owner.stop()                              # run_forever returns after this iteration

    owner.create_task(ticker(3), name="ticker")
    owner.create_task(asyncio.sleep(3600), name="sleeper")
    print(f"  before run_forever: {sorted(t.get_name() for t in asyncio.all_tasks(owner))}")
    owner.run_forever()
    left = sorted(t.get_name() for t in asyncio.all_tasks(owner))
    print(f"  run_forever returned; still pending on owner: {left}")
    for t in asyncio.all_tasks(owner):
        t.cancel()
    owner.run_until_complete(asyncio.sleep(0))    # let the cancellation run
    owner.close()
    asyncio.set_event_loop(None)

    def thread_main() -> None:                    # one loop per thread, made and driven by that thread
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            async def report() -> str:
                running = asyncio.get_running_loop()
                return f"thread={threading.current_thread().name}, running loop is this thread's: {running is loop}"
            print("  in the worker thread:", loop.run_until_complete(report()))
        finally:
            loop.close()

    t = threading.Thread(target=thread_main, name="loop-thread")
    t.start()
    t.join()


asyncio.run(scene_heartbeat())
asyncio.run(scene_pools())
scene_loops()
