"""Lesson 11: ContextVar get/set/reset, per-task copies, copy_context().run, threads.

Stdlib only. Deterministic: tasks interleave only at explicit sleep(0) points, thread results are
collected and printed by the main thread after join, span ids are counters, not uuids.
"""

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def part_a() -> None:
    print("== A. get / set / reset with a token ==")
    print("  default:", request_id.get())
    t1 = request_id.set("r1")
    t2 = request_id.set("r2")
    print("  after two sets:", request_id.get())
    request_id.reset(t2)
    print("  reset(t2):", request_id.get())
    request_id.reset(t1)
    print("  reset(t1):", request_id.get())
    try:
        request_id.reset(t1)
    except RuntimeError as exc:
        print("  reset(t1) again -> RuntimeError:", str(exc).split(" has ")[-1])


async def child(name: str) -> str:
    seen_at_start = request_id.get()
    request_id.set(f"{request_id.get()}/{name}")
    await asyncio.sleep(0)  # the sibling runs here and sets its own value
    return f"{name}: saw {seen_at_start!r} at start, {request_id.get()!r} after the switch"


async def part_b() -> None:
    print("== B. create_task copies the current context ==")
    token = request_id.set("group")
    tasks = [asyncio.create_task(child("s0")), asyncio.create_task(child("s1"))]
    request_id.set("group-changed-later")  # after create_task: the children do not see it
    for line in await asyncio.gather(*tasks):
        print(" ", line)
    print("  parent still sees:", request_id.get())
    request_id.reset(token)


# A span stack, once as a ContextVar (like Slime's _TRACE_STACK) and once as a plain global list.
span_stack: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("span_stack", default=())
global_stack: list[str] = []
counter = 0


def new_span_id(name: str) -> str:
    global counter
    counter += 1
    return f"{name}#{counter}"


async def traced(name: str, body) -> None:
    span = new_span_id(name)
    parent_cv = span_stack.get()[-1] if span_stack.get() else None
    parent_gl = global_stack[-1] if global_stack else None
    print(f"  start {span:<9} parent via ContextVar={parent_cv!s:<9} via global list={parent_gl}")
    token = span_stack.set(span_stack.get() + (span,))
    global_stack.append(span)
    try:
        await body()
    finally:
        span_stack.reset(token)
        global_stack.remove(span)


async def sample() -> None:
    await asyncio.sleep(0)


async def group() -> None:
    async def body() -> None:
        await asyncio.gather(
            asyncio.create_task(traced("sample", sample)),
            asyncio.create_task(traced("sample", sample)),
        )

    await traced("group", body)


async def part_c() -> None:
    print("== C. two groups at once: whose span is the parent? ==")
    await asyncio.gather(asyncio.create_task(group()), asyncio.create_task(group()))


def read_and_set() -> str:
    before = request_id.get()
    request_id.set("set-inside-run")
    return before


def part_d() -> None:
    print("== D. copy_context().run ==")
    token = request_id.set("outer")
    ctx = contextvars.copy_context()
    before = ctx.run(read_and_set)
    print("  inside run saw:", before)
    print("  outside after run:", request_id.get())
    print("  the copy now holds:", ctx[request_id])
    request_id.reset(token)


def who_am_i() -> str:
    return request_id.get()


async def part_e() -> None:
    print("== E. threads do not inherit the context unless you pass it ==")
    token = request_id.set("loop-task")
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1) as pool:
        print("  run_in_executor(pool, fn):         ", await loop.run_in_executor(pool, who_am_i))
        ctx = contextvars.copy_context()
        print("  run_in_executor(pool, ctx.run, fn):", await loop.run_in_executor(pool, ctx.run, who_am_i))
        print("  pool.submit(fn).result():          ", pool.submit(who_am_i).result())
    print("  asyncio.to_thread(fn):             ", await asyncio.to_thread(who_am_i))
    box: list[str] = []
    thread = threading.Thread(target=lambda: box.append(who_am_i()))
    thread.start()
    thread.join()
    print("  threading.Thread(target=fn):       ", box[0])
    request_id.reset(token)


async def part_f() -> None:
    print("== F. a token belongs to the context that made it ==")
    token = request_id.set("made-in-main-task")

    async def other_task() -> None:
        try:
            request_id.reset(token)
        except ValueError as exc:
            print("  reset in another task -> ValueError:", exc.args[0].split(" was ")[1])

    await asyncio.create_task(other_task())
    request_id.reset(token)
    print("  reset in the task that set it:", request_id.get())


async def main() -> None:
    await part_b()
    await part_c()
    part_d()
    await part_e()
    await part_f()


part_a()
asyncio.run(main())
