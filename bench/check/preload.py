"""``check --preload``: a Python program's interpreter and imports loaded once, each run a fork of them.

Most of a small Python loop's run is its start: the interpreter, then ``import openai`` and the
like, again for every sequence. With ``--preload`` one process per check of a loop, the *zygote*
(:mod:`bench.check.zygote`, run by the program's own interpreter with its options), imports what the
program's script imports at its top level, and each run is a fork of it: a reaper in a session of its
own (the same :func:`bench.check.processes.reap` as for a program started from scratch) and below it
the program, in a process group of its own with its own descriptors, working folder, environment and
arguments, running the script as ``__main__``. Its crash, exit status, signals and descendants are
its own, as without preloading, and :class:`ForkedRun` is the handle the runner waits on and ends
as it does a :class:`subprocess.Popen` of a reaper.

What a fork cannot see (docs/check.md): a module imported by the zygote read the environment once,
at import, with the variables of this module's :func:`zygote_env` (its base URLs point nowhere), not
those of the run; the hash seed and anything else decided at the interpreter's start are the
zygote's; a thread started at import does not run in the forks.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from bench.check.command import script_argument
from bench.check.processes import track

ZYGOTE = Path(__file__).resolve().with_name("zygote.py")
BOOT = ("import sys\nif sys.path and sys.path[0] in ('', '.'): del sys.path[0]\n"
        "import runpy\nrunpy.run_path(sys.argv[1], run_name='__stopbench_zygote__')")
"""``-c`` code that starts the zygote: without ``-c``'s working folder first on ``sys.path`` (the
zygote puts there what the program's interpreter would)."""

NOWHERE = "http://127.0.0.1:9"
"""The server root the zygote's environment names (the discard port): a module that reads a base URL
at import reads one that answers nothing, so its requests fail rather than reach another server."""

READY_TIMEOUT_S = 300.0
"""How long the zygote may take to import the program's modules."""

_PYTHON = re.compile(r"(python|pypy)[0-9.]*")


@dataclass(frozen=True, slots=True)
class Target:
    """A Python program's command line, split: the interpreter and its options, a script (``script``)
    or a module (``module``, ``-m``), and the program's own arguments."""

    interpreter: tuple[str, ...]
    kind: str
    target: str
    args: tuple[str, ...]


def python_target(argv: Sequence[str]) -> Target | None:
    """`argv` as a :class:`Target` when it runs a Python script or module (``python [OPTIONS] SCRIPT
    ...`` or ``python [OPTIONS] -m MODULE ...``), else None (``--preload`` refuses it)."""
    if not argv or not _PYTHON.fullmatch(Path(argv[0]).name):
        return None
    i = script_argument(argv)
    if i is not None:
        return Target(tuple(argv[:i]), "script", argv[i], tuple(argv[i + 1:]))
    if "-m" in argv:
        m = list(argv).index("-m")
        if m + 1 < len(argv) and all(a.startswith("-") and a != "-c" for a in argv[1:m]):
            return Target(tuple(argv[:m]), "module", argv[m + 1], tuple(argv[m + 2:]))
    return None


