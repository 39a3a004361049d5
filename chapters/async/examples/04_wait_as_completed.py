"""Lesson 04: asyncio.wait (FIRST_COMPLETED, done/pending, timeout) and asyncio.as_completed.

Stdlib only. Deterministic by construction, not by margins between sleeps: in part A each task
waits on its own Event and a stand-in "server" task releases one task per round, only after main
has handled the previous round; in part B the task that must still be running at the timeout
waits on an Event that main sets afterwards, and the one that must be done has an earlier
deadline than the timeout; in part C every task sleeps until an absolute loop time measured from
one start instant (loop.call_at), and timers fire in deadline order even when several expire in
the same loop turn. Sets are printed sorted by task name (a set's own iteration order is not
stable), and no times are printed.
"""

import asyncio


async def sleep_until(deadline: float) -> None:
    """Like asyncio.sleep, but to an absolute loop.time() shared by the tasks of one part."""
    loop = asyncio.get_running_loop()
    wakeup = loop.create_future()
    loop.call_at(deadline, wakeup.set_result, None)
    await wakeup


async def work(name: str, gate: asyncio.Event) -> str:
    await gate.wait()  # the "response" arrives when the gate opens
    return f"{name}-result"


def names(tasks: set[asyncio.Task]) -> list[str]:
    return sorted(t.get_name() for t in tasks)


async def server(gates: dict[str, asyncio.Event], order: list[str], handled: asyncio.Queue) -> None:
    """Stand-in for the outside world: one request finishes per round."""
    for name in order:
        gates[name].set()
        await handled.get()  # main has processed the round this one finished in


async def part_a() -> None:
    print("== A. wait(FIRST_COMPLETED) in a loop, topping up ==")
    gates = {name: asyncio.Event() for name in ("g0", "g1", "g2", "g3")}

    def start(*names: str) -> set[asyncio.Task]:
        return {asyncio.create_task(work(n, gates[n]), name=n) for n in names}

    handled: asyncio.Queue = asyncio.Queue()
    srv = asyncio.create_task(server(gates, ["g1", "g3", "g2", "g0"], handled))
    pending = start("g0", "g1", "g2")
    extra = ["g3"]  # submitted once the first task is done
    round_no = 0
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        round_no += 1
        results = [t.result() for t in sorted(done, key=lambda t: t.get_name())]
        print(f"  round {round_no}: done={names(done)} pending={names(pending)} results={results}")
        if extra:
            pending |= start(*extra)
            print(f"  topped up: {extra}")
            extra = []
        handled.put_nowait(round_no)
    await srv


async def quick(t0: float) -> str:
    await sleep_until(t0 + 0.01)  # t0 is read before wait() starts its 0.05 s timeout
    return "quick-result"


async def part_b() -> None:
    print("== B. wait(timeout=...) does not cancel ==")
    gate = asyncio.Event()
    t0 = asyncio.get_running_loop().time()
    tasks = {asyncio.create_task(quick(t0), name="quick"), asyncio.create_task(work("slow", gate), name="slow")}
    done, pending = await asyncio.wait(tasks, timeout=0.05)
    print(f"  after timeout: done={names(done)} pending={names(pending)}")
    slow = next(iter(pending))
    print("  slow cancelled?", slow.cancelled(), "| slow done?", slow.done())
    gate.set()  # slow's response arrives only now
    print("  awaiting slow anyway ->", await slow)


async def sample(index: int, t0: float, seconds: float) -> tuple[int, str]:
    await sleep_until(t0 + seconds)
    return index, f"s{index}"


async def part_c() -> None:
    print("== C. as_completed: results in completion order ==")
    seconds = [0.08, 0.02, 0.06, 0.04]
    t0 = asyncio.get_running_loop().time()
    tasks = [asyncio.create_task(sample(i, t0, s)) for i, s in enumerate(seconds)]
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
