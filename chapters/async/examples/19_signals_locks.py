"""Lesson 19: signals, process groups and file locks: who releases what after exit.

  1. signal.getsignal / signal.signal: read, replace and restore a handler; SIGKILL cannot be caught
  2. what SIGTERM, SIGINT and SIGKILL do to a child, with and without a handler
  3. signal.alarm as a time limit: the handler raises in the main thread; the old handler stays
  4. process groups: terminate() reaches one process, os.killpg reaches the whole group;
     start_new_session keeps a child out of the group that is signalled
  5. fcntl.flock: LOCK_EX | LOCK_NB, LOCK_UN, and what the kernel releases when the holder dies

Every process signalled here is a child of this script, started and reaped here; the lock file
lives in a temporary directory removed at the end.
"""

import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time


def name_of(handler):
    if handler in (signal.SIG_DFL, signal.SIG_IGN):
        return signal.Handlers(handler).name
    return getattr(handler, "__qualname__", repr(handler))


def start_child(code, *argv, **kwargs):
    """A Python child that prints one line once it is ready; returns after reading that line."""
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)
    proc.ready = proc.stdout.readline().strip()
    return proc


def finish(proc):
    """Reap the child; return (returncode, last line of stdout, last line of stderr)."""
    out, err = proc.communicate()
    last = lambda s: (s.strip().splitlines() or [""])[-1]   # noqa: E731
    return proc.returncode, last(out), last(err)


def scene_handlers():
    print("== 1. getsignal / signal / restore ==")
    print(f"SIGTERM handler now: {name_of(signal.getsignal(signal.SIGTERM))}")
    print(f"SIGINT handler now:  {name_of(signal.getsignal(signal.SIGINT))}")

    def on_term(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, on_term)   # returns the handler it replaced
    print(f"installed: {name_of(signal.getsignal(signal.SIGTERM))}, previous was {name_of(previous)}")
    signal.signal(signal.SIGTERM, previous)
    print(f"restored:  {name_of(signal.getsignal(signal.SIGTERM))}")
    try:
        signal.signal(signal.SIGKILL, on_term)
    except OSError as exc:
        print(f"signal(SIGKILL, ...) -> OSError: {exc.strerror}")


HANDLER_CHILD = """
import signal, sys, time
def on_term(signum, frame):
    print("handler: cleaning up", flush=True)
    sys.exit(128 + signum)
if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
time.sleep(30)
"""


def scene_semantics():
    print("== 2. SIGTERM, SIGINT, SIGKILL on a child ==")
    cases = [("default", signal.SIGTERM), ("default", signal.SIGINT),
             ("handler", signal.SIGTERM), ("handler", signal.SIGKILL)]
    for mode, sig in cases:
        proc = start_child(HANDLER_CHILD, mode)   # returns after "ready": the handler (if any) is set
        proc.send_signal(sig)
        code, out, err = finish(proc)
        print(f"{mode:7} + {sig.name:7}: returncode {code:4}  stdout {out!r:25} stderr {err!r}")


class alarm_timeout:
    """The same steps as Slime's math_dapo_utils.timeout."""

    def __init__(self, seconds):
        self.seconds = seconds

    def handle_timeout(self, signum, frame):
        raise TimeoutError("Timeout")

    def __enter__(self):
        signal.signal(signal.SIGALRM, self.handle_timeout)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        signal.alarm(0)


def scene_alarm():
    print("== 3. signal.alarm as a time limit ==")
    before = signal.getsignal(signal.SIGALRM)
    try:
        with alarm_timeout(1):
            time.sleep(5)               # interrupted: the handler raises inside sleep
    except TimeoutError as exc:
        # no elapsed time is printed: how late the handler runs depends on the machine's load
        print(f"TimeoutError({exc}) raised inside time.sleep(5): the 1 s alarm cut the sleep short")
    with alarm_timeout(1):
        pass                            # finishes in time: __exit__ cancels the alarm
    print(f"alarm(0) returns the seconds that were left: {signal.alarm(0)} (nothing pending)")
    print(f"SIGALRM handler before: {name_of(before)}, after: {name_of(signal.getsignal(signal.SIGALRM))}")
    signal.signal(signal.SIGALRM, before)

    errors = []

    def in_thread():
        try:
            with alarm_timeout(1):
                pass
        except ValueError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    print(f"in a worker thread -> ValueError: {errors[0]}")


