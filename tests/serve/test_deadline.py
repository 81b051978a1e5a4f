"""bench.serve.deadline.within: work that never waits arms no timer; work that waits is bounded as under
``asyncio.timeout``, counted from its first wait; results, exceptions and cancellation pass through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.serve.deadline import within


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts the timers armed on it."""

    timers = 0

    def call_at(self, when: float, callback: Any, *args: Any, context: Any = None) -> asyncio.TimerHandle:
        self.timers += 1
        return super().call_at(when, callback, *args, context=context)


def run(coro: Any) -> tuple[Any, int]:
    loop = CountingLoop()
    try:
        return loop.run_until_complete(coro), loop.timers
    finally:
        loop.close()


async def ready(value: int) -> int:
    return value


def test_work_that_completes_without_waiting_arms_no_timer() -> None:
    async def main() -> int:
        return await within(ready(7), 0.5)

    assert run(main()) == (7, 0)


def test_work_that_waits_gets_its_result_through_each_wait() -> None:
    async def twice() -> list[int]:
        got = []
        for n in (1, 2):
            fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(fut.set_result, n)
            got.append(await fut)
        return got

    async def main() -> list[int]:
        return await within(twice(), 5.0)

    value, timers = run(main())
    assert value == [1, 2] and timers >= 1


def test_work_that_waits_longer_than_the_deadline_is_cut_with_timeout_error() -> None:
    finished = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            finished.append("cleaned up")

    async def main() -> None:
        await within(slow(), 0.05)

    with pytest.raises(TimeoutError):
        run(main())
    assert finished == ["cleaned up"]


def test_an_exception_of_the_work_passes_through_before_or_after_a_wait() -> None:
    async def fails_at_once() -> None:
        raise ValueError("at once")

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    async def main(work: Any) -> None:
        await within(work, 5.0)

    with pytest.raises(ValueError, match="at once"):
        run(main(fails_at_once()))
    with pytest.raises(KeyError, match="later"):
        run(main(fails_later()))


def test_cancelling_the_task_cancels_the_work_and_is_not_a_timeout() -> None:
    seen = []

    async def waits() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def main() -> str:
        task = asyncio.ensure_future(within(waits(), 5.0))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "not cancelled"

    assert run(main())[0] == "cancelled" and seen == ["cancelled"]
