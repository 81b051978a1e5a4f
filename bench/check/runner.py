"""Run a program against served sequences and turn what it did into judged cells.

For each sequence the program is started once (its own process group) with a replay server of
its own (:class:`bench.serve.Session` in a background thread): the server answers its requests
with the sequence's turns (a repeated turn with fresh call ids, as a real provider mints a new id in
every response: :mod:`bench.serve.repeats`) and infers each step from the follow-up request
(:mod:`bench.serve.observe`), exactly as conformance does. How the loop ended comes from the
program's result file or its exit status (:mod:`bench.check.program`). The observed cell is
judged against the sequence's ``require:``.

The program runs under a reaper (:mod:`bench.check.processes`): when it ends, is ended, or this process
dies, every process it started goes too, sessions of its own included. It is ended when it asks for
more responses than the safety cap allows (outcome ``capped``, the first `safety_cap` steps kept, as
the replay does) or when it is still running after `timeout` seconds (outcome ``running`` when it
had asked for more than its sequence allows, a verdict; else ``crashed``, with the reason).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.check.faulted import StepFault, judge_faulted, step_faults
from bench.check.limits import STDERR_TAIL_BYTES
from bench.check.processes import deferred_interrupts, end_contained, start_contained
from bench.check.program import BadResult, ProgramResult, program_env, read_result, tools_url
from bench.engine.model import Cell, Sequence
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.faults import Recipe
from bench.serve.app import DEFAULT_JOURNAL, Session
from bench.serve.observe import Observed, observed_cell
from bench.serve.server import BackgroundServer

DEFAULT_TIMEOUT = 60.0
"""Seconds one run of the program may take."""

_POLL = 0.02
INTERRUPT_POLL_S = 0.5
"""How often the main thread wakes while runs go on, so a Ctrl-C another thread took is acted on."""


_PORT = re.compile(r"\b(127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0):\d+")
_TEMP = re.compile(r"/stopbench-[a-z]+-[A-Za-z0-9_]{6,}")
_WORD = re.compile(r"[^\s'\"]*")


def stable(text: str) -> str:
    """`text` without what changes from run to run: a loopback port is written ``PORT`` and a
    stopbench temporary folder ``<tmp>`` (a program's last stderr line often names the server's
    address or its result file), so a record and the printed table are the same on every run."""
    return _without_temp_folders(_PORT.sub(r"\1:PORT", text))


def _without_temp_folders(text: str) -> str:
    """Each path ending in a stopbench temporary folder, from the start of its word (after a space or a
    quote), written ``<tmp>``. Linear in `text`: the word's start is found by matching its reversed head
    once, where a pattern with the head in front would retry it from every character of a long word."""
    out: list[str] = []
    done = 0
    for found in _TEMP.finditer(text):
        head = text[done:found.start()]
        word = _WORD.match(head[::-1])
        out += [head[:len(head) - (word.end() if word else 0)], "<tmp>"]
        done = found.end()
    return "".join(out) + text[done:]


class Cancelled(Exception):
    """The run was cancelled (another worker was interrupted); its program was killed."""


FAIL_FAST_RUNS = 3
"""How many runs, the first to end, must all die before their first model request for one same
reason for :func:`run_all` to stop the rest (:class:`NotStarting`)."""


class NotStarting(Exception):
    """The program cannot get going: its first runs all ended before their first model request, for
    one same reason (a script that dies at import, a missing module). `reason` is that reason once."""

    def __init__(self, reason: str, runs: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.runs = runs


class FailFast:
    """Watches the runs as they end: the first :data:`FAIL_FAST_RUNS` (of more than one) ending before
    their first model request with one same reason trip it (:attr:`reason`); one that does not disarms it."""

    def __init__(self, total: int) -> None:
        self.needed = min(FAIL_FAST_RUNS, total) if total > 1 else 0
        self.seen: list[str] = []
        self.reason: str | None = None
        self._lock = threading.Lock()

    def saw(self, run: LiveRun) -> None:
        with self._lock:
            if self.reason is not None or len(self.seen) >= self.needed:
                return
            why = no_request_reason(run)
            if why is None or (self.seen and why != self.seen[0]):
                self.needed = 0  # a run that got going, or another reason: the program starts
                return
            self.seen.append(why)
            if len(self.seen) == self.needed:
                self.reason = why

    def check(self) -> None:
        """Raise :class:`NotStarting` once tripped."""
        if self.reason is not None:
            raise NotStarting(self.reason, len(self.seen))


def no_request_reason(run: LiveRun) -> str | None:
    """Why a run ended by itself before its first model request (its crashed cell's words, without a
    port or temporary path), or None when it made a request, was ended by the bench or has a verdict."""
    if run.observed or run.cell.outcome != "crashed" or run.exit_status is None or not run.cell.error:
        return None
    return stable(run.cell.error)


@dataclass(frozen=True, slots=True)
class LiveRun:
    """One sequence served to the program: the judged observed cell and what the program said."""

    sequence: Sequence
    cell: Cell
    result: ProgramResult | None
    exit_status: int | None
    observed: tuple[Observed, ...]
    seconds: float
    stderr: str = ""
    faults: tuple[StepFault, ...] = ()
    """What a fault recipe injected into the answers, by step (``check --faults``), which the
    verdict took into account (:mod:`bench.check.faulted`)."""

    @property
    def failed(self) -> bool:
        """A requirement broken, or no verdict at all (the program crashed, hung or wrote a bad result)."""
        return bool(self.cell.violations) or self.cell.outcome == "crashed"

    @property
    def notes(self) -> tuple[str, ...]:
        """The server's notes on steps it could not read plainly (``unknown`` steps, odd results)."""
        return tuple(f"step {o.step}: {o.detail}" for o in self.observed if o.detail)


