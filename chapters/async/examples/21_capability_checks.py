"""Lesson 21: asking "is this async?" at a plug-in boundary, and what the answer proves.

  1. six hooks, two questions: iscoroutinefunction(hook) before the call, isawaitable(result) after it
  2. dispatching on iscoroutinefunction misses some; "call, then await if awaitable" takes them all
  3. what isawaitable cannot tell you: a sync hook that blocks passes the check and stalls the loop
  4. isawaitable vs isinstance(x, collections.abc.Awaitable); AsyncIterator is a method check
  5. typing.Protocol with runtime_checkable: isinstance checks that names exist, not that they are async

No timing is printed except a tick count taken while a hook blocks the loop.
"""

import asyncio
import functools
import inspect
import threading
import time
import types
from collections.abc import AsyncIterable, AsyncIterator, Awaitable
from typing import Protocol, runtime_checkable


class Sample:
    def __init__(self):
        self.seen = []


# ---- five ways to write a hook ----

def sync_hook(sample):
    sample.seen.append("sync")
    return sample


async def async_hook(sample):
    sample.seen.append("async")
    return sample


partial_hook = functools.partial(async_hook)        # a partial of an async function


def plain_decorator(fn):                              # a decorator without functools.wraps
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)                    # returns the coroutine object, unawaited
    return wrapper


wrapped_hook = plain_decorator(async_hook)


def wraps_decorator(fn):                              # the same, with functools.wraps
    @functools.wraps(fn)                              # copies the name and sets __wrapped__ ...
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)                    # ... but wrapper is still a plain def
    return wrapper


wraps_hook = wraps_decorator(async_hook)


class CallableHook:                                   # an object whose __call__ is async
    async def __call__(self, sample):
        sample.seen.append("callable")
        return sample


HOOKS = {"sync_hook": sync_hook, "async_hook": async_hook, "partial_hook": partial_hook,
         "wrapped_hook": wrapped_hook, "wraps_hook": wraps_hook, "CallableHook()": CallableHook()}


async def apply_hook(hook, sample):
    """The same check as Slime's _apply_to_sample: call, then await if the result is awaitable."""
    result = hook(sample)
    if inspect.isawaitable(result):
        result = await result
    if result is not None and not isinstance(result, Sample):
        raise TypeError(f"hook returned {type(result).__name__}, expected Sample or None")
    return result or sample


async def apply_hook_by_function_kind(hook, sample):
    """The other way: decide before the call, from what the hook looks like."""
    if inspect.iscoroutinefunction(hook):
        return await hook(sample)
    result = hook(sample)
    if not isinstance(result, Sample):
        if inspect.iscoroutine(result):
            result.close()                            # we will never await it; close it quietly
        raise TypeError(f"hook returned {type(result).__name__}, expected Sample or None")
    return result


async def scene_two_questions():
    print("== 1. before the call vs. after the call ==")
    print(f"{'hook':15} iscoroutinefunction(hook)  isawaitable(hook(...))")
    for name, hook in HOOKS.items():
        result = hook(Sample())
        awaitable = inspect.isawaitable(result)
        if inspect.iscoroutine(result):
            await result                              # do not leave a coroutine unawaited
        print(f"{name:15} {inspect.iscoroutinefunction(hook)!s:26} {awaitable}")

    print("== 2. dispatching on each answer ==")
    for name, hook in HOOKS.items():
        outcomes = []
        for apply in (apply_hook_by_function_kind, apply_hook):
            try:
                outcomes.append(str((await apply(hook, Sample())).seen))
            except TypeError as exc:
                outcomes.append(f"TypeError: {exc}")
        print(f"{name:15} by kind: {outcomes[0]}")
        print(f"{'':15} by result: {outcomes[1]}")


def blocking_hook(sample):
    time.sleep(0.2)                                   # e.g. a synchronous HTTP call or a file read
    return sample


async def scene_blocking():
    print("== 3. what isawaitable cannot tell you ==")
    ticks = 0
    ticked = threading.Event()                        # set on every tick

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1
            ticked.set()

    def blocking_until_tick(sample):                  # blocks its thread until the loop has ticked
        ticked.wait(5)
        return sample

    t = asyncio.create_task(ticker())
    await asyncio.sleep(0)                            # let the ticker start
    before = ticks
    await apply_hook(blocking_hook, Sample())
    print(f"ticks while the sync hook ran for 0.2 s: {ticks - before} (the loop was blocked)")
    before = ticks
    ticked.clear()
    await apply_hook(lambda s: asyncio.to_thread(blocking_until_tick, s), Sample())
    print(f"a blocking hook via asyncio.to_thread: the loop kept ticking: {ticks - before > 0}")
    t.cancel()
    await asyncio.gather(t, return_exceptions=True)


@types.coroutine
def old_style():                                      # a generator-based coroutine
    yield


async def agen():
    yield 1


class OnlyAiter:
    def __aiter__(self):
        return agen()


async def scene_abc():
    print("== 4. inspect.isawaitable vs. collections.abc ==")
    coro = async_hook(Sample())
    gen_coro = old_style()
    fut = asyncio.get_running_loop().create_future()
    for label, obj in (("coroutine", coro), ("types.coroutine generator", gen_coro), ("Future", fut)):
        print(f"{label:26} isawaitable={inspect.isawaitable(obj)!s:5}  "
              f"isinstance(Awaitable)={isinstance(obj, Awaitable)}")
    coro.close()
    gen_coro.close()
    g = agen()
    print(f"async generator: AsyncIterator={isinstance(g, AsyncIterator)}, "
          f"OnlyAiter(): AsyncIterable={isinstance(OnlyAiter(), AsyncIterable)}, "
          f"AsyncIterator={isinstance(OnlyAiter(), AsyncIterator)}")

    def annotated() -> AsyncIterator[int]:
        return [1, 2]                                 # annotations are not checked at run time

    print(f"a function annotated -> AsyncIterator[int] returned {annotated()!r}")


@runtime_checkable
class SandboxLike(Protocol):
    sandbox_id: str

    async def exec(self, cmd: str) -> tuple[int, str, str]: ...

    async def read_file(self, path: str) -> str: ...


class GoodSandbox:
    sandbox_id = "good"

    async def exec(self, cmd):
        return 0, f"ran {cmd}", ""

    async def read_file(self, path):
        return ""


class SyncSandbox:                                    # same names, but plain functions
    sandbox_id = "sync"

    def exec(self, cmd):
        return 0, f"ran {cmd}", ""

    def read_file(self, path):
        return ""


class NoReadSandbox:
    sandbox_id = "no-read"

    async def exec(self, cmd):
        return 0, "", ""


async def scene_protocol():
    print("== 5. typing.Protocol + runtime_checkable ==")
    for sb in (GoodSandbox(), SyncSandbox(), NoReadSandbox()):
        ok = isinstance(sb, SandboxLike)
        try:
            outcome = (await sb.exec("true"))[1] if ok else "not called"
        except TypeError as exc:
            outcome = f"TypeError: {exc}"
        print(f"{type(sb).__name__:14} isinstance={ok!s:5}  await sb.exec(...) -> {outcome}")
    try:
        issubclass(GoodSandbox, SandboxLike)
    except TypeError as exc:
        print(f"issubclass(...) -> TypeError: {exc}")


async def main():
    await scene_two_questions()
    await scene_blocking()
    await scene_abc()
    await scene_protocol()


asyncio.run(main())
