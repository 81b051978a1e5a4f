"""Calls a loop ran after its last model request count as run in its stop step.

The Vercel AI SDK (and Mastra) run a step's tool calls before checking the stop condition: at the
step limit they run the calls and return without asking the model again. The tool endpoint saw
those executions; the stop step must say the calls ran (known ``executed``), not that they were
dropped."""

from __future__ import annotations

import json
from typing import Any

import httpx

from bench.catalogue.load import parse_sequence
from bench.engine.judge import judge
from bench.engine.model import Sequence
from bench.serve import observed_cell
from tests.serve.serving import serving

CALLS = [{"id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'},
         {"id": "call_b", "name": "grep", "arguments": '{"pattern": "def"}'}]
USER = [{"role": "user", "content": "go"}]


def repeating() -> Sequence:
    return parse_sequence({"title": "calls forever", "kind": "constructed", "dialect": "openai-chat",
                           "source": "tests/serve", "then": "repeat",
                           "require": {"no_dropped_calls": True},
                           "turns": [{"finish": "tool_calls", "content": None, "tool_calls": CALLS}]}, "last-step")


def ask(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    got = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": messages, "tools": [
        {"type": "function", "function": {"name": "read_file", "parameters": {}}}]}, timeout=10)
    assert got.status_code == 200, got.text
    return got.json()["choices"][0]["message"]  # type: ignore[no-any-return]


def run_tool(url: str, name: str, args: Any) -> str:
    got = httpx.post(f"{url}/_stopbench/tools/{name}", json=args, timeout=10).json()
    return str(got["content"])


def drive(tools_in_last_round: list[tuple[str, Any]]) -> tuple[Sequence, Any]:
    """Two rounds: the first answered in full, then the last request's calls run (some of them,
    as given) and the loop stops without asking again."""
    seq = repeating()
    with serving(seq) as srv:
        msgs = list(USER)
        echo = ask(srv.url, msgs)
        msgs.append(echo)
        for call in echo["tool_calls"]:
            text = run_tool(srv.url, call["function"]["name"], json.loads(call["function"]["arguments"]))
            msgs.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        ask(srv.url, msgs)
        for name, args in tools_in_last_round:
            run_tool(srv.url, name, args)
        steps = srv.session.observed()
    return seq, steps


def test_calls_run_after_the_last_request_are_run_in_the_stop_step() -> None:
    seq, steps = drive([("read_file", {"path": "a.py"}), ("grep", {"pattern": "def"})])
    assert [s.action for s in steps] == ["continue", "stop"]
    last = steps[-1]
    assert (last.run, last.failed) == ((0, 1), ())
    assert last.known == ((0, "executed"), (1, "executed"))
    cell = observed_cell(seq, "observed", steps, ok=True, reason="step limit")
    assert cell.steps[-1].tools_run == ("read_file", "grep")
    assert cell.tools_run == ("read_file", "grep", "read_file", "grep")
    assert judge(seq, cell) == ()


def test_a_call_of_the_last_turn_with_no_execution_is_still_dropped() -> None:
    seq, steps = drive([("read_file", {"path": "a.py"})])
    assert (steps[-1].run, steps[-1].known) == ((0,), ((0, "executed"),))
    cell = observed_cell(seq, "observed", steps, ok=True, reason="step limit")
    assert [v.requirement for v in judge(seq, cell)] == ["no_dropped_calls"]
    assert "1 were run or failed" in judge(seq, cell)[0].detail


def test_an_execution_with_the_name_but_other_arguments_still_ran_the_call() -> None:
    _, steps = drive([("grep", {"pattern": "def", "path": "."})])
    assert (steps[-1].run, steps[-1].known) == ((1,), ((1, "executed"),))


def test_a_stop_with_no_execution_after_it_runs_nothing() -> None:
    seq, steps = drive([])
    assert (steps[-1].action, steps[-1].run, steps[-1].known) == ("stop", (), ())
    cell = observed_cell(seq, "observed", steps, ok=True, reason="done")
    assert [v.requirement for v in judge(seq, cell)] == ["no_dropped_calls"]
