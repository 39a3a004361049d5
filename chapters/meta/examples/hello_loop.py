"""A tiny experiment for the writers' page: two coroutines take turns at each await."""

import asyncio


async def worker(name: str, steps: int) -> None:
    for step in range(steps):
        print(f"{name} step {step}")
        await asyncio.sleep(0)  # hand the loop to the other task


async def main() -> None:
    await asyncio.gather(worker("a", 2), worker("b", 2))


asyncio.run(main())
