"""The Bedrock path of the ports whose loops have one, each against its pinned source: pydantic-ai's
BedrockConverseModel (pydantic-ai-slim 2.68.0 models/bedrock.py, providers/bedrock.py), LangChain's
ChatBedrockConverse (langchain-aws 1.9.1), the AI SDK's amazon-bedrock provider (5.0.101), Pi's
bedrock-converse-stream provider (pi-ai 0.84.1); the clients' retries are botocore 1.44.8's standard
mode and the AWS SDK's standard strategy (@smithy/core 3.41.1)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, seq

BEDROCK = "bedrock-converse"
USE = Turn("tool_calls", "tool_use", tool_calls=(ToolCall("tooluse_1", "read_file", '{"path": "a"}'),))
END = Turn("stop", "end_turn", content="done")


def load(name: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(name: str, *turns: Turn, dialect: str = BEDROCK) -> Cell:
    return replay(replace(seq(*turns), dialect=dialect), load(name))  # type: ignore[arg-type]


def error(status: int, kind: str = "http_status") -> Turn:
    return Turn("error", error=TurnError(kind, "no", status=status))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["pydantic_ai", "langchain", "pi"])
def test_a_bedrock_client_retries_a_throttling_answer_but_not_a_model_timeout(name: str) -> None:
    # botocore retries/standard.py L469, L510-526, L549 (429, 500/502/503/504); @smithy/core the same set
    throttled = run(name, error(429, "rate_limit"), USE, END)
    assert throttled.steps[0].decision.action == "resend" and throttled.ok
    timed_out = run(name, error(408, "timeout"), USE, END)
    assert timed_out.n_steps == 1 and timed_out.ok is False
    # the same 408 on the OpenAI/Anthropic SDKs' wires is retried (pi retries nothing there: maxRetries 0)
    if name != "pi":
        assert run(name, error(408, "timeout"), answer_chat(), dialect="openai-chat").ok


def answer_chat() -> Turn:
    return Turn("stop", "stop", content="done")


@pytest.mark.parametrize("name", ["pydantic_ai", "langchain"])
def test_a_bedrock_client_gives_up_after_two_retries(name: str) -> None:
    cell = run(name, error(503, "overloaded"), error(503, "overloaded"), error(503, "overloaded"), END)
    assert [s.decision.action for s in cell.steps] == ["resend", "resend", "stop"] and cell.ok is False


def test_pi_reads_a_bedrock_stop_reason_with_its_bedrock_mapper_not_the_anthropic_one() -> None:
    # bedrock-converse-stream.ts L1019-1034: guardrail_intervened is an error; on Anthropic's mapper it is unknown too,
    # but model_context_window_exceeded is length on Bedrock and max_tokens length on both
    assert run("pi", Turn("content_filter", "guardrail_intervened", content="blocked")).reason == "error"
    assert run("pi", Turn("length", "model_context_window_exceeded", content="cut")).reason == "length"
    assert run("pi", Turn("stop", "stop_sequence", content="ok")).reason == "stop"
    no_stop = run("pi", Turn("unknown", None, content="cut"))
    assert (no_stop.reason, no_stop.steps[0].decision.rule) == ("error", "error/bedrock-no-finish")


def test_the_ai_sdk_maps_bedrock_stop_reasons_with_the_bedrock_provider() -> None:
    # map-amazon-bedrock-finish-reason.ts L8-21: guardrail -> content-filter, the rest of the new values -> other
    assert run("vercel_ai", Turn("content_filter", "guardrail_intervened", content="x")).reason == "content-filter"
    assert run("vercel_ai", Turn("length", "model_context_window_exceeded", content="x")).reason == "other"
    assert run("vercel_ai", Turn("error", "malformed_model_output", content="x")).reason == "other"
    assert run("vercel_ai", Turn("stop", "stop_sequence", content="x")).reason == "stop"


@pytest.mark.parametrize(("name", "reason"), [("pydantic_ai", "KeyError"), ("vercel_ai", "AI_APICallError"),
                                              ("vercel_ai_steps", "AI_APICallError")])
def test_a_converse_body_without_a_stop_reason_raises(name: str, reason: str) -> None:
    # pydantic-ai models/bedrock.py L1388 response['stopReason']; the AI SDK's response schema requires it
    cell = run(name, Turn("unknown", None, content="cut"))
    assert (cell.reason, cell.ok) == (reason, False)
    # langchain-aws keeps stopReason in response_metadata only: the text is the final message
    assert run("langchain", Turn("unknown", None, content="cut")).reason == "final"


def test_langchain_reads_a_bedrock_tool_input_that_is_not_json_as_an_empty_object() -> None:
    # the JSON body carries toolUse.input as an object ({} for cut arguments): the call is made and fails
    cut = Turn("tool_calls", "tool_use", tool_calls=(ToolCall("t", "bash", '{"command": "ls'),))
    cell = run("langchain", cut, END)
    assert cell.steps[0].decision.action == "continue" and cell.steps[0].decision.failed == (0,)


def test_smolagents_bedrock_model_cannot_run_a_tool_calling_step() -> None:
    # models.py L1968-2007 keeps the OpenAI-shaped tools/tool_choice: botocore rejects the call (observed, 1.26.0)
    cell = run("smolagents", USE, END)
    assert (cell.reason, cell.ok, cell.n_steps, cell.steps[0].decision.rule) == (
        "api_error", False, 1, "bedrock-model-unusable")
    assert run("smolagents", USE, END, dialect="anthropic").steps[0].decision.action == "continue"


def test_hermes_reads_bedrock_with_its_converse_normaliser() -> None:
    # bedrock_adapter.py L705-715: guardrail -> content_filter; malformed_model_output and the unknown -> stop
    assert run("hermes", Turn("content_filter", "guardrail_intervened", content="blocked")).reason == \
        "content_policy_blocked"
    assert run("hermes", Turn("error", "malformed_model_output", content="half")).ok is True
    # L91-101 + botocore: a 429 is retried by botocore twice before Hermes's own retry counts it
    cell = run("hermes", error(429, "rate_limit"), error(429, "rate_limit"), error(429, "rate_limit"), END)
    assert [s.decision.rule for s in cell.steps][:3] == [
        "bedrock-botocore-retry", "bedrock-botocore-retry", "api-error-retry"]
    # L913-925: cut tool input becomes {}: the call is made and fails on its required keys
    cut = Turn("tool_calls", "tool_use", tool_calls=(ToolCall("t", "bash", '{"command": "ls'),))
    first = run("hermes", cut, END).steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (), (0,))


def test_opencode_maps_bedrock_stop_reasons_with_its_bundled_bedrock_provider() -> None:
    # bin/opencode @118735431 kL: guardrail -> content-filter (the run stops); model_context_window_exceeded is
    # other -> unknown (asked again), where the Anthropic mapper of the same string says length
    assert run("opencode", Turn("content_filter", "guardrail_intervened", content="x")).reason == "content_filter"
    window = run("opencode", Turn("length", "model_context_window_exceeded", content="x"), END)
    assert window.steps[0].decision.rule == "unknown-finish" and window.reason == "exit"
    assert run("opencode", Turn("length", "model_context_window_exceeded", content="x"), END,
               dialect="anthropic").n_steps == 1


@pytest.mark.parametrize("status", [502, 504])
@pytest.mark.parametrize("name", ["pydantic_ai", "langchain", "pi", "hermes"])
def test_a_bedrock_client_retries_a_proxys_502_and_504_too(name: str, status: int) -> None:
    # botocore retries/standard.py L469 and @smithy/core TRANSIENT_ERROR_STATUS_CODES: 500, 502, 503, 504
    cell = run(name, error(status, "server_error"), END)
    assert cell.steps[0].decision.action == "resend" and "retry" in cell.steps[0].decision.rule
    assert cell.ok


@pytest.mark.parametrize("name", ["pi", "hermes"])
def test_two_retryable_errors_at_the_start_of_a_bedrock_run_are_both_retried_by_the_client(name: str) -> None:
    cell = run(name, error(429, "rate_limit"), error(503, "overloaded"), END)
    assert [s.decision.rule for s in cell.steps][:2] == [cell.steps[0].decision.rule] * 2
    assert "botocore" in cell.steps[0].decision.rule or "sdk" in cell.steps[0].decision.rule


def test_hermes_keeps_a_bedrock_length_or_filter_with_tool_use_blocks() -> None:
    # bedrock_adapter.py L960-962 turns only a stop with calls into tool_calls: max_tokens with a call stays length
    cut = Turn("length", "max_tokens", tool_calls=(ToolCall("t", "read_file", '{"path": "a"}'),))
    assert run("hermes", cut, END).steps[0].decision.rule == "length-tools-resend"


def test_hermes_fails_only_the_cut_one_of_two_bedrock_tool_inputs() -> None:
    two = Turn("tool_calls", "tool_use", tool_calls=(ToolCall("a", "read_file", '{"path": "a"}'),
                                                     ToolCall("b", "bash", '{"command": "ls')))
    first = run("hermes", two, END).steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (0,), (1,))