SLEEPER = "print('ready', flush=True); import time; time.sleep(30)"


def alive(proc):
    return proc.poll() is None


def scene_groups():
    print("== 4. process groups ==")
    leader = start_child(SLEEPER, process_group=0)                 # setpgid(0, 0): a new group
    member = start_child(SLEEPER, process_group=leader.pid)         # joins the leader's group
    outsider = start_child(SLEEPER, start_new_session=True)        # setsid(): new session, new group
    try:
        group = os.getpgid(leader.pid)
        print(f"leader: group id == its pid: {group == leader.pid}; "
              f"member in that group: {os.getpgid(member.pid) == group}; "
              f"we are not: {os.getpgrp() != group}")
        print(f"outsider: session id == group id == its pid: "
              f"{os.getsid(outsider.pid) == os.getpgid(outsider.pid) == outsider.pid}")

        leader.terminate()              # SIGTERM to one pid
        leader.wait()
        print(f"after leader.terminate(): leader alive {alive(leader)}, member alive {alive(member)}")

        os.killpg(group, signal.SIGINT) # to every process in the group (only the member is left)
        member.wait()
        print(f"after killpg(group, SIGINT): member returncode {member.returncode}, "
              f"outsider alive {alive(outsider)}")
    finally:
        for p in (leader, member, outsider):
            if p.poll() is None:
                p.kill()
            p.communicate()


LOCKER = """
import fcntl, sys, time
f = open(sys.argv[1], "a+")
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy", flush=True)
    sys.exit(1)
print("locked", flush=True)
if sys.argv[2] == "hold":
    time.sleep(30)
"""


def try_lock(path):
    """Open the file again and try LOCK_EX | LOCK_NB; report and release."""
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "busy"
        fcntl.flock(f, fcntl.LOCK_UN)
        return "free"


def scene_flock(tmp):
    print("== 5. fcntl.flock ==")
    path = os.path.join(tmp, "gpu_0.lock")
    mine = open(path, "a+")
    fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
    probe = subprocess.run([sys.executable, "-c", LOCKER, path, "try"], capture_output=True, text=True)
    print(f"we hold it; another process tries LOCK_NB: {probe.stdout.strip()} (exit {probe.returncode})")
    print(f"even a second open() in this process: {try_lock(path)}")
    fcntl.flock(mine, fcntl.LOCK_UN)
    print(f"after LOCK_UN: {try_lock(path)}")

    # the holder dies by SIGKILL: no finally, no close() of its own
    holder = start_child(LOCKER, path, "hold")
    print(f"child: {holder.ready}; we try: {try_lock(path)}")
    holder.kill()
    holder.communicate()
    print(f"child killed by SIGKILL (returncode {holder.returncode}); we try: {try_lock(path)}; "
          f"lock file still exists: {os.path.exists(path)}")

    # a child that inherited the locked descriptor keeps the lock after we close ours
    fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
    kept = start_child(SLEEPER, pass_fds=(mine.fileno(),))
    plain = start_child(SLEEPER)                                     # default close_fds=True
    mine.close()
    print(f"we closed our descriptor; the child that inherited it still runs: {try_lock(path)}")
    kept.kill()
    kept.communicate()
    print(f"after that child is killed: {try_lock(path)} "
          f"(the child without the descriptor is still running: {alive(plain)})")
    plain.kill()
    plain.communicate()


if __name__ == "__main__":
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started in the background by a non-interactive shell, which ignores SIGINT; children would
        # inherit SIG_IGN. Put back what Python installs otherwise, so every launch prints the same.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    scene_handlers()
    scene_semantics()
    scene_alarm()
    scene_groups()
    with tempfile.TemporaryDirectory() as tmp:
        scene_flock(tmp)
