"""The virtual clock (conformance/clock/): a loop's back-off sleeps are cut short while its clock
moves on by the whole sleep, so a loop with an elapsed-time budget makes the same requests and
stops the same way as on the real clock, Python and Node alike (a Node loop started by its driver
with an environment of its own included)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.conform.campaign import Port, run_drivers
from bench.conform.clock import NATIVE_LOOPS, clock_env
from bench.conform.runner import DRIVERS, ConformResult, Driver
from bench.engine.model import Sequence
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
PY_LOOP = Driver("pyclock", "none", "tests/conform/clock_driver.py", "openai-chat", "nothing to install")
NODE_LOOP = Driver("nodeclock", "none", "tests/conform/clock_driver.mjs", "openai-chat", "nothing to install",
                   interpreter="node")
ERROR = {"finish": "error", "error": {"kind": "server_error", "status": 500}}
# five failures, then an answer: a loop whose budget let it try six times would get the answer
FAILING = make_sequence([ERROR] * 5 + [{"finish": "stop", "content": "done"}], sid="clock-failing")
# one failure, then a call and an answer: the back-off is one wait of 1 s
ONCE = make_sequence([ERROR, {"finish": "tool_calls", "content": None,
                              "tool_calls": [{"id": "a", "name": "look", "arguments": '{"q": "x"}'}]},
                      {"finish": "stop", "content": "done"}], sid="clock-once")
# a loop that sleeps a minute before its first request
LONG = make_sequence([{"finish": "tool_calls", "content": None,
                       "tool_calls": [{"id": "a", "name": "wait60", "arguments": '{"q": "x"}'}]},
                      {"finish": "stop", "content": "done"}], sid="clock-long")


def _drive(driver: Driver, seqs: list[Sequence], *, virtual: bool, timeout: float = 120) -> dict[str, ConformResult]:
    [run] = run_drivers([driver], seqs, {driver.name: Path(sys.executable)}, {driver.name: Port(None)},
                        root=ROOT, timeout=timeout, jobs=2, retries=0, virtual_clock=virtual)
    return {r.sequence: r for r in run.results}


def _observed(results: dict[str, ConformResult]) -> dict[str, tuple[object, ...]]:
    return {sid: (r.observed.outcome, r.observed.reason, r.observed.ok, r.result["reason"],
                  [(s.turn, s.decision.action, s.tools_run) for s in r.observed.steps])
            for sid, r in results.items()}


def _needs(driver: Driver) -> None:
    if driver.interpreter and shutil.which(driver.interpreter) is None:
        pytest.skip(f"no {driver.interpreter} on PATH")


@pytest.mark.parametrize("driver", [PY_LOOP, NODE_LOOP], ids=["python", "node"])
def test_a_budgeted_back_off_makes_the_same_requests_on_the_virtual_clock(driver: Driver) -> None:
    _needs(driver)
    real = _drive(driver, [FAILING, ONCE], virtual=False)
    virtual = _drive(driver, [FAILING, ONCE], virtual=True)
    assert _observed(virtual) == _observed(real)
    # waits of 1 s and 2 s fit the 6 s budget; the next, of 4 s, would end at 7 s: it gives up
    assert virtual["clock-failing"].result["reason"] == "gave_up"
    assert len(virtual["clock-failing"].observed.steps) == 3
    # each cut wait lasted at least its whole length by the clock the loop read around it
    for sid, delays in (("clock-failing", [1.0, 2.0]), ("clock-once", [1.0])):
        seen = virtual[sid].result["seen"]
        assert len(seen) == len(delays) and all(s >= d for s, d in zip(seen, delays, strict=True)), (sid, seen)


@pytest.mark.parametrize("driver", [PY_LOOP, NODE_LOOP], ids=["python", "node"])
def test_a_sleep_longer_than_the_timeout_ends_in_time_on_the_virtual_clock(driver: Driver) -> None:
    _needs(driver)
    # a minute of sleep, a 45 s timeout: on the real clock this run would be ended as timed out
    result = _drive(driver, [LONG], virtual=True, timeout=45)["clock-long"]
    assert result.result["reason"] == "done", result.result
    assert result.result["seen"][0] >= 60
    assert [s.decision.action for s in result.observed.steps] == ["continue", "stop"]


def test_a_native_loop_runs_on_the_real_clock_and_the_others_get_the_preload_for_their_language() -> None:
    assert set(NATIVE_LOOPS) <= set(DRIVERS)  # a renamed driver would silently get the preload
    for name, driver in DRIVERS.items():
        env = clock_env(driver, ROOT)
        if name in NATIVE_LOOPS:
            assert env == {}, name
        elif driver.script.endswith(".py"):
            assert env == {"PYTHONPATH": str(ROOT / "conformance" / "clock" / "python")}, name
        else:
            assert env == {"NODE_OPTIONS": f"--import {ROOT / 'conformance' / 'clock' / 'virtual_clock.mjs'}"}, name
