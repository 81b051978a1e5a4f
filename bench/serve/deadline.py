"""A deadline armed only when the work waits: :func:`within`.

A request's body has most often arrived by the time its handler runs, and an answer most often fits
the transport's buffer: reading the one and writing the other then complete without waiting. Arming
a deadline around them anyway (``asyncio.timeout``: a timer created and cancelled on the event loop)
is one of the largest costs of a request that the bench's own code adds (docs/reference/performance.md).
:func:`within` runs a coroutine's first step at once, and only when that step waits does it run the
rest under ``asyncio.timeout(seconds)``, counted from then: the same bound on the waiting, with no
timer for work that never waits.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["within"]

T = TypeVar("T")


async def within(work: Coroutine[Any, Any, T], seconds: float) -> T:
    """`work`'s result; ``TimeoutError`` when it waits for longer than `seconds` in all (its first
    wait starts the clock, as ``asyncio.timeout`` entered just before that wait would)."""
    try:
        waiting = work.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    async with asyncio.timeout(seconds):
        return await _resume(work, waiting)


@types.coroutine
def _resume(work: Coroutine[Any, Any, T], waiting: Any) -> Generator[Any, Any, T]:
    """The rest of `work`, which is suspended on `waiting` (the future its first step yielded), as an
    awaitable: what ``await`` on a fresh coroutine does, picked up after that first step (a value sent
    in goes on to `work`; a cancellation or other exception thrown in is thrown into `work`)."""
    value = waiting
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            work.close()
            raise
        except BaseException as exc:
            try:
                value = work.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                value = work.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
