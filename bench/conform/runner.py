"""Run an original loop (through a driver script) against served sequences; compare with its port.

A *driver* is a script run with the original loop's own Python (its own venv, never the bench's):
``PYTHON SCRIPT SPEC.json RESULT.json``. SPEC gives the base URL, the prompt, the ok marker and the
stub tools to register; the driver runs the loop once and writes RESULT: ``{"ok", "reason",
"final", "error"}``. The server records the loop's requests, the observed steps are inferred
(:mod:`bench.serve.observe`), and the observed cell is compared step by step with the port's
replayed cell.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.check import end_all_contained, end_contained, start_contained
from bench.conform.ports import PORTS, Port
from bench.engine.changes import changes_data, changes_text
from bench.engine.model import Cell, Decision, Sequence
from bench.engine.predicate import Predicate
from bench.engine.replay import DEFAULT_SAFETY_CAP, replay
from bench.serve.app import Session
from bench.serve.observe import observed_cell
from bench.serve.render import WIRES, WireName
from bench.serve.server import BackgroundServer
from bench.serve.tools import tool_specs

OK_MARKER = "STOPBENCH-OK"
"""Every stub tool's result starts with this; a result without it is an error result."""

PROMPT = "stopbench conformance run: do the task with the tools you have."


@dataclass(frozen=True, slots=True)
class Driver:
    """An original loop the bench can drive: its driver script, the API it speaks, its port.

    `wire` is the API it is driven on; `wires` overrides it per sequence dialect (a loop with one
    model adapter per API), and `skip` names sequence dialects it is not run on, with why.
    """

    name: str
    predicate: str
    script: str
    wire: WireName
    install: str
    """How the loop is installed, in one line: a registry loop's is its pin's (:mod:`bench.conform.pins`)."""
    wires: Mapping[str, WireName] = field(default_factory=dict)
    skip: Mapping[str, str] = field(default_factory=dict)
    interpreter: str | None = None
    """What runs the script (``node``); None: the loop's Python (the ``python`` of run_conformance,
    which for an interpreter driver is the loop's install prefix instead, passed in SPEC as ``loop``)."""
    reused: str = ""
    """Why CI reuses this driver's committed record instead of driving the loop (a loop that is not
    in a registry, driven once from a checkout); empty for the loops CI installs and drives."""

    def wire_for(self, sequence: Sequence) -> WireName:
        return self.wires.get(sequence.dialect, self.wire)

    def not_run(self, sequence: Sequence) -> str | None:
        """Why this loop is not run on `sequence`, or None."""
        return self.skip.get(sequence.dialect)


def _wire(name: str) -> WireName:
    """A port's wire name as the server's (:data:`bench.serve.render.WIRES`); a name no wire has is refused."""
    if name not in WIRES:
        raise ValueError(f"bench/conform/ports.py: {name!r} is no wire (wires: {', '.join(WIRES)})")
    return name


def _driver(name: str, port: Port) -> Driver:
    """The driver of the port registered as `name` (:data:`bench.conform.ports.PORTS`)."""
    return Driver(name, name, port.script, _wire(port.wire), port.install_line(),
                  wires={dialect: _wire(w) for dialect, w in port.wires.items()}, skip=port.skip,
                  interpreter=port.interpreter, reused=port.reused)


DRIVERS: Mapping[str, Driver] = {name: _driver(name, port) for name, port in PORTS.items() if port.script}
"""Every driven loop's driver, by name: the ports that have a driver script, in their order."""


def compare_cells(port: Cell, observed: Cell) -> str | None:
    """The first difference between a port's cell and the observed one, or None.

    Compared per step: the turn, the action, the tools run and failed and the request changes (not
    on the final stop: a server cannot see tools run in the step where the loop stopped, and a stop
    sends no request); then outcome, reason and ok.
    """
    for i, (p, o) in enumerate(zip(port.steps, observed.steps, strict=False)):
        pd, od = p.decision, o.decision
        last = i == len(port.steps) - 1 and pd.action == "stop"
        want = (p.turn, pd.action) if last else (p.turn, pd.action, p.tools_run, p.tools_failed, pd.changes)
        got = (o.turn, od.action) if last else (o.turn, od.action, o.tools_run, o.tools_failed, od.changes)
        if want != got:
            return (f"step {p.step}: port {_action(pd)} [{pd.rule}] run={list(p.tools_run)} "
                    f"failed={list(p.tools_failed)}; observed {_action(od)} run={list(o.tools_run)} "
                    f"failed={list(o.tools_failed)}")
    if len(port.steps) != len(observed.steps):
        return f"steps: port made {len(port.steps)} request(s), the original {len(observed.steps)}"
    for name, want_v, got_v in (("outcome", port.outcome, observed.outcome), ("reason", port.reason, observed.reason),
                                ("ok", port.ok, observed.ok)):
        if want_v != got_v:
            return f"{name}: port {want_v!r}, observed {got_v!r}"
    return None


def _action(decision: Decision) -> str:
    changed = changes_text(decision.changes)
    return f"{decision.action} {changed}" if changed else decision.action


