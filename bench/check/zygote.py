"""The preloading process of ``check --preload`` (this file run by the program's own interpreter).

Started by :class:`bench.check.preload.Zygote` as ``PYTHON [OPTIONS] -c BOOT zygote.py PARENT FD LEARN
KIND TARGET`` (BOOT takes ``-c``'s working folder off ``sys.path`` and runs this file), it does what the
program's interpreter would do before the program's first line (its options, ``sys.path[0]`` the
script's folder, or the working folder for ``-m``), imports the modules
the program imports at its top level (found with :mod:`ast`, not by running the program; a module that
fails to import is left for the program to import, and fail, itself), and then waits on the socket
FD for runs. For each it forks a reaper (:func:`bench.check.processes.reap`, loaded by path: this
process may not have the bench on its path), in a session of its own with ``PR_SET_PDEATHSIG`` on
this process, which forks the program: a process group of its own, its own descriptors 0, 1 and 2,
working folder, environment and arguments, then the script or module run as ``__main__``, ending as
a Python program ends. The reaper sweeps whatever the program started, as for a program started
from scratch; this process reports each reaper's pid and exit status on the socket.

When the socket closes (``check`` is done) this process ends its reapers (each sweeps its tree) and
exits; when ``check`` dies, ``PR_SET_PDEATHSIG`` ends this process, and its reapers follow it the
same way. Standard library only.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REAPER = Path(__file__).resolve().with_name("processes.py")
MAX_MESSAGE = 1 << 22
"""Bytes one run's message may take (its environment and arguments as JSON)."""
_POLL_S = 0.02


class Enter(BaseException):
    """Raised in a run's program process (below its reaper) to leave the serving loop and run `job`."""

    def __init__(self, job: dict[str, Any], fds: list[int]) -> None:
        super().__init__()
        self.job = job
        self.fds = fds


