"""The time limit on one replay under fuzzing: a generated sequence may make a predicate spin, and
the property `ends` must report that as a hang instead of waiting for ever."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

TIME_LIMIT = 5.0
"""Seconds one replay may take before the property `ends` calls it a hang (where a timer can be set)."""


class Hang(BaseException):
    """Raised by the timer inside a replay that takes too long (a BaseException, so that the
    replay's own ``except Exception`` does not turn it into a crashed cell)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` inside the block after `seconds` (a SIGALRM timer; without one, in a
    worker thread or on Windows, the block runs unlimited)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"the replay took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
