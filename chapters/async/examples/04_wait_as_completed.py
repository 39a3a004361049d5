"""Lesson 04: asyncio.wait (FIRST_COMPLETED, done/pending, timeout) and asyncio.as_completed.

Stdlib only. Deterministic: in part A finish times differ by at least 0.04 s (g3 starts only
when main resumes, so a busy machine must not be able to push it past g2), in parts B and C by
at least 0.02 s (timers that expire together still run in deadline order), sets are printed
sorted by task name (a set's own iteration order is not stable), and no times are printed.
"""

import asyncio


async def work(name: str, seconds: float) -> str:
    await asyncio.sleep(seconds)
    return f"{name}-result"


def start(specs: dict[str, float]) -> set[asyncio.Task]:
    return {asyncio.create_task(work(n, s), name=n) for n, s in specs.items()}


def names(tasks: set[asyncio.Task]) -> list[str]:
    return sorted(t.get_name() for t in tasks)


async def part_a() -> None:
    print("== A. wait(FIRST_COMPLETED) in a loop, topping up ==")
    pending = start({"g0": 0.18, "g1": 0.04, "g2": 0.12})
    extra = {"g3": 0.04}  # submitted once the first task is done
    round_no = 0
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        round_no += 1
        results = [t.result() for t in sorted(done, key=lambda t: t.get_name())]
        print(f"  round {round_no}: done={names(done)} pending={names(pending)} results={results}")
        if extra:
            pending |= start(extra)
            print(f"  topped up: {list(extra)}")
            extra = {}


async def part_b() -> None:
    print("== B. wait(timeout=...) does not cancel ==")
    tasks = start({"quick": 0.01, "slow": 0.10})
    done, pending = await asyncio.wait(tasks, timeout=0.05)
    print(f"  after timeout: done={names(done)} pending={names(pending)}")
    slow = next(iter(pending))
    print("  slow cancelled?", slow.cancelled(), "| slow done?", slow.done())
    print("  awaiting slow anyway ->", await slow)


async def sample(index: int, seconds: float) -> tuple[int, str]:
    await asyncio.sleep(seconds)
    return index, f"s{index}"


async def part_c() -> None:
    print("== C. as_completed: results in completion order ==")
    seconds = [0.08, 0.02, 0.06, 0.04]
    tasks = [asyncio.create_task(sample(i, s)) for i, s in enumerate(seconds)]
    data = []
    for next_done in asyncio.as_completed(tasks):
        item = await next_done  # the result of whichever task finished next
        data.append(item)
        print(f"  got {item} ({len(data)}/{len(tasks)})")
    data.sort(key=lambda item: item[0])
    print("  sorted by index:", data)


async def main() -> None:
    await part_a()
    await part_b()
    await part_c()


asyncio.run(main())