def top_level_imports(source: str) -> list[str]:
    """The absolute module names a script imports outside its functions and classes (in ``if``,
    ``try`` and ``with`` blocks too), in order, without repeats; ``from a.b import c`` gives ``a.b``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: dict[str, None] = {}
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            found.update(dict.fromkeys(a.name for a in node.names))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and node.module != "__future__":
            found[node.module] = None
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                      *(h.body for h in getattr(node, "handlers", []))]
            todo[:0] = [s for b in blocks for s in b]
    return list(found)


def _entry(kind: str, target: str) -> str:
    """Set ``sys.path[0]`` as the interpreter would for the program; the source to scan for imports."""
    first = os.path.dirname(os.path.realpath(target)) if kind == "script" else os.getcwd()
    if not getattr(sys.flags, "safe_path", False):  # -P or PYTHONSAFEPATH: nothing goes first
        sys.path.insert(0, first)
    if kind == "script":
        with contextlib.suppress(OSError, UnicodeDecodeError):
            return Path(target).read_text(encoding="utf-8")
        return ""
    with contextlib.suppress(Exception):  # a package runs its __main__ (finding it imports the package)
        spec = importlib.util.find_spec(target)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(f"{target}.__main__")
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            return Path(spec.origin).read_text(encoding="utf-8")
    return ""


def preload(names: list[str]) -> tuple[list[str], list[str]]:
    """Import each of `names`; those imported and those that failed (left for the program)."""
    loaded, failed = [], []
    for name in names:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except BaseException:  # whatever a module does at import, the program meets it itself
            failed.append(name)
    return loaded, failed


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _status(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


LEARN_RUNS = 3
"""How many runs tell the zygote the modules they imported beyond its own (see :func:`serve`)."""


def serve(sock: socket.socket, reaper: ModuleType, learn: Path) -> Enter:
    """Fork a reaper per run asked for; report each one's pid and status. Returns (in a program's
    process only) the run it is to become; in this process it ends with the socket.

    The first :data:`LEARN_RUNS` runs write the modules they imported beyond this process's to a file
    in the folder `learn` as they exit (an SDK imports much of itself lazily, when its client is built
    or first used); this process imports them while no run waits to start, so that later runs find
    them loaded."""
    me = os.getpid()
    running: set[int] = set()
    forked = 0

    def ended(signum: int, frame: object) -> None:  # PR_SET_PDEATHSIG: check is gone; so are its runs
        if os.getpid() != me:  # a reaper just forked, before its own handlers: it has no program yet
            os._exit(128 + signum)
        _end(running)
        shutil.rmtree(learn, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, ended)
    while True:
        readable, _, _ = select.select([sock], [], [], _POLL_S)
        _reap_ended(sock, running)
        if not readable:
            _learn(learn)
            continue
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        if not data:
            _end(running)
            os._exit(0)
        job = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            try:
                os.setsid()
                code = reaper.reap(me, [], program=_entering(job, fds))
            except Enter as enter:
                if forked < LEARN_RUNS:
                    _tell_imports(learn / str(os.getpid()))
                return enter
            reaper._exit_like(code)
        for fd in fds:
            os.close(fd)
        running.add(pid)
        forked += 1
        _send(sock, {"started": job["id"], "pid": pid})


def _tell_imports(path: Path) -> None:
    """In a run's program: at its exit, write the modules it imported beyond the zygote's to `path`."""
    import atexit

    before = set(sys.modules)

    def tell() -> None:
        names = [n for n, m in list(sys.modules.items()) if n not in before and getattr(m, "__file__", None)
                 and n != "__main__"]
        with contextlib.suppress(OSError):
            path.with_suffix(".part").write_text("\n".join(names), encoding="utf-8")
            path.with_suffix(".part").replace(path.with_suffix(".names"))

    atexit.register(tell)


def _learn(folder: Path) -> None:
    """Import the modules runs told of (:func:`_tell_imports`); one that fails is left to the runs."""
    for told in sorted(folder.glob("*.names")):
        names = [n for n in told.read_text(encoding="utf-8").splitlines() if n and n not in sys.modules]
        told.unlink()
        if names:
            preload(names)
            gc.collect()
            gc.freeze()


def _entering(job: dict[str, Any], fds: list[int]) -> Any:
    def enter() -> None:
        raise Enter(job, fds)
    return enter


def _reap_ended(sock: socket.socket, running: set[int]) -> None:
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        running.discard(pid)
        _send(sock, {"ended": pid, "code": _status(status)})


def _end(running: set[int]) -> None:
    """SIGTERM to every reaper still running (each sweeps its program's tree), and wait for them."""
    for pid in running:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in running:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def become(enter: Enter, kind: str, target: str) -> None:
    """In the program's process: its descriptors, folder, environment and arguments, then the script
    or module as ``__main__`` (its exceptions and exit status are the program's own)."""
    job = enter.job
    for i, fd in enumerate(enter.fds):
        os.dup2(fd, i)
        if fd > 2:
            os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    import runpy

    sys.argv = [target, *job["args"]]  # for -m, run_module puts the module's file first, as python -m does
    if kind == "script":
        runpy.run_path(target, run_name="__main__")
    else:
        runpy.run_module(target, run_name="__main__", alter_sys=True)


def _load_reaper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_stopbench_reaper", REAPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> None:
    """``zygote.py PARENT FD LEARN KIND TARGET``: preload, say so on the socket, serve; in a run's
    process, run it. LEARN is a folder for the runs' lists of modules (:func:`serve`), the caller's to remove."""
    parent, fd, learn, kind, target = int(argv[0]), int(argv[1]), argv[2], argv[3], argv[4]
    reaper = _load_reaper()
    reaper._prctl(reaper._PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent:  # check died before PR_SET_PDEATHSIG took effect
        os._exit(1)
    sock = socket.socket(fileno=fd)
    loaded, failed = preload(top_level_imports(_entry(kind, target)))
    gc.collect()
    gc.freeze()  # what is loaded stays: the collector need not walk it in every run (nor touch its pages)
    _send(sock, {"ready": loaded, "failed": failed})
    enter = serve(sock, reaper, Path(learn))
    del sock
    become(enter, kind, target)


if __name__ == "__stopbench_zygote__":
    main(sys.argv[2:])
