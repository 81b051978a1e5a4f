"""Containing predicates: a per-decision time limit, and telling a user's Ctrl-C from a predicate's.

A predicate is someone else's code run inside the bench's process. When it never returns
(``while True: pass``, ``time.sleep(60)``) the bench must mark its cell crashed and go on, and it
must do so without slowing the normal path, where a decision takes a microsecond or two.

The mechanism: inside :func:`decision_time_limit`, a watchdog thread wakes a few times per limit
and looks at the cell being replayed (the replay registers its list of steps with :data:`WATCH`,
once per cell). When that list has not grown for the whole limit, the thread sends SIGALRM to
the main thread, whose handler raises :class:`DecisionTimeout` in the middle of the decide call.
The replay itself pays one attribute store per cell and nothing per decision; a signal
interrupts ``time.sleep`` and a pure-Python loop alike. :class:`DecisionTimeout` is a
BaseException, so a predicate's ``except Exception`` cannot swallow it. Importing a predicate
file is watched the same way (:func:`watch_import`).

What it cannot stop: a predicate stuck inside one C call that never returns to the interpreter
(a catastrophic regular expression), or one that catches BaseException in a loop. Neither
happens in a port of a loop; a subprocess per predicate would contain them at a cost the bench
does not pay on every cell.

The limit needs the main thread and POSIX signals; elsewhere (a worker thread, Windows)
:func:`decision_time_limit` runs its body without one.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

DEFAULT_DECISION_TIMEOUT = 5.0
"""Seconds one decision (or one predicate file's import) may take before its cell is crashed."""


class DecisionTimeout(BaseException):
    """Raised inside a decide call (or a predicate import) that has taken longer than the limit.

    A BaseException so that ``except Exception`` in a predicate does not swallow it."""

    def __init__(self, seconds: float, step: int) -> None:
        super().__init__(seconds, step)
        self.seconds = seconds
        self.step = step

    def __str__(self) -> str:
        if self.step == 0:
            return f"did not finish importing after {self.seconds:g} s"
        return f"no decision after {self.seconds:g} s at step {self.step}"


class _Watch:
    """What the watchdog looks at: the running cell's steps (None between cells)."""

    __slots__ = ("active", "importing", "steps", "stuck", "user_interrupt")

    def __init__(self) -> None:
        self.steps: list[Any] | None = None
        self.importing = False
        self.active = False
        self.user_interrupt = False
        self.stuck: tuple[int, int] | None = None


WATCH = _Watch()
"""The one watch of the process. The replay sets ``WATCH.steps`` to its cell's list of steps at
the start of a cell and back to None at the end."""


@contextmanager
def decision_time_limit(seconds: float | None = DEFAULT_DECISION_TIMEOUT) -> Iterator[bool]:
    """Within the block, a decision (or a predicate import) that takes longer than `seconds`
    raises :class:`DecisionTimeout` inside it. Yields whether a limit is in force (False in a
    worker thread, without SIGALRM, when `seconds` is None or 0, or when a limit is already in force
    from an enclosing block, which then keeps applying).

    Ctrl-C from the user inside the block raises KeyboardInterrupt as usual and is remembered
    (:func:`user_interrupted`), so that a replay can tell it from a predicate raising
    KeyboardInterrupt itself."""
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "pthread_kill")
              and threading.current_thread() is threading.main_thread() and not WATCH.active)
    if not usable:
        yield False
        return
    assert seconds is not None
    main_ident = threading.main_thread().ident
    assert main_ident is not None
    stop = threading.Event()

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        steps, stuck = WATCH.steps, WATCH.stuck
        # Only raise if the main thread is still where the watchdog saw it stuck: the signal may
        # arrive just after the decision returned.
        if steps is not None and stuck is not None and stuck == (id(steps), len(steps)):
            WATCH.stuck = None
            raise DecisionTimeout(seconds, 0 if WATCH.importing else len(steps) + 1)

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        WATCH.user_interrupt = True
        raise KeyboardInterrupt

    def watchdog() -> None:
        tick = min(max(seconds / 5, 0.01), 0.5)
        seen: tuple[int, int] | None = None
        since = time.monotonic()
        while not stop.wait(tick):
            steps = WATCH.steps
            now = time.monotonic()
            here = None if steps is None else (id(steps), len(steps))
            if here != seen:
                seen, since = here, now
                continue
            if here is not None and now - since >= seconds:
                WATCH.stuck = here
                signal.pthread_kill(main_ident, signal.SIGALRM)
                since = now  # a predicate that swallows the exception is signalled again a limit later

    previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
    previous_int = signal.signal(signal.SIGINT, on_interrupt)
    WATCH.active, WATCH.user_interrupt, WATCH.stuck = True, False, None
    thread = threading.Thread(target=watchdog, name="stopbench-decision-watchdog", daemon=True)
    thread.start()
    try:
        yield True
    finally:
        stop.set()
        thread.join()
        WATCH.active, WATCH.stuck, WATCH.steps = False, None, None
        signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGINT, previous_int)


@contextmanager
def watch_import() -> Iterator[None]:
    """Watch an import under the time limit in force (if any): one that takes longer raises
    :class:`DecisionTimeout` with step 0."""
    outer = WATCH.steps
    WATCH.steps, WATCH.importing = [], True  # a fresh marker: each import gets the whole limit
    try:
        yield
    finally:
        WATCH.steps, WATCH.importing = outer, False


def user_interrupted() -> bool:
    """Whether a KeyboardInterrupt now propagating came from the user's Ctrl-C (under a time
    limit), rather than from a predicate raising it. Without a limit in force every
    KeyboardInterrupt counts as the user's."""
    return WATCH.user_interrupt or not WATCH.active
