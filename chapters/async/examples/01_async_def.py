"""Lesson 01: defining, calling and running a coroutine function.

Stdlib only. The output is deterministic: no times, ids or addresses are printed.
"""

import asyncio
import gc
import inspect
import warnings

events: list[str] = []  # what the coroutine body actually did


async def score(sample_id: int) -> float:
    events.append(f"score({sample_id}) body starts")
    await asyncio.sleep(0)  # a real suspension point
    events.append(f"score({sample_id}) body ends")
    return sample_id / 10


print("== 1. define ==")
print("iscoroutinefunction(score):", inspect.iscoroutinefunction(score))
print("events:", events)

print("== 2. call ==")
coro = score(7)
print("type(score(7)):", type(coro).__name__)
print("iscoroutine:", inspect.iscoroutine(coro))
print("events:", events)  # still empty: calling did not run the body

print("== 3. run ==")
result = asyncio.run(coro)
print("asyncio.run(...) returned:", result)
print("events:", events)

print("== 4. run the same object again ==")
try:
    asyncio.run(coro)
except RuntimeError as exc:
    print("RuntimeError:", exc)

print("== 5. retry: same object vs factory ==")
attempts = 0


async def flaky() -> str:
    global attempts
    attempts += 1
    if attempts == 1:
        raise ConnectionError("first attempt fails")
    return f"ok on attempt {attempts}"


async def retry_same_object(coro, tries: int = 2) -> str:
    for i in range(tries):
        try:
            return await coro  # the SAME object every time
        except ConnectionError as exc:
            print(f"  try {i + 1}: {exc}")
    raise RuntimeError("out of tries")


async def retry_with_factory(make_coro, tries: int = 2) -> str:
    for i in range(tries):
        try:
            return await make_coro()  # a NEW coroutine object each time
        except ConnectionError as exc:
            print(f"  try {i + 1}: {exc}")
    raise RuntimeError("out of tries")


print("same object:")
try:
    asyncio.run(retry_same_object(flaky()))
except RuntimeError as exc:
    print("  RuntimeError:", exc)

attempts = 0
print("factory:")
print("  result:", asyncio.run(retry_with_factory(lambda: flaky())))

print("== 6. called but never awaited ==")
events.clear()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    forgotten = score(8)  # creates the object, runs nothing
    del forgotten  # drop the only reference
    gc.collect()  # make sure it is finalized right here
for w in caught:
    print(f"{w.category.__name__}: {w.message}")
print("events:", events)  # the body of score(8) never ran