def _tail(path: Path, lines: int = 5) -> str:
    """The last `lines` lines of the file at `path` (a program's stderr), read from its last
    :data:`~bench.check.limits.STDERR_TAIL_BYTES` bytes only, joined by `` | ``."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - STDERR_TAIL_BYTES))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


def _kill(proc: Any) -> None:
    """End the program and everything it started, sessions of its own included (its reaper sweeps
    the tree: :func:`bench.check.processes.end_contained`)."""
    end_contained(proc)


def run_program(sequence: Sequence, command: Seq[str], *, name: str, timeout: float = DEFAULT_TIMEOUT,
                safety_cap: int = DEFAULT_SAFETY_CAP, cwd: Path | None = None,
                env: dict[str, str] | None = None, server: BackgroundServer | None = None,
                mcp_url: str | None = None, cancel: threading.Event | None = None, ok_marker: str | None = None,
                error_marker: str | None = None, faults: Recipe | None = None,
                start: Callable[..., Any] = start_contained, bench_tools: bool = False) -> LiveRun:
    """Serve `sequence` (on `server` as a new run, or on a server of its own), run `command` once
    against it, judge the cell. `mcp_url` is the streamable-HTTP MCP server of `server`'s tools
    (:func:`bench.check.mcp.background_mcp`); without one a server of its own is started. Setting
    `cancel` kills the program and raises :class:`Cancelled`. `ok_marker` and `error_marker` tell the
    server how the program words a tool result (:class:`bench.serve.app.Session`); a given `server`
    keeps its own. `faults` is the recipe a server of its own injects (a given `server` keeps its own).
    `start` starts the program as :func:`bench.check.processes.start_contained` does (the default), or
    in a fork of a preloaded process (:meth:`bench.check.preload.Zygote.start`).

    Raises OSError when the command cannot be started at all (the caller's unusable input).
    """
    from bench.check.mcp import background_mcp  # here: `python -m bench.check.mcp` imports this package first

    with ExitStack() as stack:
        srv = server or stack.enter_context(BackgroundServer(_session(sequence, ok_marker, error_marker,
                                                                      faults, safety_cap, bench_tools)))
        if mcp_url is None:
            mcp_url = stack.enter_context(background_mcp(tools_url(srv.url))).url
        return _run(sequence, command, srv, name=name, timeout=timeout, safety_cap=safety_cap, cwd=cwd, env=env,
                    mcp_url=mcp_url, cancel=cancel, start=start)


def _session(sequence: Sequence, ok_marker: str | None, error_marker: str | None, faults: Recipe | None,
             safety_cap: int, bench_tools: bool = False) -> Session:
    """The server session of a check run: fresh call ids on repeats, the recipe, a journal that
    keeps every request up to the safety cap (the observation reads each step's request), and
    ``--bench-tools`` (the judge then knows the program takes the bench's tools from its first request)."""
    return Session(sequence, ok_marker=ok_marker, error_marker=error_marker, fresh_repeat_ids=True, faults=faults,
                   journal=max(DEFAULT_JOURNAL, safety_cap + 1), bench_tools=bench_tools)


def _run(sequence: Sequence, command: Seq[str], srv: BackgroundServer, *, name: str, timeout: float,
         safety_cap: int, cwd: Path | None, env: dict[str, str] | None, mcp_url: str,
         cancel: threading.Event | None, start: Callable[..., Any] = start_contained) -> LiveRun:
    session = srv.session
    run = session.start(sequence)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stopbench-check-") as tmp:
        work = Path(tmp)
        result_path = work / "result.json"
        err_path = work / "stderr.txt"
        with open(work / "stdout.txt", "wb") as out, open(err_path, "wb") as err:
            run_env = program_env(sequence, srv.url, result_path, env, mcp_url=mcp_url)
            # under a reaper: when the program ends, so does everything it started (own sessions included)
            proc = start(list(command), cwd=cwd, env=run_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            ended_by = _watch(proc, lambda: run.answered, started, timeout, safety_cap, cancel)
        seconds = time.monotonic() - started
        stderr = _tail(err_path)
        try:
            observed = tuple(session.observed(run))
            with session.lock:
                injected = step_faults(run.records)
        except Exception as exc:  # whatever the program sent, the run gets a cell and the report is written
            return _unjudged(sequence, name, proc.returncode, seconds, stderr, "the server could not read the "
                             f"program's requests ({_one_line(exc)}); a stopbench bug: please report it")
        bad: str | None = None
        try:
            result = read_result(result_path) if ended_by is None else None
        except BadResult as exc:
            result, bad = None, str(exc)
    status = proc.returncode if ended_by is None or proc.returncode >= 0 else None
    if ended_by == "timeout" and run.answered > allowed_requests(sequence):
        ended_by = "still asking"
    try:
        cell = _cell(sequence, name, list(observed), result, status, ended_by, bad, timeout, safety_cap, stderr,
                     run.answered)
        judged = cell.with_violations(judge_faulted(sequence, cell, injected))
    except Exception as exc:  # as above: one cell without a verdict, never a lost report
        return _unjudged(sequence, name, status, seconds, stderr,
                         f"stopbench could not judge this run ({_one_line(exc)}); a stopbench bug: please report it")
    return LiveRun(sequence, judged, result, status, observed, seconds, stderr, injected)


def _watch(proc: Any, answered: Callable[[], int], started: float, timeout: float, safety_cap: int,
           cancel: threading.Event | None) -> str | None:
    """Wait for the program to end; ``cap`` when it asked for more than `safety_cap` answers (also
    between two polls, ending by itself), ``timeout`` past `timeout` seconds, None when it ended by
    itself. Raises :class:`Cancelled` once `cancel` is set. The program and its tree go either way."""
    ended_by: str | None = None
    try:
        while proc.poll() is None:
            if answered() > safety_cap:
                ended_by = "cap"
            elif time.monotonic() - started > timeout:
                ended_by = "timeout"
            elif cancel is not None and cancel.is_set():
                raise Cancelled
            if ended_by:
                break
            time.sleep(_POLL)
    finally:  # ended, capped, timed out, Ctrl-C, SIGTERM or cancelled: the program and its tree go
        _kill(proc)
    return "cap" if ended_by is None and answered() > safety_cap else ended_by


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _unjudged(sequence: Sequence, name: str, status: int | None, seconds: float, stderr: str, error: str) -> LiveRun:
    """A run the bench itself failed to observe or judge: crashed (no verdict), with the bench's words."""
    cell = Cell(sequence=sequence.id, predicate=name, outcome="crashed", steps=(), error=error)
    return LiveRun(sequence, cell, None, status, (), seconds, stderr)


def allowed_requests(sequence: Sequence) -> int:
    """How many requests a loop may make on `sequence` and still be right: its ``stops_within``,
    or, without one, its scripted turns. A loop still asking past that when the time limit ends it
    has its verdict already (it did not stop in time), whatever it would have done next."""
    within = sequence.require.stops_within
    return within if within is not None else len(sequence.turns)


def _cell(sequence: Sequence, name: str, observed: list[Observed], result: ProgramResult | None,
          status: int | None, ended_by: str | None, bad: str | None, timeout: float, safety_cap: int,
          stderr: str, answered: int = 0) -> Cell:
    if ended_by == "cap":
        cell = observed_cell(sequence, name, observed, None, None)
        kept = cell.steps[:safety_cap]
        return replace(cell, outcome="capped", reason=None, ok=None, steps=kept,
                       tools_run=tuple(n for s in kept for n in s.tools_run),
                       tools_failed=tuple(n for s in kept for n in s.tools_failed),
                       reminders=sum(1 for s in kept if s.decision.action == "remind"),
                       resends=sum(1 for s in kept if s.decision.action == "resend"),
                       tokens=sum(u.input_tokens + u.output_tokens for s in kept
                                  if (u := sequence.turns[s.turn].usage) is not None))
    if ended_by == "still asking":  # a verdict: running, its last request's decision unknown (it was killed)
        cell = _crashed(sequence, name, observed, f"still running after {answered} requests, killed at the "
                                                  f"{timeout:g} s time limit")
        return replace(cell, outcome="running")
    if ended_by == "timeout":
        return _crashed(sequence, name, observed, f"still running after {timeout:g} s; killed")
    if bad is not None:
        return _crashed(sequence, name, observed, bad)
    if not observed:  # nothing to judge: the program never reached the model (a crash, a wrong URL)
        why = f"made no model request and {exit_words(status)}"
        last = stderr.rsplit(" | ", 1)[-1]  # the last line on stderr: the error, in most languages
        return _crashed(sequence, name, observed, f"{why}: {last}" if last else why)
    if result is not None:
        ok, reason = result.ok, result.reason
    else:
        ok, reason = status == 0, f"exit {status}" if status is None or status >= 0 else exit_words(status)
    return observed_cell(sequence, name, observed, ok, reason)


def exit_words(status: int | None) -> str:
    """How the program ended: ``exited 3``, or for a negative status (the signal that ended it, as
    :mod:`subprocess` gives it) ``killed by SIGSEGV``."""
    if status is None or status >= 0:
        return f"exited {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"


def _crashed(sequence: Sequence, name: str, observed: list[Observed], error: str) -> Cell:
    cell = observed_cell(sequence, name, observed, None, None, error)
    steps = cell.steps[:-1] if cell.steps and cell.steps[-1].decision.action == "stop" else cell.steps
    return replace(cell, outcome="crashed", reason=None, ok=None, steps=steps, error=error)



def cores_available() -> int:
    """The cores this process may run on (its affinity mask where the system has one), not the machine's:
    ``check``'s default ``-j``."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def scripts_tool_results(sequence: Sequence) -> bool:
    """Whether any call of the sequence says what its tool returns (`result:`): a live loop's tools
    are its own, so such a sequence's requirements assume results no live run gets."""
    return any(c.result is not None for t in sequence.turns for c in t.tool_calls)


def _starter(stack: ExitStack, command: Seq[str], first: Sequence, cwd: Path | None,
             env: dict[str, str] | None) -> Callable[..., Any]:
    """The preloaded process of a Python `command`, for the block of `stack`; its start function.
    Raises ValueError for a command that is not a Python program, OSError when it cannot start."""
    from bench.check.preload import Zygote, python_target, zygote_env

    target = python_target(command)
    if target is None:
        raise ValueError(f"--preload runs Python programs: {' '.join(command)} is not one")
    return stack.enter_context(Zygote(target, cwd=cwd or Path.cwd(), env=zygote_env(first, env))).start


def run_all(sequences: Iterable[Sequence], command: Seq[str], *, name: str, jobs: int = 1,
            timeout: float = DEFAULT_TIMEOUT, safety_cap: int = DEFAULT_SAFETY_CAP, cwd: Path | None = None,
            env: dict[str, str] | None = None, progress: Callable[[LiveRun], None] | None = None,
            ok_marker: str | None = None, error_marker: str | None = None,
            faults: Recipe | None = None, preload: bool = False, bench_tools: bool = False) -> list[LiveRun]:
    """Run the program once per sequence, `jobs` at a time; results in the order of `sequences`.
    With `preload` (a Python program) each run is a fork of one process that loaded the program's
    imports (:mod:`bench.check.preload`).

    Each worker has a server of its own; a sequence is a new run on it (the server's runs are
    independent: a run's turns, records and inference are its own), so no two programs ever share
    a server at the same time. Every server injects `faults` (a request's draws depend on the
    recipe's seed, the sequence and the request's number only, not on the worker)."""
    seqs = list(sequences)
    if not seqs:
        return []
    cancel = threading.Event()
    fail_fast = FailFast(len(seqs))
    with ExitStack() as stack:
        start = _starter(stack, command, seqs[0], cwd, env) if preload else start_contained
        servers = _Servers(stack, lambda seq: _session(seq, ok_marker, error_marker, faults, safety_cap, bench_tools))

        def one(seq: Sequence) -> LiveRun:
            if cancel.is_set():  # the program does not start, or the user stopped the run: start no more
                raise Cancelled
            srv, mcp_url = servers.mine(seq)
            run = run_program(seq, command, name=name, timeout=timeout, safety_cap=safety_cap, cwd=cwd, env=env,
                              server=srv, mcp_url=mcp_url, cancel=cancel, start=start)
            if run.exit_status is None:  # killed: a request it had in flight must not reach the next run
                servers.drop()
            fail_fast.saw(run)
            if fail_fast.reason is not None:
                cancel.set()
            if progress is not None:
                progress(run)
            return run

        if jobs <= 1:
            out = []
            for s in seqs:
                out.append(one(s))
                fail_fast.check()
            return out
        return _side_by_side(one, seqs, jobs, cancel, fail_fast)


class _Servers:
    """A replay server (and its MCP server) per worker thread, entered in `stack`, made for the first
    sequence the thread runs; each sequence is a new run on it."""

    def __init__(self, stack: ExitStack, session: Callable[[Sequence], Session]) -> None:
        self._stack = stack
        self._session = session
        self._local = threading.local()
        self._lock = threading.Lock()

    def mine(self, seq: Sequence) -> tuple[BackgroundServer, str]:
        """This thread's server (started for `seq` if it has none) and its MCP server's URL."""
        from bench.check.mcp import background_mcp  # here: `python -m bench.check.mcp` imports this package first

        local = self._local
        if getattr(local, "server", None) is None:
            with self._lock:
                local.server = self._stack.enter_context(BackgroundServer(self._session(seq)))
                local.mcp = self._stack.enter_context(background_mcp(tools_url(local.server.url)))
        return local.server, local.mcp.url

    def drop(self) -> None:
        """Stop this thread's servers; its next sequence starts new ones."""
        self._local.server.stop()
        self._local.mcp.stop()
        self._local.server = None


def _side_by_side(one: Callable[[Sequence], LiveRun], seqs: list[Sequence], jobs: int, cancel: threading.Event,
                  fail_fast: FailFast) -> list[LiveRun]:
    """`one` on each sequence, `jobs` threads at a time; results in the order of `seqs`."""
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="stopbench-check") as pool, \
            deferred_interrupts() as interrupts:
        try:
            futures = [pool.submit(one, s) for s in seqs]
            # wait in short slices: Ctrl-C's signal may be taken by a worker or server thread, and the
            # main thread runs Python's handler only when it wakes, not when another thread got it; the
            # interrupt is raised here, never inside wait's locks
            while wait(futures, timeout=INTERRUPT_POLL_S).not_done:
                interrupts.check()
                fail_fast.check()
            interrupts.check()
            fail_fast.check()
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C in this thread: end every worker's program, start no more
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
