"""Lesson 09: threads -- start/join/is_alive, a Lock around shared state, a stop Event, clean exit.

  1. a thread's life: created, started, running, joined
  2. shared state: a lost update forced with a Barrier, then the same update under a Lock
  3. stopping: a worker that polls a stop Event exits on request; one stuck in a blocking call
     does not, and join(timeout) gives up on it
  4. interpreter exit: non-daemon threads are waited for, then atexit runs; daemon threads are
     abandoned, their finally blocks never run

Every print is ordered by events, joins and barriers, never by timing.
"""

import atexit
import threading

# -- 1 ---------------------------------------------------------------------------------------
print("== 1. start, is_alive, join ==")
go = threading.Event()
seen: list[str] = []


def worker() -> None:
    go.wait()                                    # runs only after main says so
    seen.append(threading.current_thread().name)


t = threading.Thread(target=worker, name="worker-1")
print(f"created:  is_alive={t.is_alive()}, daemon={t.daemon} (inherited from {threading.current_thread().name})")
t.start()
print(f"started:  is_alive={t.is_alive()} (blocked in go.wait())")
go.set()
t.join()                                         # wait until worker() has returned
print(f"joined:   is_alive={t.is_alive()}, the worker ran in thread {seen}")
try:
    t.start()
except RuntimeError as e:
    print(f"start() again: RuntimeError: {e}")

# -- 2 ---------------------------------------------------------------------------------------
print("== 2. shared state ==")
box = {"n": 0}
both_read = threading.Barrier(2)


def racy_increment() -> None:
    v = box["n"]                                 # read
    both_read.wait()                             # force the bad interleaving: both have read 0
    box["n"] = v + 1                             # write: the second write overwrites the first


threads = [threading.Thread(target=racy_increment) for _ in range(2)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(f"two unlocked increments: n = {box['n']} (one update lost)")

lock = threading.Lock()
box["n"] = 0


def locked_increments(times: int) -> None:
    for _ in range(times):
        with lock:                               # read and write are one step for other threads
            v = box["n"]
            box["n"] = v + 1


threads = [threading.Thread(target=locked_increments, args=(1000,)) for _ in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(f"4 threads x 1000 increments under a Lock: n = {box['n']}")
print(f"lock.locked() after all left: {lock.locked()}")

# -- 3 ---------------------------------------------------------------------------------------
print("== 3. stopping a worker ==")
stop = threading.Event()
units = 0


def polling_worker() -> None:
    global units
    while not stop.is_set():                     # checks the flag between units of work
        units += 1
        stop.wait(0.01)                          # sleeps, but wakes at once when stop is set
    print("  polling worker: saw stop, returning")


p = threading.Thread(target=polling_worker, name="poller")
p.start()
while units < 3:
    stop.wait(0.005)
stop.set()
p.join(timeout=5)
print(f"  poller joined within the timeout: {not p.is_alive()}, did at least 3 units: {units >= 3}")

never = threading.Event()                        # stands in for a call that never returns
stuck_started = threading.Event()


def stuck_worker() -> None:
    try:
        stuck_started.set()
        never.wait()                             # blocking call that does not look at any stop flag
    finally:
        print("  stuck worker: finally")         # never printed: see scene 4


s = threading.Thread(target=stuck_worker, name="stuck", daemon=True)
s.start()
stuck_started.wait()
stop.set()                                       # nobody in stuck_worker reads this
s.join(timeout=0.1)
print(f"  join(timeout=0.1) returned; stuck thread is_alive={s.is_alive()}, daemon={s.daemon}")

# -- 4 ---------------------------------------------------------------------------------------
print("== 4. interpreter exit ==")
last_line = threading.Event()


def late_worker() -> None:
    last_line.wait()
    print("  non-daemon worker: still running after main's last line; the interpreter waits for it")


def at_exit() -> None:
    print(f"  atexit: runs after non-daemon threads ended; late alive={late.is_alive()}, "
          f"stuck alive={s.is_alive()} (daemon: abandoned, its finally never runs)")


atexit.register(at_exit)
late = threading.Thread(target=late_worker, name="late")   # daemon=False: inherited from main
late.start()
print("  main: last line of the script")
last_line.set()