class ForkedRun:
    """A run forked from the zygote, as the runner sees a contained program: ``pid`` (its reaper's, a
    session and group of its own), :meth:`poll`, :meth:`wait`, :meth:`send_signal`, ``returncode``
    (negative for a signal, as :class:`subprocess.Popen`'s)."""

    def __init__(self, pid: int, args: Sequence[str]) -> None:
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _end(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """The preloading process of one Python program (see the module docstring); a context manager.

    :meth:`start` runs the program once in a fork, as :func:`bench.check.processes.start_contained`
    starts it from scratch. Leaving the block closes the socket: the zygote ends every run still going
    (each reaper sweeps its tree) and exits. Raises OSError when the interpreter cannot be started or
    the zygote ends before it is ready (its last stderr lines say why)."""

    def __init__(self, target: Target, *, cwd: Path, env: Mapping[str, str]) -> None:
        self.target = target
        self.loaded: list[str] = []
        self.failed: list[str] = []
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[threading.Event, list[ForkedRun]]] = {}
        self._runs: dict[int, ForkedRun] = {}
        self._next = 0
        self._closed = False
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the zygote runs; closed by close()
        self._learn = tempfile.TemporaryDirectory(prefix="stopbench-preload-")
        argv = [*target.interpreter, "-c", BOOT, str(ZYGOTE), str(os.getpid()), str(theirs.fileno()),
                self._learn.name, target.kind, target.target]
        try:
            self._proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=self._err, pass_fds=(theirs.fileno(),),
                                          start_new_session=True)
        except OSError:
            self._sock.close()
            self._err.close()
            self._learn.cleanup()
            raise
        finally:
            theirs.close()
        self._ready()
        self._reader = threading.Thread(target=self._read, name="stopbench-zygote", daemon=True)
        self._reader.start()

    def _ready(self) -> None:
        self._sock.settimeout(READY_TIMEOUT_S)
        try:
            data = self._sock.recv(1 << 20)
        except TimeoutError:
            data = b""
        self._sock.settimeout(None)
        if not data:
            self._stop()
            raise OSError(f"the preloading process of {self.target.target} ended before it was ready: "
                          f"{self._stderr() or 'no reason given'}")
        ready = json.loads(data)
        self.loaded, self.failed = list(ready["ready"]), list(ready["failed"])

    def _stderr(self) -> str:
        self._err.seek(0)
        lines = [x.strip() for x in self._err.read().decode(errors="replace").splitlines() if x.strip()]
        return lines[-1] if lines else ""

    def _read(self) -> None:
        """Dispatch the zygote's messages: a run started (its pid), a run ended (its status)."""
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            with self._lock:
                if "started" in message:
                    event, out = self._pending.pop(message["started"])
                    run = ForkedRun(message["pid"], [self.target.target])
                    self._runs[run.pid] = run
                    out.append(run)
                    event.set()
                elif "ended" in message:
                    ended = self._runs.pop(message["ended"], None)
                    if ended is not None:
                        ended._end(message["code"])
        with self._lock:  # the zygote is gone: so is every run it had (their reapers swept them)
            self._closed = True
            for run in self._runs.values():
                run._end(-signal.SIGKILL)
            self._runs.clear()
            for event, _ in self._pending.values():
                event.set()

    def start(self, argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
              env: Mapping[str, str] | None = None, stdin: Any = None, stdout: Any = None,
              stderr: Any = None) -> ForkedRun:
        """Run the program once in a fork with these arguments (`argv` is the whole command line, as
        for :func:`bench.check.processes.start_contained`), folder, environment and descriptors."""
        target = python_target(argv)
        args = list(target.args) if target is not None else list(argv[1:])
        job: dict[str, Any] = {"args": args, "cwd": str(cwd or os.getcwd()),
                               "env": dict(os.environ if env is None else env)}
        with contextlib.ExitStack() as stack:
            fds = [self._fd(stream, i, stack) for i, stream in enumerate((stdin, stdout, stderr))]
            event, out = threading.Event(), list[ForkedRun]()
            with self._lock:
                if self._closed:
                    raise OSError(f"the preloading process of {self.target.target} has ended")
                self._next += 1
                job["id"] = self._next
                self._pending[self._next] = (event, out)
                socket.send_fds(self._sock, [json.dumps(job).encode()], fds)
            event.wait()
        if not out:
            raise OSError(f"the preloading process of {self.target.target} ended: "
                          f"{self._stderr() or 'no reason given'}")
        track(out[0])
        return out[0]

    @staticmethod
    def _fd(stream: Any, which: int, stack: contextlib.ExitStack) -> int:
        """The descriptor to give the run as its descriptor `which`: the stream's, or /dev/null for
        None or DEVNULL (the runner gives files for stdout and stderr)."""
        if stream is None or stream == subprocess.DEVNULL:
            return stack.enter_context(open(os.devnull, "rb" if which == 0 else "wb")).fileno()
        return stream if isinstance(stream, int) else int(stream.fileno())

    def _stop(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._err.close()
        self._learn.cleanup()

    def close(self) -> None:
        """End the zygote: every run still going is ended (swept) first."""
        self._stop()
        if getattr(self, "_reader", None) is not None:
            self._reader.join(5)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def zygote_env(sequence: Any, base: Mapping[str, str] | None) -> dict[str, str]:
    """The zygote's environment: `base` with the variables of a run whose server is :data:`NOWHERE`
    (and no result file), so that what a module reads at import is a run's kind of value that leads
    nowhere, never a real provider's URL or key from the caller's environment."""
    from bench.check.program import program_env

    return program_env(sequence, NOWHERE, Path(os.devnull), base)


def refusal(argv: Sequence[str]) -> str | None:
    """Why ``--preload`` cannot run `argv` (one line), or None when it can."""
    if python_target(argv) is not None:
        return None
    return (f"--preload runs Python programs (python SCRIPT ... or python -m MODULE ...): "
            f"{' '.join(argv)} is not one")