@dataclass(frozen=True, slots=True)
class ConformResult:
    sequence: str
    observed: Cell
    port: Cell | None
    difference: str | None
    result: dict[str, Any]
    details: tuple[str, ...]
    seconds: float

    def as_json(self) -> dict[str, Any]:
        def steps(cell: Cell | None) -> list[dict[str, Any]] | None:
            if cell is None:
                return None
            return [{"step": s.step, "turn": s.turn, "action": s.decision.action, "rule": s.decision.rule,
                     "run": list(s.tools_run), "failed": list(s.tools_failed),
                     "changes": changes_data(s.decision.changes)} for s in cell.steps]

        return {"sequence": self.sequence, "match": self.difference is None and self.port is not None,
                "difference": self.difference, "observed": {"outcome": self.observed.outcome,
                                                            "reason": self.observed.reason, "ok": self.observed.ok,
                                                            "steps": steps(self.observed)},
                "port": None if self.port is None else {"outcome": self.port.outcome, "reason": self.port.reason,
                                                        "ok": self.port.ok, "steps": steps(self.port)},
                "driver": self.result, "details": list(self.details), "seconds": round(self.seconds, 2)}


def driver_spec(driver: Driver, sequence: Sequence) -> dict[str, Any]:
    """What a driver is told about a run besides where the server and the loop are: the prompt, the ok
    marker, the model name, the wire, the stub tools, the steers and the cap (SPEC.json)."""
    return {"prompt": PROMPT, "ok_marker": OK_MARKER, "model": "stopbench", "wire": driver.wire_for(sequence),
            "tools": tool_specs(sequence), "steers": {str(i): t.steer for i, t in enumerate(sequence.turns) if t.steer},
            "safety_cap": DEFAULT_SAFETY_CAP}


def run_conformance(driver: Driver, sequences: Iterable[Sequence], python: str, *, root: Path,
                    port: Predicate | None = None, timeout: float = 120.0,
                    progress: Callable[[ConformResult], None] | None = None,
                    not_driven: Collection[str] = (), env: Mapping[str, str] | None = None) -> list[ConformResult]:
    """Serve each sequence in turn and run the driver against it once; compare with the port.
    Sequences in `not_driven` (the port's ``CONFORMANCE_NOT_DRIVEN``: cases the driver cannot
    produce) are not run. `env` is added to the driver's environment (the virtual clock's preload,
    bench/conform/clock.py)."""
    seqs = [s for s in sequences if s.id not in not_driven]
    if not seqs:
        return []
    script = str((root / driver.script).resolve())
    session = Session(seqs[0], dialect=driver.wire, ok_marker=OK_MARKER)
    prefix = [driver.interpreter] if driver.interpreter else [python]
    out: list[ConformResult] = []
    with BackgroundServer(session) as srv, tempfile.TemporaryDirectory(prefix="stopbench-conform-") as tmp:
        for seq in seqs:
            if driver.not_run(seq) is not None:
                continue
            session.dialect = driver.wire_for(seq)
            run = session.start(seq)
            work = Path(tmp) / seq.id
            work.mkdir()
            spec = {"base_url": srv.base_url, "loop": python, **driver_spec(driver, seq)}
            (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
            started = time.monotonic()
            result = _run_driver([*prefix, script, str(work / "spec.json"), str(work / "result.json")],
                                 work, timeout, env or {})
            seconds = time.monotonic() - started
            observed = session.observed(run)
            error = result.get("error") if result.get("reason") in (None, "driver_failed") else None
            capped = result.get("reason") == "capped"  # a loop without a cap, ended past the bench's
            if capped:  # cut before counting: every figure of the cell (resends, tokens) from the kept steps
                observed = observed[:DEFAULT_SAFETY_CAP]
            cell = observed_cell(seq, f"{driver.name} (observed)", observed, result.get("ok"),
                                 result.get("reason"), error)
            if capped:
                cell = replace(cell, outcome="capped", reason=None, ok=None)
            port_cell = replay(seq, port) if port is not None else None
            diff = compare_cells(port_cell, cell) if port_cell is not None else None
            details = tuple(f"step {o.step}: {o.detail}" for o in observed if o.detail)
            res = ConformResult(seq.id, cell, port_cell, diff, result, details, seconds)
            out.append(res)
            if progress is not None:
                progress(res)
    return out


def _run_driver(argv: list[str], work: Path, timeout: float, extra: Mapping[str, str]) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "NO_PROXY": "127.0.0.1,localhost", **extra}
    try:  # under a reaper: when the driver ends, so does everything it started (own sessions included)
        proc = start_contained(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    except OSError as exc:
        return {"ok": None, "reason": "driver_failed", "error": f"cannot start the driver: {exc}"}
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_contained(proc)
        proc.communicate()
        return {"ok": None, "reason": "driver_failed", TIMED_OUT: True,
                "error": f"the driver did not finish within {timeout:g} s"}
    finally:
        end_contained(proc)  # already ended and swept unless this thread was interrupted
    result_file = work / "result.json"
    if proc.returncode != 0 or not result_file.is_file():
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return {"ok": None, "reason": "driver_failed",
                "error": f"driver exited {proc.returncode}: {' | '.join(tail)}"}
    data = json.loads(result_file.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {"ok": None, "reason": "driver_failed", "error": "bad result"}


TIMED_OUT = "timed_out"
"""The key a driver result has (true) when the loop did not finish within the timeout."""


def end_running_drivers() -> None:
    """End every driver still running (an interrupted conformance run), each with everything it
    started: their runs end as failed."""
    end_all_contained()
