"""Run a program so that nothing it starts outlives it, even what it starts in sessions of its own.

Ending a program's process group is not enough: a CLI that starts a daemon with ``setsid`` (or any
child in a session of its own) puts it out of reach of ``killpg``, and it runs on after the bench has
moved on, holding ports, files and the stderr pipe. :func:`start_contained` therefore starts the
program under a small *reaper* process (this file run as a script, standard library only):

* the reaper is a Linux *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so every process of
  the program's tree whose parent dies is re-parented to the reaper, not to init, however it
  detached itself (a new session, a double fork);
* it runs the program in a process group of its own and waits for it;
* when the program exits, or the reaper gets SIGTERM or SIGINT, or the process that started the
  reaper dies (``PR_SET_PDEATHSIG``: a bench killed with SIGKILL), it kills the program's group and
  then every process left below itself, again and again until none is left, reaps them, and exits
  with the program's status (a program ended by signal N makes the reaper end by signal N, so the
  caller's ``returncode`` is ``-N`` as with a plain Popen).

The caller gets the reaper's :class:`subprocess.Popen`; the reaper runs in a session of its own (out
of reach of the terminal's Ctrl-C, which the caller turns into :func:`end_contained`). Every reaper
still running is in a registry, so an interrupted caller ends them all with
:func:`end_all_contained`. :func:`sigterm_as_interrupt` makes SIGTERM (what CI sends on a timeout)
raise :class:`Terminated` (a KeyboardInterrupt) in the main thread, so a SIGTERM runs the same
clean-up as Ctrl-C: ``finally`` blocks, temporary folders removed, reapers ended.

On a system without ``prctl`` (not Linux) the reaper still ends the program's group, and what left
the group is not found; the bench's CI is Linux.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

REAPER_SCRIPT = Path(__file__).resolve()
"""This file: run as a script (``python -I -S``), it is the reaper; it imports nothing from the bench."""

END_GRACE_S = 10.0
"""How long :func:`end_contained` waits for a reaper to sweep its tree before killing the reaper itself."""

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_SWEEP_PAUSE_S = 0.01

_LIVE: set[subprocess.Popen[Any]] = set()
_LIVE_LOCK = threading.Lock()


def reaper_argv(argv: Sequence[str]) -> list[str]:
    """The command line that runs `argv` under a reaper (started by this process)."""
    return [sys.executable, "-I", "-S", str(REAPER_SCRIPT), str(os.getpid()), "--", *argv]


def start_contained(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                    **popen: Any) -> subprocess.Popen[Any]:
    """Start `argv` under a reaper (see the module docstring) and return the reaper's Popen.

    `popen` is passed to :class:`subprocess.Popen` (cwd, stdin, stdout, stderr, ...); the reaper
    always gets a session of its own. Raises FileNotFoundError (or PermissionError) as Popen
    would when `argv[0]` cannot be run, before anything starts."""
    if not argv:
        raise ValueError("an empty command line")
    _check_runnable(argv[0], (env or os.environ).get("PATH", os.defpath), popen.get("cwd"))
    popen.pop("start_new_session", None)
    proc: subprocess.Popen[Any] = subprocess.Popen(reaper_argv(argv), env=env, start_new_session=True, **popen)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    return proc


def _check_runnable(program: str, path: str, cwd: str | os.PathLike[str] | None) -> None:
    if os.sep in program:
        target = Path(program) if Path(program).is_absolute() or cwd is None else Path(cwd) / program
        if not target.is_file():
            raise FileNotFoundError(2, "No such file or directory", program)
        if not os.access(target, os.X_OK):
            raise PermissionError(13, "Permission denied", program)
    elif shutil.which(program, path=path) is None:
        raise FileNotFoundError(2, "No such file or directory", program)


def wait_contained(proc: subprocess.Popen[Any], timeout: float | None = None) -> int:
    """Wait for a reaper (its program ended and its tree swept); forget it once it has exited."""
    code = proc.wait(timeout)
    _forget(proc)
    return code


def end_contained(proc: subprocess.Popen[Any], grace: float = END_GRACE_S) -> None:
    """End a contained program and everything it started: SIGTERM to the reaper (it kills the tree
    and reaps it), and SIGKILL to the reaper only if it has not exited within `grace` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _forget(proc)


def end_all_contained(grace: float = END_GRACE_S) -> None:
    """End every contained program this process started and that is still running."""
    with _LIVE_LOCK:
        running = list(_LIVE)
    for proc in running:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
    for proc in running:
        end_contained(proc, grace)


