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

Around each cell and each predicate file's import, :data:`GUARD` takes what a predicate could do
to the whole process: ``print`` goes to stderr (stdout is the bench's: ``run --json``), calling
``os._exit``, ``os.fork``, ``os.abort`` or killing its own process raises :class:`Escape` in the
predicate, and a changed working folder or a replaced SIGALRM handler is put back. Each of these
crashes the predicate's own cell (or breaks its file) with a line saying what it did. A predicate
that replaced the SIGALRM handler and then hangs is interrupted through SIGINT instead; one that
took both over ends the bench with one line and exit 2, never a hang. The guard costs a counter,
two stores of ``sys.stdout`` and a look at the SIGALRM handler per cell, nothing per decision.

What it cannot stop: a predicate stuck inside one C call that never returns to the interpreter
(a catastrophic regular expression), or one that catches BaseException in a loop. Neither
happens in a port of a loop; a subprocess per predicate would contain them at a cost the bench
does not pay on every cell.

The limit needs the main thread and POSIX signals; elsewhere (a worker thread, Windows)
:func:`decision_time_limit` runs its body without one.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

DEFAULT_DECISION_TIMEOUT = 5.0
"""Seconds one decision (or one predicate file's import) may take before its cell is crashed."""


class DecisionTimeout(BaseException):
    """Raised inside a decide call (or a predicate import) that has taken longer than the limit.

    A BaseException so that ``except Exception`` in a predicate does not swallow it."""

    def __init__(self, seconds: float, step: int, why: str = "") -> None:
        super().__init__(seconds, step)
        self.seconds = seconds
        self.step = step
        self.why = why

    def __str__(self) -> str:
        why = f" ({self.why})" if self.why else ""
        if self.step == 0:
            return f"did not finish importing after {self.seconds:g} s{why}"
        return f"no decision after {self.seconds:g} s at step {self.step}{why}"


HIJACKED = "it replaced the bench's SIGALRM handler, the decision time limit's"


class _Watch:
    """What the watchdog looks at: the running cell's steps (None between cells)."""

    __slots__ = ("active", "alarm", "importing", "steps", "stuck", "user_interrupt")

    def __init__(self) -> None:
        self.steps: list[Any] | None = None
        self.alarm: Any = None
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
    limit = _Limit(seconds, main_ident)
    previous_alarm = signal.signal(signal.SIGALRM, limit.on_alarm)
    previous_int = signal.signal(signal.SIGINT, limit.on_interrupt)
    WATCH.alarm = limit.on_alarm
    WATCH.active, WATCH.user_interrupt, WATCH.stuck = True, False, None
    thread = threading.Thread(target=limit.watch, name="stopbench-decision-watchdog", daemon=True)
    thread.start()
    try:
        yield True
    finally:
        limit.stop.set()
        thread.join()
        WATCH.active, WATCH.stuck, WATCH.steps, WATCH.alarm = False, None, None, None
        signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGINT, previous_int)


class _Limit:
    """One time limit in force: the watchdog thread (:meth:`watch`), and the SIGALRM and SIGINT handlers
    through which it raises :class:`DecisionTimeout` in the main thread."""

    def __init__(self, seconds: float, main_ident: int) -> None:
        self.seconds = seconds
        self.main_ident = main_ident
        self.stop = threading.Event()
        # Each handler bound once: the watchdog and the guard tell by identity whether it is still installed.
        self.on_alarm: Callable[[int, FrameType | None], None] = self._on_alarm
        self.on_interrupt: Callable[[int, FrameType | None], None] = self._on_interrupt

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        steps, stuck = WATCH.steps, WATCH.stuck
        # Only raise if the main thread is still where the watchdog saw it stuck: the signal may
        # arrive just after the decision returned.
        if steps is not None and stuck is not None and stuck == (id(steps), len(steps)):
            WATCH.stuck = None
            raise DecisionTimeout(self.seconds, 0 if WATCH.importing else len(steps) + 1)

    def _on_interrupt(self, signum: int, frame: FrameType | None) -> None:
        steps, stuck = WATCH.steps, WATCH.stuck
        if steps is not None and stuck is not None and stuck == (id(steps), -len(steps) - 1):
            WATCH.stuck = None  # the watchdog's SIGINT: the predicate took SIGALRM over
            raise DecisionTimeout(self.seconds, 0 if WATCH.importing else len(steps) + 1, HIJACKED)
        WATCH.user_interrupt = True
        raise KeyboardInterrupt

    def watch(self) -> None:
        """The watchdog thread, until :attr:`stop` is set: a few times per limit, whether the watched
        steps have grown; when they have not for the whole limit, :meth:`_interrupt` the main thread."""
        tick = min(max(self.seconds / 5, 0.01), 0.5)
        seen: tuple[int, int] | None = None
        since = time.monotonic()
        while not self.stop.wait(tick):
            steps = WATCH.steps
            now = time.monotonic()
            here = None if steps is None else (id(steps), len(steps))
            if here != seen:
                seen, since = here, now
                continue
            if here is not None and now - since >= self.seconds:
                self._interrupt(here)
                since = now  # a predicate that swallows the exception is signalled again a limit later

    def _interrupt(self, here: tuple[int, int]) -> None:
        """Signal the main thread, stuck at `here`: SIGALRM, or SIGINT when the predicate took SIGALRM
        over; when it took both, end the bench with one line rather than hang."""
        if signal.getsignal(signal.SIGALRM) is self.on_alarm:
            WATCH.stuck = here
            signal.pthread_kill(self.main_ident, signal.SIGALRM)
        elif signal.getsignal(signal.SIGINT) is self.on_interrupt:
            WATCH.stuck = (here[0], -here[1] - 1)
            signal.pthread_kill(self.main_ident, signal.SIGINT)
        else:
            sys.stderr.write(f"stopbench: a predicate took over SIGALRM and SIGINT and made no decision "
                             f"for {self.seconds:g} s; stopped before a verdict\n")
            sys.stderr.flush()
            _REAL["_exit"](2)


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


