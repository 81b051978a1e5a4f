"""Drivers run by an interpreter (the Node loops): the loop's install prefix in SPEC, and a loop
without a cap of its own ended at the bench's safety cap (a fake driver in the bench's Python)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import Resend, Stop, predicate
from bench.conform.runner import run_conformance
from bench.engine.model import Decision, Turn
from bench.engine.predicate import State
from bench.engine.replay import DEFAULT_SAFETY_CAP, replay
from bench.report.labels import label
from tests.conform.python_drivers import python_driver, runs_calls
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
CAPLESS = python_driver("capless", "capless", "tests/conform/capless_driver.py")


CALL = {"finish": "tool_calls", "content": None, "tool_calls": [{"id": "a", "name": "grep", "arguments": '{"q": "x"}'}]}


def test_an_interpreter_driver_gets_the_loop_prefix_steers_and_the_safety_cap_in_its_spec(tmp_path: Path) -> None:
    seq = make_sequence([{**CALL, "steer": "also this"}, {"finish": "stop", "content": "done"}], sid="steered")
    [res] = run_conformance(CAPLESS, [seq], str(tmp_path), root=ROOT, timeout=60)
    spec = json.loads(res.result["final"])
    assert spec["loop"] == str(tmp_path)
    assert spec["steers"] == {"0": "also this"}
    assert spec["safety_cap"] == DEFAULT_SAFETY_CAP
    assert spec["tools"] == [{"name": "grep", "required": ["q"]}]


def test_a_loop_without_a_cap_ends_capped_like_its_port_at_the_safety_cap(tmp_path: Path) -> None:
    seq = make_sequence([CALL], then="repeat", sid="forever")
    [res] = run_conformance(CAPLESS, [seq], str(tmp_path), root=ROOT, port=runs_calls, timeout=120)
    port = replay(seq, runs_calls)
    assert port.outcome == "capped" and len(port.steps) == DEFAULT_SAFETY_CAP
    assert res.observed.outcome == "capped"
    assert len(res.observed.steps) == DEFAULT_SAFETY_CAP
    assert res.observed.steps[-1].decision.action == "continue"
    assert res.difference is None


@predicate(reasons=["done"], rules={"again": "sends an error turn again", "answer": "no error"})
def resender(turn: Turn, state: State) -> Decision:
    return Resend("again") if turn.error is not None else Stop("done", ok=True, rule="answer")


def test_a_capped_cell_counts_its_resends_from_the_steps_kept_at_the_cap(tmp_path: Path) -> None:
    # the loop sends the error turn again three requests past the cap (as OpenCode's back-off does):
    # the cell cut at the cap says as many resends as it has resend steps, like the port's
    error = {"finish": "error", "error": {"kind": "server_error", "status": 500}}
    seq = make_sequence([error], then="repeat", sid="errors-forever")
    [res] = run_conformance(CAPLESS, [seq], str(tmp_path), root=ROOT, port=resender, timeout=120)
    assert res.observed.outcome == "capped" and len(res.observed.steps) == DEFAULT_SAFETY_CAP
    assert res.observed.resends == DEFAULT_SAFETY_CAP
    assert label(res.observed) == label(replay(seq, resender))  # the same text for the same behaviour
    assert res.difference is None
