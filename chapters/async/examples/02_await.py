"""Lesson 02: await waits; it does not make things run at the same time.

Stdlib only. Deterministic: the order is fixed by sleeps far apart (0.02 s vs 0.05 s);
no time values are printed, only comparisons that cannot flip.
"""

import asyncio


async def step(name: str, seconds: float, main_task: asyncio.Task) -> str:
    same = asyncio.current_task() is main_task
    print(f"  {name}: start (in main's task: {same})")
    await asyncio.sleep(seconds)  # suspend this task; the loop is free meanwhile
    print(f"  {name}: done")
    return f"{name}-ok"


async def quick() -> int:
    return 1  # no await inside: never suspends


async def main() -> None:
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()

    print("== A. three awaits in a row ==")
    loop.call_later(0.02, print, "  (loop: a timer fired while main was suspended)")
    t0 = loop.time()
    user = await step("ensure_user", 0.05, me)
    config = await step("write_config", 0.10, me)
    code = await step("launch_and_wait", 0.15, me)
    elapsed = loop.time() - t0
    print("  results:", [user, config, code])
    print("  elapsed >= 0.05 + 0.10 + 0.15:", elapsed >= 0.30 - 0.001)

    print("== B. await without a suspension point ==")
    loop.call_soon(print, "  (loop: call_soon callback runs)")
    print("  callback scheduled")
    value = await quick()
    print(f"  await quick() -> {value}; the callback has not run yet")
    await asyncio.sleep(0)
    print("  after await asyncio.sleep(0)")


asyncio.run(main())
