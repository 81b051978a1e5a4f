"""The conformance runner: a driver's loop against served sequences, its observed cell vs a port's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bench import Continue, Stop, predicate
from bench.conform.runner import DRIVERS, Driver, compare_cells, run_conformance
from bench.engine.model import Decision, Turn
from bench.engine.predicate import State
from bench.serve.tools import tool_specs
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
FAKE = Driver("fake", "fake", str(Path(__file__).with_name("fake_driver.py")), "openai-chat", "none")


@predicate(reasons=["done"], rules={"calls": "runs every call", "answer": "no calls", "broken": "fails 'broken'"})
def same_as_fake(turn: Turn, state: State) -> Decision:
    if not turn.tool_calls:
        return Stop("done", ok=True, rule="answer")
    failed = tuple(i for i, c in enumerate(turn.tool_calls) if c.name == "broken")
    run = tuple(i for i in range(len(turn.tool_calls)) if i not in failed)
    return Continue("calls" if not failed else "broken", run=run, failed=failed)


@predicate(reasons=["done"], rules={"first": "stops at once"})
def stops_at_once(turn: Turn, state: State) -> Decision:
    return Stop("done", ok=True, rule="first")


SEQ = make_sequence([{"finish": "tool_calls", "content": None,
                      "tool_calls": [{"id": "a", "name": "read_file", "arguments": '{"path": "x"}'},
                                     {"id": "b", "name": "broken", "arguments": "{}"}]},
                     {"finish": "stop", "content": "answer"}], sid="conform-two")


def test_a_loop_that_does_what_its_port_says_matches() -> None:
    [res] = run_conformance(FAKE, [SEQ], sys.executable, root=ROOT, port=same_as_fake, timeout=60)
    assert res.difference is None
    assert [(s.decision.action, s.tools_run, s.tools_failed) for s in res.observed.steps] == [
        ("continue", ("read_file",), ("broken",)), ("stop", (), ())]
    assert (res.observed.outcome, res.observed.reason, res.observed.ok) == ("stopped", "done", True)


def test_a_port_that_disagrees_is_reported_at_the_first_differing_step() -> None:
    [res] = run_conformance(FAKE, [SEQ], sys.executable, root=ROOT, port=stops_at_once, timeout=60)
    assert res.difference is not None and res.difference.startswith("step 1: port stop [first]")


def test_several_sequences_are_served_one_run_each() -> None:
    other = make_sequence([{"finish": "stop", "content": "only"}], sid="conform-one")
    results = run_conformance(FAKE, [SEQ, other], sys.executable, root=ROOT, port=same_as_fake, timeout=60)
    assert [(r.sequence, r.observed.n_steps, r.difference) for r in results] == [
        ("conform-two", 2, None), ("conform-one", 1, None)]


def test_a_driver_that_crashes_is_reported_not_raised() -> None:
    broken = Driver("nope", "nope", str(Path(__file__).with_name("no_such_driver.py")), "openai-chat", "none")
    [res] = run_conformance(broken, [SEQ], sys.executable, root=ROOT, port=same_as_fake, timeout=60)
    assert res.result["reason"] == "driver_failed"
    assert res.observed.outcome == "crashed"
    assert res.difference is not None


def test_stub_tools_require_the_keys_every_well_formed_call_has() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None, "tool_calls": [
        {"id": "1", "name": "read", "arguments": '{"path": "a", "limit": 3}'},
        {"id": "2", "name": "read", "arguments": '{"path": "b"}'},
        {"id": "3", "name": "grep", "arguments": '{"pattern": "x'},
        {"id": "4", "name": "version", "arguments": ""},
        {"id": "5", "name": "", "arguments": "{}"}]}, {"finish": "stop", "content": "ok"}])
    assert tool_specs(seq) == [{"name": "read", "required": ["path"]}, {"name": "grep", "required": ["arg"]},
                               {"name": "version", "required": []}]


def test_compare_ignores_tools_run_in_the_final_stop_step_which_a_server_cannot_see() -> None:
    from bench.engine.replay import replay

    @predicate(reasons=["done"], rules={"x": "stop and run"})
    def stop_running(turn: Turn, state: State) -> Decision:
        return Stop("done", ok=True, rule="x", run="all")

    seq = make_sequence([{"finish": "tool_calls", "content": None,
                          "tool_calls": [{"id": "a", "name": "read_file", "arguments": "{}"}]}])
    port = replay(seq, stop_running)
    observed = replay(seq, stops_at_once)
    assert compare_cells(port, observed) is None


CORECODER_PYTHON = os.environ.get("STOPBENCH_CORECODER_PYTHON", "")


@pytest.mark.skipif(not Path(CORECODER_PYTHON).is_file(),
                    reason="set STOPBENCH_CORECODER_PYTHON to a venv python with corecoder==0.4.0 (make conformance)")
def test_corecoder_itself_matches_its_port_on_seed000() -> None:
    from bench.catalogue.load import load_catalogue
    from bench.engine.discovery import load_file

    port = load_file(ROOT / "predicates" / "corecoder.py")
    seqs = load_catalogue(ROOT / "sequences" / "seed000").sequences
    results = run_conformance(DRIVERS["corecoder"], seqs, CORECODER_PYTHON, root=ROOT,
                              port=port, timeout=120)  # type: ignore[arg-type]
    assert [(r.sequence, r.difference) for r in results] == [(s.id, None) for s in seqs]
