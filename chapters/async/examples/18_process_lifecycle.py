"""Lesson 18: a process's life, from queued work to reaping after a timeout.

  1. Process + Queue handoff: workers take items until a "STOP" sentinel, answer "COMPLETE"
  2. a worker that dies never says "COMPLETE": a blocking get() would wait forever
  3. alive is not ready: is_alive() is true long before the child can serve
  4. join(timeout) returns either way; a child that still has queued data cannot exit yet
  5. terminate() -> join(timeout) -> kill(): the escalation of a stubborn child
  6. subprocess.Popen: communicate(timeout) raises TimeoutExpired and does not kill;
     kill() without a wait leaves a zombie; kill() + communicate() reaps and keeps the output

Every child is started and reaped here; nothing outlives the script. Ordering comes from queues
and events, never from timing; the only time-outs bound waits that are meant to expire.
"""

import multiprocessing as mp
import os
import queue
import signal
import subprocess
import sys

CTX = mp.get_context("spawn")   # a fresh interpreter per child, as Slime's sglang launcher asks for


# ---- code that runs in the children (top level, so "spawn" can import it) ----

def worker(task_q, done_q, name):
    for item in iter(task_q.get, "STOP"):
        if item == "poison":
            raise SystemExit(1)      # an uncaught exception ends the process the same way (exit code 1)
        done_q.put((name, item * item))
    done_q.put("COMPLETE")


def slow_server(go, ready_q, fail):
    go.wait()                        # "loading the model": takes as long as the parent says
    if fail:
        sys.exit(3)                  # e.g. the port was taken: the process ends before it is ready
    ready_q.put("ready")


def big_result(out_q):
    out_q.put(b"x" * 1_000_000)      # more than a pipe holds: the queue's feeder thread must wait
    # the function returns here, but the process cannot exit until the data is read


def stubborn(ready_q, ignore_term):
    if ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready_q.put("handler installed")
    signal.pause()                   # sleep until a signal ends us


# ---- the parent ----

def scene_handoff():
    print("== 1. Process + Queue handoff ==")
    task_q, done_q = CTX.Queue(), CTX.Queue()
    procs = [CTX.Process(target=worker, args=(task_q, done_q, f"w{i}")) for i in range(2)]
    for p in procs:
        p.start()
    for item in range(1, 6):
        task_q.put(item)
    for _ in procs:
        task_q.put("STOP")           # one sentinel per worker
    results, finished = [], 0
    while finished < len(procs):
        msg = done_q.get()
        if msg == "COMPLETE":
            finished += 1
        else:
            results.append(msg[1])
    for p in procs:
        p.join()
    print(f"results (sorted) = {sorted(results)}")
    print(f"exit codes = {[p.exitcode for p in procs]}")


def scene_dead_worker():
    print("== 2. a worker dies before COMPLETE ==")
    task_q, done_q = CTX.Queue(), CTX.Queue()
    p = CTX.Process(target=worker, args=(task_q, done_q, "w0"))
    p.start()
    task_q.put(2)
    task_q.put("poison")
    task_q.put("STOP")
    got = []
    while True:
        try:
            msg = done_q.get(timeout=0.2)   # a plain get() here would never return
        except queue.Empty:
            if not p.is_alive():     # dead: whatever it sent is already in the pipe, take it and stop
                while True:
                    try:
                        got.append(done_q.get_nowait())
                    except queue.Empty:
                        break
                break
            continue
        got.append(msg)
    p.join()
    print(f"received {got}, then nothing; COMPLETE seen: {'COMPLETE' in got}")
    print(f"worker is_alive() = {p.is_alive()}, exitcode = {p.exitcode}")


def wait_ready(p, ready_q):
    while True:
        try:
            return ready_q.get(timeout=0.1)
        except queue.Empty:
            if not p.is_alive():
                return f"died before ready (exitcode {p.exitcode})"


def scene_alive_not_ready():
    print("== 3. alive is not ready ==")
    for fail in (False, True):
        go, ready_q = CTX.Event(), CTX.Queue()
        p = CTX.Process(target=slow_server, args=(go, ready_q, fail))
        p.start()
        print(f"fail={fail}: right after start(): is_alive() = {p.is_alive()}, ready = {not ready_q.empty()}")
        go.set()
        print(f"fail={fail}: wait_ready -> {wait_ready(p, ready_q)}")
        p.join()


def scene_join_timeout():
    print("== 4. join(timeout) returns either way ==")
    out_q = CTX.Queue()
    p = CTX.Process(target=big_result, args=(out_q,))
    p.start()
    ret = p.join(timeout=0.5)
    print(f"join(timeout=0.5) returned {ret}; is_alive() = {p.is_alive()}, exitcode = {p.exitcode}")
    data = out_q.get()
    p.join()
    print(f"after get() of {len(data)} bytes: is_alive() = {p.is_alive()}, exitcode = {p.exitcode}")


def terminate_process(p, timeout):
    """The same steps as Slime's terminate_process, with a report of which step ended the child."""
    if not p.is_alive():
        return "already gone"
    p.terminate()                    # SIGTERM: a request the child may ignore
    p.join(timeout=timeout)
    if p.is_alive():
        p.kill()                     # SIGKILL: cannot be ignored
        p.join()
        return "terminate ignored, kill() ended it"
    return "terminate() ended it"


def scene_escalation():
    print("== 5. terminate -> join(timeout) -> kill ==")
    for ignore in (False, True):
        ready_q = CTX.Queue()
        p = CTX.Process(target=stubborn, args=(ready_q, ignore))
        p.start()
        ready_q.get()                # do not signal before the child has set its handler
        how = terminate_process(p, timeout=0.5)
        name = signal.Signals(-p.exitcode).name
        print(f"ignore SIGTERM={ignore}: {how}; exitcode = {p.exitcode} ({name})")


def state_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]   # R/S running or sleeping, Z zombie
    except FileNotFoundError:
        return "gone"


CHILD = "import sys, time; print('partial output'); sys.stdout.flush(); time.sleep(30)"


def scene_popen():
    print("== 6. subprocess.Popen and TimeoutExpired ==")
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    print(f"poll() while running = {proc.poll()}")
    try:
        try:
            proc.wait(timeout=0.1)
        except subprocess.TimeoutExpired as exc:
            print(f"wait(timeout={exc.timeout}) -> TimeoutExpired; poll() = {proc.poll()}")
        for _ in range(50):          # retry until the child's whole line has arrived (startup time varies)
            try:
                proc.communicate(timeout=0.3)
            except subprocess.TimeoutExpired as exc:
                expired, partial = exc, exc.output
                if partial and partial.endswith(b"\n"):   # the whole line, even if it came in two writes
                    break
        print(f"TimeoutExpired after {expired.timeout} s; output so far {partial!r}; "
              f"still running: poll() = {proc.poll()}")
        # like examples/retool: kill() and nothing else
        proc.kill()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)   # wait until it has died, without reaping it
        print(f"after kill() alone: /proc state = {state_of(proc.pid)} (a zombie: dead, not yet reaped)")
        out, _ = proc.communicate()  # like examples/strands_sglang: kill(), then communicate()
        print(f"after communicate(): returncode = {proc.returncode}, output kept = {out.strip()!r}, "
              f"/proc state = {state_of(proc.pid)}")
    finally:
        if proc.poll() is None:      # whatever went wrong above, do not leave the child behind
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    scene_handoff()
    scene_dead_worker()
    scene_alive_not_ready()
    scene_join_timeout()
    scene_escalation()
    scene_popen()
