"""A virtual clock for a driven Python loop's retry back-off (imported at start-up as sitecustomize).

A sleep of SLEEP_S seconds or more (``time.sleep``, ``asyncio.sleep``) returns at once, and the
loop's clock (``time.time``, ``time.monotonic``, ``time.perf_counter`` and their ``_ns`` forms,
and so an asyncio loop's ``time()``) moves on by the whole sleep, so an elapsed-time budget sees
what the real run would have seen. Shorter sleeps (polls) run on real time. The clock is set to
the sleep's deadline and never back, so two threads sleeping side by side advance it by the
longer sleep, as in real time.

The campaign (bench/conform/clock.py) puts this folder on PYTHONPATH for every Python driver when
it runs on the virtual clock; the driver scripts are not edited. It uses
the standard library only, as it runs in each loop's own venv.
"""

from __future__ import annotations

import asyncio
import threading
import time

SLEEP_S = 1.0

_real_sleep = time.sleep
_real_monotonic = time.monotonic
_real_time = time.time
_real_perf_counter = time.perf_counter
_real_monotonic_ns = time.monotonic_ns
_real_time_ns = time.time_ns
_real_perf_counter_ns = time.perf_counter_ns
_real_asyncio_sleep = asyncio.sleep

_offset = 0.0  # seconds the virtual clock is ahead of the real one
_lock = threading.Lock()


def _advance(seconds: float) -> None:
    """Set the clock to the deadline of a sleep of `seconds` that starts now (never back)."""
    global _offset
    with _lock:
        deadline = _real_monotonic() + _offset + seconds
        _offset = max(_offset, deadline - _real_monotonic())


def sleep(seconds: float) -> None:
    if seconds >= SLEEP_S:
        _advance(seconds)
        _real_sleep(0)
    else:
        _real_sleep(seconds)


async def asyncio_sleep(delay: float, result: object = None) -> object:
    if delay >= SLEEP_S:
        _advance(delay)
        delay = 0
    return await _real_asyncio_sleep(delay, result)


def _ns() -> int:
    return int(_offset * 1e9)


time.sleep = sleep
time.monotonic = lambda: _real_monotonic() + _offset
time.time = lambda: _real_time() + _offset
time.perf_counter = lambda: _real_perf_counter() + _offset
time.monotonic_ns = lambda: _real_monotonic_ns() + _ns()
time.time_ns = lambda: _real_time_ns() + _ns()
time.perf_counter_ns = lambda: _real_perf_counter_ns() + _ns()
asyncio.sleep = asyncio_sleep  # type: ignore[assignment]
asyncio.tasks.sleep = asyncio_sleep  # type: ignore[assignment]
