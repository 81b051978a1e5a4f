"""The virtual clock for driven loops, and the wall times of a campaign's runs.

Most of a conformance campaign's wall time is a loop's real retry back-off (Gemini CLI sleeps 5 s
doubling to 30 s between ten attempts). On the virtual clock a sleep is cut short while the loop's
clock moves on by the whole sleep, so every elapsed-time budget sees what the real run would have
seen. It is put into the loop from outside its driver script: a Node driver runs with
``NODE_OPTIONS=--import conformance/clock/virtual_clock.mjs`` (passed on to the Node process the
driver starts), a Python driver with ``conformance/clock/python`` on PYTHONPATH (a sitecustomize).
Native binaries (OpenCode and Claude Code are Bun executables, Codex is Rust) cannot take it: they
sleep for real, and the campaign starts their longest runs first instead.

Timings are kept out of the committed reports (which must be the same bytes for the same
behaviour): :func:`write_timings` keeps each (loop, sequence) run's wall time in
``CONFORM_DIR/timings.json``, and the next campaign reads them to start the longest runs first.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path

from bench.catalogue.files import write_atomically
from bench.conform.ports import PORTS
from bench.conform.runner import ConformResult, Driver
from bench.engine.model import Sequence

CLOCK_DIR = Path("conformance") / "clock"
NODE_PRELOAD = CLOCK_DIR / "virtual_clock.mjs"
PYTHON_SITE = CLOCK_DIR / "python"
TIMINGS_FILE = "timings.json"

NATIVE_LOOPS: dict[str, str] = {name: port.native for name, port in PORTS.items() if port.native}
"""Drivers whose loop is a native binary (:attr:`bench.conform.ports.Port.native`): no preload reaches it,
so they run on the real clock (their Node driver script too, whose own waits, such as Codex's for the binary
to exit, stay real)."""

UNKNOWN_SECONDS = 30.0
"""The estimate for a run of a loop with no timing at all (a first campaign): long enough that an
unmeasured loop starts before the measured short ones."""
ERROR_TURN_SECONDS = 10.0
"""What each error turn adds to an estimate without a timing (a loop retries an error)."""
REPEATED_ERROR_SECONDS = 120.0
"""What a sequence that fails the same way on every request (an error turn, then ``then: repeat``)
adds: a loop retries it until its own budget ends, the longest runs there are (a native loop's real
back-off: OpenCode and Claude Code took 2-4 minutes on chat-connection-dropped-repeat)."""


def clock_env(driver: Driver, root: Path) -> dict[str, str]:
    """The environment that puts `driver`'s loop on the virtual clock: a Python driver script gets the
    sitecustomize, a Node one the preload; a native loop (:data:`NATIVE_LOOPS`) nothing."""
    if driver.name in NATIVE_LOOPS:
        return {}
    if driver.script.endswith(".py"):
        return {"PYTHONPATH": str((root / PYTHON_SITE).resolve())}
    if driver.interpreter == "node":
        return {"NODE_OPTIONS": f"--import {(root / NODE_PRELOAD).resolve()}"}
    return {}


def timing_key(driver: str, sequence: str) -> str:
    return f"{driver} {sequence}"


def read_timings(folder: Path) -> dict[str, float]:
    """The wall times of the last runs (``CONFORM_DIR/timings.json``); empty when there is none or
    it does not read (timings only order the runs, so a bad file is no error)."""
    try:
        data = json.loads((folder / TIMINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, int | float)}


def write_timings(folder: Path, results: Iterable[tuple[str, ConformResult]]) -> None:
    """Merge each (driver name, result)'s wall time into ``CONFORM_DIR/timings.json``."""
    timings = read_timings(folder)
    for driver, res in results:
        timings[timing_key(driver, res.sequence)] = round(res.seconds, 2)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / TIMINGS_FILE, json.dumps(dict(sorted(timings.items())), indent=1) + "\n")


def estimate(driver: Driver, sequence: Sequence, timings: Mapping[str, float]) -> float:
    """How long a run of `driver` on `sequence` should take: its last wall time, else the median of
    the loop's known runs (else a default that starts it early) plus a share per error turn, and
    more for an error repeated on every request."""
    known = timings.get(timing_key(driver.name, sequence.id))
    if known is not None:
        return known
    errors = sum(t.error is not None for t in sequence.turns)
    repeated = sequence.then == "repeat" and bool(sequence.turns) and sequence.turns[-1].error is not None
    mine = [v for k, v in timings.items() if k.split(" ", 1)[0] == driver.name]
    base = statistics.median(mine) if mine else UNKNOWN_SECONDS
    return base + ERROR_TURN_SECONDS * errors + REPEATED_ERROR_SECONDS * repeated


def slowest(results: Iterable[tuple[str, ConformResult]], count: int = 10) -> list[str]:
    """The `count` slowest runs as lines for a person: seconds, loop, sequence."""
    ranked = sorted(results, key=lambda dr: (-dr[1].seconds, dr[0], dr[1].sequence))[:count]
    return [f"{res.seconds:8.1f} s  {driver} {res.sequence}" for driver, res in ranked]