class Escape(BaseException):
    """Raised inside a predicate that called ``os._exit``, ``os.fork``, ``os.abort`` or killed its
    own process: its cell crashes instead of the bench ending (or running twice)."""


_MAIN_THREAD = threading.main_thread().ident
_SIGALRM = int(getattr(signal, "SIGALRM", 14))
_handler: Callable[[int], Any] = importlib.import_module("_signal").getsignal
"""The handler of a signal, as :func:`signal.getsignal` gives it without turning the answer into an
enum, which costs a caught exception (microseconds) when the handler is a function: looked at once
per cell."""

_REAL: dict[str, Any] = {"_exit": os._exit, "fork": os.fork, "abort": os.abort, "kill": os.kill,
                         "killpg": os.killpg, "chdir": os.chdir, "fchdir": os.fchdir}
"""The functions of :mod:`os` the guard stands in for, as the bench found them (the watchdog's
last resort uses the real ``_exit``)."""


def _in_predicate() -> bool:
    """Whether predicate code runs now in the main thread, inside the guard."""
    return GUARD.depth > 0 and threading.get_ident() == _MAIN_THREAD


def _escape(what: str) -> Escape:
    GUARD.escape = GUARD.escape or what
    return Escape(f"{what} (a predicate cannot end, fork or kill the bench's process)")


def _exit(status: int) -> None:
    if _in_predicate():
        raise _escape(f"called os._exit({status!r})")
    _REAL["_exit"](status)


def _fork() -> int:
    if _in_predicate():
        raise _escape("called os.fork()")
    pid: int = _REAL["fork"]()
    return pid


def _abort() -> None:
    if _in_predicate():
        raise _escape("called os.abort()")
    _REAL["abort"]()


def _kill(pid: int, sig: int) -> None:
    if _in_predicate() and pid in (0, os.getpid(), -os.getpgrp()):
        raise _escape(f"called os.kill on its own process with signal {sig}")
    _REAL["kill"](pid, sig)


def _killpg(pgid: int, sig: int) -> None:
    if _in_predicate() and pgid in (0, os.getpgrp()):
        raise _escape(f"called os.killpg on its own process group with signal {sig}")
    _REAL["killpg"](pgid, sig)


def _chdir(path: Any) -> None:
    if _in_predicate() and GUARD.cwd is None:
        GUARD.cwd = os.getcwd()  # put back when the predicate's cell or import ends
    _REAL["chdir"](path)


def _fchdir(fd: Any) -> None:
    if _in_predicate() and GUARD.cwd is None:
        GUARD.cwd = os.getcwd()
    _REAL["fchdir"](fd)


_STAND_INS: dict[str, Any] = {"_exit": _exit, "fork": _fork, "abort": _abort, "kill": _kill, "killpg": _killpg,
                              "chdir": _chdir, "fchdir": _fchdir}


class _Guard:
    """What a predicate may not do to the process, watched from :meth:`enter` to :meth:`leave`
    (one cell, or one predicate file's import) in the main thread; nested uses (a replay inside a
    decide) count. The stand-ins for the :mod:`os` functions are installed at the first
    :meth:`enter` and stay: outside a predicate's call they are the real functions, so a cell pays
    a counter and two stores of ``sys.stdout``, not a swap of every function."""

    __slots__ = ("cwd", "depth", "escape", "installed", "stdout")

    def __init__(self) -> None:
        self.depth = 0
        self.escape: str | None = None
        self.stdout: Any = None
        self.cwd: str | None = None
        self.installed = False

    def enter(self) -> None:
        """From here on, predicate code runs: stdout goes to stderr, the process cannot be ended.
        Only in the main thread, like the time limit: replays in worker threads (``conform -j``) run
        beside the bench's own code, which must keep the real stdout."""
        if threading.get_ident() != _MAIN_THREAD:
            return
        self.depth += 1
        if self.depth > 1:
            return
        if not self.installed:
            for name, stand_in in _STAND_INS.items():
                setattr(os, name, stand_in)
            self.installed = True
        self.escape, self.cwd = None, None
        self.stdout, sys.stdout = sys.stdout, sys.stderr

    def leave(self) -> str | None:
        """Back to the bench: stdout and the working folder put back; what the predicate did to the
        process, if it did any of it."""
        if threading.get_ident() != _MAIN_THREAD:
            return None
        self.depth -= 1
        if self.depth > 0:
            return None
        sys.stdout = self.stdout
        problem = self.escape
        if self.cwd is not None:
            here = os.getcwd()
            _REAL["chdir"](self.cwd)
            if here != self.cwd:
                problem = problem or f"changed the working folder (os.chdir to {here}); a predicate must not"
        alarm = WATCH.alarm
        if alarm is not None and _handler(_SIGALRM) is not alarm:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGALRM, alarm)
            problem = problem or HIJACKED.replace("it replaced", "replaced")
        return problem


GUARD = _Guard()
"""The one guard of the process: the replay enters it around each cell, discovery around each
predicate file's import."""
