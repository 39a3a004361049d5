"""Lesson 16: Condition.wait_for / notify_all, re-entrant locking, threading.Timer.

  1. a notify with nobody waiting is lost; wait_for() checks the predicate first, so it does not care
  2. wait_for() releases the lock while it waits; notify_all() wakes every waiter, each re-checks
  3. the shape of Slime's rollout buffer: notify_all() on write, a read that never waits
  4. Lock vs RLock when the same thread takes the lock again (the accelerator selection path)
  5. threading.Timer: a thread that waits on an Event, then calls the function once; cancel() sets it

Threads are ordered by events and by the condition's predicate; nothing printed depends on which
thread the OS runs first.
"""

import threading


def scene_lost_notify() -> None:
    print("== 1. a notify nobody hears ==")
    cond = threading.Condition()
    items: list[int] = []
    with cond:
        items.append(1)
        cond.notify_all()                   # nobody is waiting yet: this wakes no one
    with cond:
        woke = cond.wait(timeout=0.05)      # bare wait(): waits for a *future* notify
    print(f"bare wait() after the notify: returned {woke} (timed out), items = {items}")
    with cond:
        ok = cond.wait_for(lambda: len(items) > 0, timeout=0.05)
    print(f"wait_for(items non-empty): returned {ok} at once, no notify needed")


def scene_wait_for() -> None:
    print("== 2. wait_for releases the lock; notify_all wakes everyone ==")
    cond = threading.Condition()
    items: list[str] = []
    closed = False
    waiting = 0
    got: dict[str, list[str]] = {}

    def consumer(name: str, need: int) -> None:
        nonlocal waiting
        with cond:
            waiting += 1
            cond.notify_all()               # tell main one more consumer is parked
            cond.wait_for(lambda: len(items) >= need or closed)
            got[name] = list(items[:need]) if len(items) >= need else []
            cond.notify_all()               # tell main this consumer is done

    threads = [threading.Thread(target=consumer, args=(n, k)) for n, k in (("A", 1), ("B", 2), ("C", 5))]
    for t in threads:
        t.start()
    with cond:
        cond.wait_for(lambda: waiting == 3)  # all three hold-and-release the lock inside wait_for
        print(f"main holds the lock while 3 consumers wait: {waiting} parked")
        items.extend(["x", "y"])
        cond.notify_all()                   # A and B can go; C re-checks and waits again
    with cond:
        cond.wait_for(lambda: "A" in got and "B" in got)
        print(f"after 2 items: A got {got['A']}, B got {got['B']}, C still waiting: {'C' not in got}")
        closed = True
        cond.notify_all()
    for t in threads:
        t.join()
    print(f"after close: C got {got['C']}")


class MiniBuffer:
    """The locking shape of RolloutBuffer: an RLock, a Condition on it, notify_all on write."""

    def __init__(self) -> None:
        self.data: list[str] = []
        self.lock = threading.RLock()
        self.not_empty = threading.Condition(self.lock)

    def write(self, item: str) -> None:
        with self.lock:
            self.data.append(item)
            self.not_empty.notify_all()

    def read(self) -> list[str]:
        with self.not_empty:                # enters the same RLock; never waits
            if not self.data:
                return []
            out, self.data = self.data, []
            return out

    def read_blocking(self, timeout: float) -> list[str]:
        with self.not_empty:
            if not self.not_empty.wait_for(lambda: self.data, timeout=timeout):
                return []
            out, self.data = self.data, []
            return out


def scene_buffer() -> None:
    print("== 3. the rollout buffer's shape ==")
    buf = MiniBuffer()
    print(f"read() on empty: {buf.read()} (returns at once)")
    buf.write("s1")
    buf.write("s2")
    print(f"read() after two writes: {buf.read()}")

    started = threading.Event()

    def late_writer() -> None:
        started.wait()
        buf.write("s3")

    t = threading.Thread(target=late_writer)
    t.start()
    with buf.lock:                          # hold the lock so the writer cannot run before we wait
        started.set()
        got = buf.read_blocking(timeout=5)
    t.join()
    print(f"read_blocking() while a writer arrives: {got}")


def scene_reentrant() -> None:
    print("== 4. taking the same lock twice in one thread ==")

    def select(lock) -> str:
        with lock:                          # like get_accelerator()
            return register(lock)           # like register_accelerator(), called under the lock

    def register(lock) -> str:
        if not lock.acquire(timeout=0.1):   # a plain `with lock:` here would wait forever
            return "inner acquire timed out (with `with lock:` this is a deadlock)"
        try:
            return "inner acquire succeeded"
        finally:
            lock.release()

    print(f"threading.Lock : {select(threading.Lock())}")
    print(f"threading.RLock: {select(threading.RLock())}")

    rlock = threading.RLock()
    results: list[str] = []

    def other() -> None:
        results.append(f"other thread acquire: {rlock.acquire(timeout=0.05)}")
        try:
            rlock.release()
        except RuntimeError as e:
            results.append(f"other thread release: RuntimeError ({e})")

    with rlock:
        with rlock:                         # held twice by main
            t = threading.Thread(target=other)
            t.start()
            t.join()
    print("\n".join(results))


def scene_timer() -> None:
    print("== 5. threading.Timer ==")
    fired: list[str] = []
    t = threading.Timer(0.05, fired.append, args=["ping"])
    print(f"Timer is a Thread: {isinstance(t, threading.Thread)}, its flag is an Event: "
          f"{isinstance(t.finished, threading.Event)}")
    t.start()
    t.join()
    print(f"after 0.05 s: fired = {fired}")

    t = threading.Timer(10, fired.append, args=["never"])
    t.start()
    t.cancel()                              # sets t.finished: the wait inside run() returns at once
    t.join(timeout=5)
    print(f"cancelled before it fired: fired = {fired}, thread alive = {t.is_alive()}")

    t = threading.Timer(0, fired.append, args=["late"])
    t.start()
    t.join()
    t.cancel()                              # too late: the function already ran
    print(f"cancel() after it fired changes nothing: fired = {fired}")

    ticks: list[int] = []
    stop = threading.Event()

    def every(interval: float) -> None:     # a repeating, stoppable timer built from one Event
        while not stop.wait(interval):
            ticks.append(len(ticks))
            if len(ticks) == 3:
                stop.set()

    th = threading.Thread(target=every, args=(0.01,))
    th.start()
    th.join()
    print(f"Event.wait(interval) loop: ticks = {ticks}")


scene_lost_notify()
scene_wait_for()
scene_buffer()
scene_reentrant()
scene_timer()
