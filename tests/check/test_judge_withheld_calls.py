"""A step whose tool calls the server withheld (the request offered no tools) is judged as the turn
the loop was served: one without calls.

AutoGen's AssistantAgent sends its reflection request with the history and no tools; the server
answers it in text. A loop that stops there never saw the turn's calls, so it cannot have dropped
them or reported success over their results."""

from __future__ import annotations

from typing import Any

import httpx

from bench.catalogue.load import parse_sequence
from bench.engine.judge import judge
from bench.engine.model import Cell, Decision, Sequence, Step
from bench.serve import BackgroundServer, Session, observed_cell
from bench.wires.withhold import WITHHELD

TOOL: dict[str, Any] = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
CALL: dict[str, Any] = {"finish": "tool_calls", "content": "let me look",
                        "tool_calls": [{"id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'}]}


def calls_forever() -> Sequence:
    return parse_sequence({"title": "calls forever", "kind": "constructed", "dialect": "openai-chat",
                           "source": "tests/check", "then": "repeat",
                           "require": {"no_dropped_calls": True, "answer_after_tools": True},
                           "turns": [CALL]}, "withheld-judge")


def stop_after_one_round(note: str) -> Cell:
    steps = (Step(1, 0, Decision("continue", "observed", run=(0,)), ("read_file",)),
             Step(2, 0, Decision("stop", "observed", reason="done", ok=True), note=note))
    return Cell(sequence="withheld-judge", predicate="observed", outcome="stopped", steps=steps, reason="done",
                ok=True, tools_run=("read_file",))


def test_a_stop_on_a_withheld_turn_breaks_nothing_the_calls_would_have() -> None:
    assert judge(calls_forever(), stop_after_one_round(WITHHELD)) == ()


def test_the_same_stop_on_the_turn_as_written_breaks_both() -> None:
    got = judge(calls_forever(), stop_after_one_round(""))
    assert [v.requirement for v in got] == ["no_dropped_calls", "answer_after_tools"]


def test_the_note_is_read_among_other_notes_of_the_step() -> None:
    note = f"{WITHHELD}; a request was refused: the body is not a JSON object"
    assert judge(calls_forever(), stop_after_one_round(note)) == ()


def test_a_loop_that_stops_after_its_reflection_request_meets_the_requirements() -> None:
    """End to end on the replay server: a round with tools, then AutoGen's request without tools."""
    seq = calls_forever()
    with BackgroundServer(Session(seq)) as srv:
        url = srv.base_url + "/chat/completions"
        msgs: list[Any] = [{"role": "user", "content": "go"}]
        first = httpx.post(url, json={"model": "m", "messages": msgs, "tools": [TOOL]}, timeout=10).json()
        echo = first["choices"][0]["message"]
        msgs += [echo, {"role": "tool", "tool_call_id": echo["tool_calls"][0]["id"], "content": "print(1)"}]
        reflection = httpx.post(url, json={"model": "m", "messages": msgs}, timeout=10).json()
        steps = srv.session.observed()
    assert reflection["choices"][0]["finish_reason"] == "stop"
    cell = observed_cell(seq, "observed", steps, ok=True, reason="reflection")
    assert cell.steps[-1].note == WITHHELD
    assert judge(seq, cell) == ()
