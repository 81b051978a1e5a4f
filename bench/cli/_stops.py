"""Answers the bench's own servers cut off when a command stops (Ctrl-C, SIGTERM, the end of a run):
uvicorn reports each answer its shutdown cancels (one a ``stall`` fault holds back, one still streaming)
as an exception with its traceback, but a stop that cuts an answer is the stop the user or the command
asked for. :data:`CUT` keeps them out of the log and counts them, so ``serve`` can say so in one line;
:func:`main <bench.cli.main>` installs it for every command."""

from __future__ import annotations

import logging


class CutAnswers(logging.Filter):
    """A filter on uvicorn's error log dropping (and counting) the cancelled answers."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio  # here: every command installs the filter, and most never start a server

        if record.exc_info is not None and isinstance(record.exc_info[1], asyncio.CancelledError):
            self.count += 1
            return False
        return True


CUT = CutAnswers()
"""The one filter, installed by :func:`quiet_cut_answers`."""


def quiet_cut_answers() -> None:
    """Install :data:`CUT` on uvicorn's error log (once)."""
    log = logging.getLogger("uvicorn.error")
    if CUT not in log.filters:
        log.addFilter(CUT)


class StopSignals:
    """Ctrl-C and SIGTERM as the user's request to stop a serving command (``serve``, ``record``):
    installed when made, before the line a client may wait for, so that a stop after it is clean;
    :meth:`wait` returns once one came, and :attr:`names` says which.

    The handler only appends to :attr:`names` and :meth:`wait` polls it. A handler runs in the main
    thread between any two bytecodes, so one that takes a lock (``threading.Event.set``) can deadlock
    when the main thread is inside ``Event.wait`` holding that lock: the command then never ends."""

    POLL = 0.05
    """Seconds between two looks at :attr:`names`."""

    def __init__(self) -> None:
        import signal

        self.names: list[str] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)

    def _stop(self, number: int, _frame: object) -> None:
        import signal

        self.names.append(signal.Signals(number).name)

    def wait(self) -> None:
        import time

        while not self.names:
            time.sleep(self.POLL)
