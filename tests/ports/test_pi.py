"""Pi's agent-core loop (predicates/pi.py) against the pinned sources: earendil-works/pi@31b513e3,
read as the npm 0.84.1 sources of packages/agent/src/agent-loop.ts and packages/ai/src/api/*."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def pi() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "pi.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def test_length_reply_with_calls_fails_every_call_and_asks_again(pi: Predicate) -> None:
    # agent-loop.ts L207-216 + L381-406: failToolCallsFromTruncatedMessage answers each call with an
    # error result, terminate false -> next request; the results are the only thing added (no
    # message), so it is a continue with every call failed (the original, driven, sends just that)
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", 0, '{"path": "a'),
                                                                     call("read_file", 1)))
    cell = run(pi, cut, answer())
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.failed, first.run) == ("continue", "truncated-calls", "all", ())
    assert cell.reminders == 0
    assert cell.tools_failed == ("write_file", "read_file") and cell.tools_run == ()
    assert (cell.outcome, cell.reason, cell.ok) == ("stopped", "stop", True)


def test_gemini_max_tokens_with_a_call_is_tooluse_and_runs_it(pi: Predicate) -> None:
    # google-generative-ai.ts L218-220: any toolCall block turns the stopReason into toolUse, so the
    # L212 length guard does not apply
    cut = Turn(finish="length", finish_raw="MAX_TOKENS", tool_calls=(call("get_forecast"),))
    cell = run(pi, cut, Turn(finish="stop", finish_raw="STOP", content="ok"), dialect="gemini")
    assert cell.steps[0].decision.rule == "tool-calls"
    assert cell.tools_run == ("get_forecast",) and cell.tools_failed == ()


@pytest.mark.parametrize("raw", ["other", "tool_call", "insufficient_system_resource"])
def test_unknown_chat_finish_is_an_error_and_its_calls_never_run(pi: Predicate, raw: str) -> None:
    # openai-completions.ts L1430-1434 default -> error; agent-loop.ts L196-200 returns first
    turn = Turn(finish="unknown", finish_raw=raw, tool_calls=(call("run_tests"),))
    cell = run(pi, turn, answer())
    assert (cell.n_steps, cell.reason, cell.ok, cell.tools_run) == (1, "error", False, ())


def test_missing_finish_is_an_error(pi: Predicate) -> None:
    # openai-completions.ts L584-586: 'Stream ended without finish_reason'
    cell = run(pi, Turn(finish="unknown", finish_raw=None, content="I'll check."), answer())
    assert (cell.steps[0].decision.rule, cell.ok) == ("error/no-finish", False)


def test_tool_use_finish_without_blocks_ends_as_success(pi: Predicate) -> None:
    # agent-loop.ts L203-206: only toolCall content blocks count, stopReason toolUse is not read
    cell = run(pi, tools("read_file"), Turn(finish="tool_calls", finish_raw="tool_calls"), answer())
    assert (cell.n_steps, cell.reason, cell.ok) == (2, "toolUse", True)


def test_anthropic_pause_turn_is_a_final_stop(pi: Predicate) -> None:
    # anthropic-messages.ts L1341-1342 maps pause_turn to stop; the core loop does not resubmit
    cell = run(pi, Turn(finish="unknown", finish_raw="pause_turn", content="Searching..."), answer(),
               dialect="anthropic")
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "stop", True)


def test_anthropic_context_window_exceeded_is_not_in_the_mapper(pi: Predicate) -> None:
    # anthropic-messages.ts L1347-1349: unknown stop reasons throw -> stopReason error
    cell = run(pi, Turn(finish="length", finish_raw="model_context_window_exceeded"), dialect="anthropic")
    assert (cell.reason, cell.ok) == ("error", False)


def test_a_provider_error_stops_at_once_without_retry(pi: Predicate) -> None:
    err = Turn(finish="error", error=TurnError("rate_limit", "Rate limit reached", 429, "rate_limit_error"))
    cell = run(pi, err, answer())
    assert (cell.n_steps, cell.reason, cell.ok, cell.resends) == (1, "error", False, 0)


def test_a_steering_message_after_an_answer_is_injected_and_the_loop_goes_on(pi: Predicate) -> None:
    # agent-loop.ts L259 polls steering after the turn, L174 keeps looping, L182-190 inject it
    steered = Turn(finish="stop", finish_raw="stop", content="done", steer="also do X")
    cell = run(pi, steered, answer("did X"))
    first = cell.steps[0].decision
    assert (first.action, first.message) == ("remind", "also do X")
    assert (cell.n_steps, cell.reason, cell.ok) == (2, "stop", True)


def test_a_length_reply_without_calls_ends_without_error(pi: Predicate) -> None:
    cell = run(pi, Turn(finish="length", finish_raw="length", content="cut mid"))
    assert (cell.reason, cell.ok) == ("length", True)


def test_no_cap_in_the_core_loop(pi: Predicate) -> None:
    assert pi.max_steps is None
    cell = run(pi, tools("bash"), then="repeat")
    assert cell.outcome == "capped"


def test_a_blank_tool_name_and_non_object_arguments_get_error_results_and_the_rest_run(pi: Predicate) -> None:
    # agent-loop.ts L600-614: no tool named "" -> 'Tool  not found'; L616-618 + validation.ts
    # L285-317: a JSON string is no object -> validation error; all are results, the loop goes on;
    # validation error; '{"x": ' is parsed as {} (the cut member dropped), which misses the stub's key
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(call("", 0), call("bash", 1, '"{\\"command\\": \\"ls\\"}"'), call("read_file", 2),
                            call("grep", 3, '{"x": '), call("grep", 4, '{"x": "a')))
    cell = run(pi, turn, answer())
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.run, first.failed) == ("continue", "tool-calls-refused", (2, 4),
                                                                   (0, 1, 3))
    assert (cell.reason, cell.ok) == ("stop", True)


def test_python_quoted_arguments_are_read_as_an_empty_object_and_the_call_fails(pi: Predicate) -> None:
    # utils/json-parse.ts L104-124: JSON.parse, the repair and partial-json all reject single quotes,
    # so the arguments are {} and the stub's required key is missing: a validation error result
    # (found by driving 0.84.1 on responses-tool-args-python-dict; the port had run it)
    turn = Turn(finish="stop", finish_raw="completed",
                tool_calls=(call("read_file", 0, "{'path': 'setup.cfg'}"),))
    cell = run(pi, turn, answer(), dialect="openai-responses")
    first = cell.steps[0].decision
    assert (first.action, first.rule, first.run, first.failed) == ("continue", "tool-calls-refused", (), (0,))


# parseStreamingJson of @earendil-works/pi-ai 0.84.1 (partial-json 0.1.7), run under Node on each text:
# whether the object it returns has a member (the call runs) or is {} (the call fails)
PARTIAL_JSON = [
    ('{"x": ', False),  # {}
    ('{"pa', False),  # {}
    ('x{"a":1}', False),  # {}
    ("{'path': 'setup.cfg'}", False),  # {}
    ('{"a": -', False),  # {}
    ('{"path": "a.py", "n', True),  # {"path": "a.py"}
    ('{"a": [1, 2', True),  # {"a": [1, 2]}
    ('{"a": tru', True),  # {"a": true}
    ('{"a": 1e', True),  # {"a": 1}
    ('{"a": "x", "b": 3.', True),  # {"a": "x"}
    ('{"a": {"b": "c', True),  # {"a": {"b": "c"}}
    ('{"a":1}}', True),  # {"a": 1}
    ('{"a":1,}', True),  # {"a": 1}
    ('{"path": "docs/guide.md", "content": "# Guide\\n\\nRun and configure the', True),
]


@pytest.mark.parametrize(("text", "runs"), PARTIAL_JSON)
def test_arguments_json_rejects_run_when_pi_ais_partial_json_keeps_a_member(pi: Predicate, text: str,
                                                                          runs: bool) -> None:
    turn = Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=(call("read_file", 0, text),))
    first = run(pi, turn, answer()).steps[0].decision
    assert (first.rule, first.failed) == (("tool-calls", ()) if runs else ("tool-calls-refused", (0,)))