def running_contained() -> int:
    """How many contained programs this process started are still running."""
    with _LIVE_LOCK:
        return sum(p.poll() is None for p in _LIVE)


def track(proc: Any) -> None:
    """Count `proc` (a Popen-like handle of a contained program started otherwise, as
    :class:`bench.check.preload.ForkedRun`) among the running, so :func:`end_all_contained` ends it too."""
    with _LIVE_LOCK:
        _LIVE.add(proc)


def _forget(proc: subprocess.Popen[Any]) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(proc)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C is (:func:`sigterm_as_interrupt`), so one clean-up path serves both."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main thread,
    so the clean-up code of Ctrl-C runs; the previous handler is put back after. Outside the main thread: no change."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)



class Interrupts:
    """Ctrl-C and SIGTERM noted while :func:`deferred_interrupts` holds them; :meth:`check` raises the first."""

    def __init__(self) -> None:
        self.pending: KeyboardInterrupt | None = None

    def check(self) -> None:
        """Raise the noted interrupt (:class:`Terminated` for SIGTERM), if any."""
        if self.pending is not None:
            raise self.pending


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[Interrupts]:
    """Within the block, SIGINT and SIGTERM in the main thread are noted, not raised mid-statement; the
    block raises them with :meth:`Interrupts.check` where it is safe to, and a second signal during the
    clean-up that follows is only noted. Why: a KeyboardInterrupt raised while the main thread is inside
    ``concurrent.futures.wait`` can leave a future's lock taken, and the worker finishing that future then
    waits for it for ever. The previous handlers are put back after; a signal ignored stays ignored.
    Outside the main thread: no change."""
    state = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def note(signum: int, frame: object) -> None:
        if state.pending is None:
            state.pending = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    # a signal the process was started ignoring (a background job of a shell, nohup) stays ignored
    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)
                if signal.getsignal(sig) is not signal.SIG_IGN}
    try:
        yield state
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# ---------------------------------------------------------------- the reaper (this file as a script)


def descendants(root: int) -> list[int]:
    """Every live process below `root` (by parent pid, read from /proc); zombies are left out."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 2 or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _sweep(group: int) -> None:
    """Kill the program's group, then every process left below this one, until none is left; reap all."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    me = os.getpid()
    while True:
        left = descendants(me)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        children = True
        while True:  # reap what has exited (re-parented orphans included)
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children = False
                break
            if pid == 0:
                break
        if not left and not children:
            return
        time.sleep(_SWEEP_PAUSE_S)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def reap(parent: int, argv: list[str], program: Callable[[], object] | None = None) -> int:
    """The reaper: run `argv`, sweep its tree when it ends (or on SIGTERM/SIGINT, or when `parent`
    dies), and return a status for :func:`_exit_like`. With `program`, the forked child calls it
    instead of executing `argv` (a preloaded Python program, :mod:`bench.check.zygote`): it never
    returns, it raises out of this function in the child to run the program there."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    child = -1
    ending: list[int] = []

    def end(signum: int, frame: object) -> None:
        ending.append(signum)
        if child > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child, signal.SIGKILL)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, end)
    if os.getppid() != parent:  # the parent died before PR_SET_PDEATHSIG took effect
        return 128 + signal.SIGTERM
    child = os.fork()
    if child == 0:
        _be_the_program(argv, program)
    with contextlib.suppress(OSError):
        os.setpgid(child, child)  # also from here, so the group exists before any signal is sent to it
    if ending:
        end(ending[0], None)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            status = 1 << 8
            break
        except InterruptedError:
            continue
    _sweep(child)
    if ending:
        return -ending[0]
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _be_the_program(argv: list[str], program: Callable[[], object] | None) -> NoReturn:
    """The reaper's forked child becomes the program: a process group of its own, default signal
    handling, then `argv` executed (or `program` called, which raises out to run a preloaded one)."""
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        if program is not None:
            program()
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot start {argv[0]}: {exc}\n".encode())
    os._exit(127)


def _exit_like(code: int) -> None:
    """Exit with `code`, or end by signal -`code` (so the caller sees the program's own status)."""
    if code < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP keep their default: no handler
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(1)
        os._exit(128 - code)
    os._exit(code)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: processes.py PARENT_PID -- PROGRAM [ARG...]\n")
        sys.exit(2)
    _exit_like(reap(int(sys.argv[1]), sys.argv[3:]))
