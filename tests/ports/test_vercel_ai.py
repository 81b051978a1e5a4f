"""The Vercel AI SDK's generateText (predicates/vercel_ai.py, predicates/vercel_ai_steps.py, rules in
predicates/_vercel_ai.py) against the pinned release: npm ai@7.0.173 (src/generate-text/generate-text.ts,
parse-tool-call.ts, stop-condition.ts), @ai-sdk/openai@4.0.118, @ai-sdk/anthropic@4.0.105 and the
provider-utils retry they resolve to."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


def _load(name: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


@pytest.fixture(scope="module")
def default() -> Predicate:
    return _load("vercel_ai")


@pytest.fixture(scope="module")
def steps() -> Predicate:
    return _load("vercel_ai_steps")


def run(pred: Predicate, *turns: Turn, dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns), dialect=dialect), pred)  # type: ignore[arg-type]


def test_the_default_stop_condition_ends_after_the_first_step_with_its_tools_run(default: Predicate) -> None:
    # generate-text.ts L294 stopWhen = isStepCount(1); the step's tools run before the condition (L1538-1560)
    cell = run(default, tools("read_file"), tools("read_file"), answer())
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "tool-calls", True)
    assert cell.steps[0].decision.rule == "step-limit"


def test_the_docs_step_count_sends_tool_results_back_until_the_fifth_step(steps: Predicate) -> None:
    # docs 15-tools-and-tool-calling.mdx L42 isStepCount(5): the fifth step ends the run, returned normally
    cell = run(steps, *[tools("read_file")] * 7)
    assert [s.decision.action for s in cell.steps] == ["continue"] * 4 + ["stop"]
    assert (cell.reason, cell.ok) == ("tool-calls", True)
    done = run(steps, tools("read_file"), answer())
    assert (done.n_steps, done.reason, done.ok) == (2, "stop", True)


def test_calls_under_a_length_finish_are_not_run_and_end_the_loop(steps: Predicate) -> None:
    # is-tool-execution-allowed-finish-reason.ts: only stop and tool-calls run tools; L976-982 ends the loop
    cut = Turn(finish="length", finish_raw="length", tool_calls=(call("read_file"),))
    cell = run(steps, cut, answer())
    assert (cell.n_steps, cell.reason, cell.steps[0].decision.rule) == (1, "length", "tools-not-run")


def test_a_step_whose_only_calls_are_invalid_goes_on_with_their_errors_whatever_the_finish(steps: Predicate) -> None:
    # L1507-1527: invalid calls get tool-error outputs before the finish is consulted (seen driving the original)
    bad = Turn(finish="length", finish_raw="length", tool_calls=(call("write_file", 0, '{"path": "a'),))
    cell = run(steps, bad, answer())
    assert [s.decision.action for s in cell.steps] == ["continue", "stop"]
    assert cell.steps[0].tools_failed == ("write_file",)
    mixed = Turn(finish="tool_calls", finish_raw="tool_calls",
                 tool_calls=(call("read_file"), ToolCall(id="c2", name="", arguments="{}")))
    step = run(steps, mixed, answer()).steps[0]
    assert (step.decision.action, step.tools_run, step.tools_failed) == ("continue", ("read_file",), ("",))


def test_a_chat_stop_finish_with_calls_runs_them_but_a_refusal_makes_it_content_filter(steps: Predicate) -> None:
    # map-openai-finish-reason.ts: stop -> stop (tools allowed); stop with a refusal -> content-filter
    with_calls = Turn(finish="stop", finish_raw="stop", tool_calls=(call("read_file"),))
    assert run(steps, with_calls, answer()).steps[0].decision.action == "continue"
    refused = Turn(finish="stop", finish_raw="stop", content=None, refusal="I can't help with that.")
    assert (run(steps, refused).reason, run(steps, refused).ok) == ("content-filter", True)


def test_anthropic_pause_turn_is_a_plain_stop_and_responses_calls_win_over_completed(steps: Predicate) -> None:
    # map-anthropic-stop-reason.ts: pause_turn -> stop (no continuation); map-openai-responses-finish-reason.ts
    paused = Turn(finish="unknown", finish_raw="pause_turn", content="working")
    assert run(steps, paused, answer(), dialect="anthropic").reason == "stop"
    completed = Turn(finish="stop", finish_raw="completed", tool_calls=(call("read_file"),))
    cell = run(steps, completed, Turn(finish="stop", finish_raw="completed", content="ok"), dialect="openai-responses")
    assert [s.decision.action for s in cell.steps] == ["continue", "stop"]


def test_retryable_errors_are_resent_twice_then_thrown_as_retry_error(default: Predicate) -> None:
    # provider-utils retry-with-exponential-backoff.ts L101-131; api-call-error.ts L28-32
    e500 = Turn(finish="error", error=TurnError("server_error", status=500))
    cell = run(default, e500, e500, e500, answer())
    assert [s.decision.action for s in cell.steps] == ["resend", "resend", "stop"]
    assert (cell.reason, cell.ok) == ("AI_RetryError", False)
    recovered = run(default, e500, e500, answer())
    assert (recovered.reason, recovered.ok) == ("stop", True)


def test_a_non_retryable_error_is_thrown_as_it_is_first_and_wrapped_after_retries(default: Predicate) -> None:
    # retry-with-exponential-backoff.ts L133-141
    e400 = Turn(finish="error", error=TurnError("invalid_request", status=400))
    e429 = Turn(finish="error", error=TurnError("rate_limit", status=429))
    assert run(default, e400).reason == "AI_APICallError"
    assert run(default, e429, e400).reason == "AI_RetryError"


def test_a_failed_responses_body_is_thrown_without_retry(default: Predicate) -> None:
    # openai-responses-language-model.ts L893-903: statusCode 400, isRetryable false
    failed = Turn(finish="error", finish_raw="failed", error=TurnError("server_error"))
    cell = run(default, failed, answer(), dialect="openai-responses")
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "AI_APICallError", False)
