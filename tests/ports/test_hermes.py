"""Hermes' conversation loop (predicates/hermes.py) against the pinned source: hermes-agent 0.19.0
from PyPI (agent/conversation_loop.py, agent/turn_finalizer.py, transports, gemini adapter)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, RequestChanges, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools, truncated


@pytest.fixture(scope="module")
def hermes() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "hermes.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def actions(cell: Cell) -> list[str]:
    return [f"{s.decision.action} {s.decision.rule}" for s in cell.steps]


def test_length_without_calls_gets_three_continuation_prompts_then_stops_partial(hermes: Predicate) -> None:
    # L2033-2039: length_continue_retries += 1; continue prompt while < 4; L2088 the 4th returns partial
    cell = run(hermes, truncated(), then="repeat")
    assert actions(cell) == ["remind length-continue"] * 3 + ["stop length-exhausted"]
    assert (cell.reason, cell.ok) == ("truncated_after_continuations", False)


def test_length_with_calls_is_resent_four_times_without_running_them(hermes: Predicate) -> None:
    # L2097-2128: truncated_tool_call_retries < 4 -> re-run the request; L2129-2155 then partial
    cut = replace(truncated(), tool_calls=(call("write_file", 0, '{"path": "a"}'),))
    cell = run(hermes, cut, then="repeat")
    assert actions(cell) == ["resend length-tools-resend"] * 4 + ["stop length-tools-stop"]
    assert cell.tools_run == () and cell.ok is False


def test_empty_after_tools_is_nudged_once_then_resent_three_times(hermes: Predicate) -> None:
    # L5226-5291 nudge once per tool round; L5327-5354 resend x3; L5388-5433 empty_response_exhausted
    empty = Turn(finish="tool_calls", finish_raw="tool_calls", content=None)
    cell = run(hermes, tools("read_file"), empty, then="repeat")
    assert actions(cell) == ["continue tools", "remind post-tool-nudge"] + ["resend empty-retry"] * 3 + [
        "stop empty-exhausted"]
    # turn_finalizer.py L194-202: final_response "(empty)" is not None, so the turn counts as completed
    assert (cell.reason, cell.ok) == ("empty_response_exhausted", True)


def test_dropped_calls_with_text_end_as_a_text_response(hermes: Predicate) -> None:
    # the branch is chosen by the tool-call list (L4707), not by finish_reason (L5680 keeps its name)
    cell = run(hermes, Turn(finish="tool_calls", finish_raw="tool_calls", content="Let me look."))
    assert (cell.reason, cell.ok, cell.n_steps) == ("text_response(finish_reason=tool_calls)", True, 1)


def test_a_streamed_text_without_finish_reason_is_a_stub_that_asks_for_a_continuation(hermes: Predicate) -> None:
    # chat_completion_helpers.py L3025-3040: text, no tool calls, no finish_reason -> partial-stream
    # stub (finish 'length'); conversation_loop.py L2032-2077 -> continuation prompt
    cell = run(hermes, Turn(finish="unknown", finish_raw=None, content="42"), answer())
    assert actions(cell) == ["remind stream-stub-continue", "stop text-response"]


def test_a_streamed_reply_with_valid_calls_and_no_finish_reason_runs_them(hermes: Predicate) -> None:
    # chat_completion_helpers.py L3042: finish_reason or "stop"; the calls are kept
    calls = Turn(finish="unknown", finish_raw=None, tool_calls=(call("bash", 0, '{"command": "ls"}'),))
    cell = run(hermes, calls, answer())
    assert actions(cell) == ["continue tools", "stop text-response"]


def test_a_dropped_connection_is_retried_twice_on_the_stream_before_it_counts(hermes: Predicate) -> None:
    # chat_completion_helpers.py L3227 HERMES_STREAM_RETRIES=2, L3389-3450; then the outer retry
    cut = Turn(finish="error", error=TurnError("connection_reset", message="peer closed connection"))
    cell = run(hermes, cut, cut, cut, answer())
    assert actions(cell) == ["resend stream-retry", "resend stream-retry", "resend api-error-retry",
                             "stop text-response"]


def test_gemini_malformed_function_call_maps_to_stop_not_to_an_error(hermes: Predicate) -> None:
    # gemini_native_adapter.py L486-494: unknown Gemini reasons -> "stop"; no text -> empty retry
    malformed = Turn(finish="error", finish_raw="MALFORMED_FUNCTION_CALL")
    cell = run(hermes, malformed, Turn(finish="stop", finish_raw="STOP", content="ok"), dialect="gemini")
    assert actions(cell) == ["resend empty-retry", "stop text-response"]


def test_content_filter_stops_at_once_without_a_fallback(hermes: Predicate) -> None:
    # L1797-1883: no fallback configured -> _content_policy_blocked_result (completed False)
    refusal = Turn(finish="content_filter", finish_raw="refusal")
    cell = run(hermes, refusal, then="repeat", dialect="anthropic")
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "content_policy_blocked", False)


def test_cut_json_arguments_stop_before_any_tool_runs_on_the_anthropic_transport(hermes: Predicate) -> None:
    # L4830-4858: invalid JSON not ending with } or ] -> partial "Response truncated ..."
    cut = Turn(finish="tool_calls", finish_raw="tool_use",
               tool_calls=(call("bash", 0, '{"command": "ls'),))
    cell = run(hermes, cut, dialect="anthropic")
    assert (cell.reason, cell.tools_run) == ("response_truncated", ())


def test_cut_json_arguments_in_a_chat_stream_are_a_length_truncation(hermes: Predicate) -> None:
    # chat_completion_helpers.py L3042-3044: unparseable arguments -> finish 'length' whatever was
    # sent; L2091-2128: the request is re-run without running the calls
    cut = Turn(finish="tool_calls", finish_raw="tool_calls",
               tool_calls=(call("bash", 0, '{"command": "ls'),))
    cell = run(hermes, cut, answer())
    assert actions(cell) == ["resend length-tools-resend", "stop text-response"]


def test_server_errors_get_three_attempts(hermes: Predicate) -> None:
    # agent_init.py L1586-1594 api_max_retries 3; L3126 retry_count += 1; L4106 >= max -> stop
    err = Turn(finish="error", error=TurnError("server_error", status=500))
    cell = run(hermes, err, then="repeat")
    assert actions(cell) == ["resend api-error-retry"] * 2 + ["stop api-error-stop"]


def test_ninety_iterations_then_one_summary_request(hermes: Predicate) -> None:
    # L721 loop condition, turn_finalizer.py L94-135: summary request, max_iterations_reached
    looping = replace(tools("bash"), content="again")
    cell = run(hermes, looping, then="repeat")
    assert cell.n_steps == 91 and len(cell.tools_run) == 90
    assert (cell.reason, cell.ok) == ("max_iterations_reached(90/90)", False)
    # the 90th round's results go out with the summary request, a new user message
    # (chat_completion_helpers.py L1903-1912): a remind, as the original loop showed
    assert actions(cell)[-3:] == ["continue tools", "remind max-iterations-summary-request", "stop max-iterations"]


def test_a_codex_incomplete_reply_with_the_same_text_replaces_the_interim_in_place(hermes: Predicate) -> None:
    # conversation_loop.py L4578-4629: the interim message alone (a continue); the same visible text
    # again replaces it (L4591-4622, a resend); the third incomplete reply stops (L4693-4701)
    cut = Turn(finish="length", finish_raw="incomplete/max_output_tokens", content="The migration touches")
    cell = run(hermes, cut, then="repeat", dialect="openai-responses")
    assert actions(cell) == ["continue codex-incomplete-continue", "resend codex-incomplete-duplicate",
                             "stop codex-incomplete-stop"]


@pytest.mark.parametrize("reason", ["steered", "max_messages"])
def test_a_responses_reply_incomplete_for_any_reason_but_content_filter_is_a_codex_incomplete(
        hermes: Predicate, reason: str) -> None:
    # codex_responses_adapter.py L1175 (status incomplete: has_incomplete_items) and L1439-1440 (finish
    # "incomplete" without a final_answer phase), whatever incomplete_details.reason says but content_filter
    # (L1133-1134, L1433); driven on responses-incomplete-max-messages: continue, resend, stop exhausted
    cut = Turn(finish="unknown", finish_raw=f"incomplete/{reason}", content="The repository has three")
    cell = run(hermes, cut, then="repeat", dialect="openai-responses")
    assert actions(cell) == ["continue codex-incomplete-continue", "resend codex-incomplete-duplicate",
                             "stop codex-incomplete-stop"]


def test_inner_loop_resends_do_not_count_toward_max_iterations(hermes: Predicate) -> None:
    # the truncated-tool-call resend is a `continue` of the inner retry loop (L2128): api_call_count
    # is not incremented, so 90 tool rounds still fit after it
    cut = replace(truncated(), tool_calls=(call("bash"),))
    cell = run(hermes, cut, *([tools("bash")] * 90), answer())
    assert cell.n_steps == 92 and cell.reason == "max_iterations_reached(90/90)"


def test_a_context_overflow_on_the_first_request_cannot_be_compressed(hermes: Predicate) -> None:
    # conversation_loop.py L3817-3840: compression that shrinks nothing -> "Cannot compress further"
    overflow = Turn(finish="error", error=TurnError("context_overflow", message="context length exceeded"))
    assert actions(run(hermes, overflow, answer())) == ["stop context-uncompressible"]
    # three messages cannot be summarised either (context_compressor.py L3353-3356): the same stop
    later = run(hermes, tools("bash"), overflow, answer())
    assert actions(later) == ["continue tools", "stop context-uncompressible"]


def _window(limit: int) -> Turn:
    message = f"This model's maximum context length is {limit} tokens. Your messages resulted in 204308 tokens."
    return Turn(finish="error", error=TurnError("context_overflow", message=message, status=400,
                                                 code="context_length_exceeded", context_window=limit))


def test_a_compression_counts_only_when_the_error_reports_a_smaller_window(hermes: Predicate) -> None:
    # conversation_loop.py L3738-3760, L3815: a window below the current one (256,000 at first,
    # model_metadata.py L179-189) is taken, and the request re-sent; the same window again is not lower
    cell = run(hermes, tools("bash"), _window(128000), _window(128000), answer())
    assert actions(cell) == ["continue tools", "resend context-compress", "stop context-uncompressible"]


def test_the_fourth_overflow_exhausts_three_compressions(hermes: Predicate) -> None:
    # conversation_loop.py L3780-3796: compression_attempts > 3 returns before compressing
    windows = [_window(w) for w in (200000, 160000, 131072, 128000)]
    cell = run(hermes, tools("bash"), *windows, answer())
    assert actions(cell) == ["continue tools", *["resend context-compress"] * 3, "stop context-exhausted"]


def test_a_conversation_of_more_than_seven_messages_can_be_summarised(hermes: Predicate) -> None:
    # context_compressor.py L3353-3356: protect_first_n (3) + 3 + 1 messages are needed; three tool
    # rounds make seven (prompt, then an assistant message and a result each), a fourth makes nine
    overflow = _window(300000)  # a window above the current one: only summarising can shrink anything
    three = run(hermes, *[tools("bash")] * 3, overflow, answer())
    assert actions(three)[-1] == "stop context-uncompressible"
    four = run(hermes, *[tools("bash")] * 4, overflow, answer())
    assert actions(four)[-2:] == ["resend context-compress", "stop text-response"]


def test_only_blank_tool_names_get_error_results_and_the_third_time_stops(hermes: Predicate) -> None:
    # conversation_loop.py L4756-4805: the assistant message and error tool results only (no user
    # message: a continue, as the original showed), _invalid_tool_retries reaches 3 -> partial
    cell = run(hermes, tools(""), tools(""), tools(""), answer())
    assert [(s.decision.action, s.decision.failed) for s in cell.steps[:2]] == [("continue", "all")] * 2
    assert (cell.n_steps, cell.reason, cell.ok) == (3, "invalid_tool_call", False)


def test_arguments_that_are_json_but_not_an_object_are_not_executed(hermes: Predicate) -> None:
    # agent/tool_executor.py L79-95: 'Invalid tool arguments ... tool was not executed'
    turn = Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(call("bash", 0, '"{\\"command\\": \\"ls\\"}"'), call("read_file", 1)))
    first = run(hermes, turn, answer()).steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (1,), (0,))


def test_the_max_tokens_boost_changes_nothing_over_the_custom_providers_65536(hermes: Predicate) -> None:
    # conversation_loop.py L4418-4432: min(max(4096 * 2**n, requested), max(32768, requested))
    import sys

    port = sys.modules["stopbench_predicates.hermes"]
    assert [port.boosted(n) for n in (1, 2, 3, 4)] == [None] * 4
    assert [port.boosted(n, requested=4096) for n in (1, 2, 3, 4)] == [
        RequestChanges(max_tokens=8192), RequestChanges(max_tokens=16384), RequestChanges(max_tokens=32768),
        RequestChanges(max_tokens=32768)]
    cell = run(hermes, truncated(), answer())
    assert [s.decision.changes for s in cell.steps] == [None, None]


def test_a_compression_of_more_than_seven_messages_compacts_the_request(hermes: Predicate) -> None:
    overflow = Turn(finish="error", error=TurnError("context_overflow", status=400))
    few = run(hermes, tools("a"), overflow, answer(), then="end")
    assert actions(few)[1] == "stop context-uncompressible"  # 3 messages: nothing to summarise
    many = run(hermes, tools("a"), tools("b"), tools("c"), tools("d"), overflow, answer())
    assert actions(many)[4] == "resend context-compress"
    assert many.steps[4].decision.changes == RequestChanges(compact=True)


def test_a_prompt_refused_by_the_provider_filter_stops_at_once_as_content_policy_blocked(hermes: Predicate) -> None:
    # error_classifier.py L650-663 runs before the status rules: a 400 safety block is not a
    # generic non-retryable client error (conversation_loop.py L4084-4095)
    refused = TurnError("content_filter", "The response was filtered", 400, "content_filter")
    blocked = Turn(finish="error", error=refused)
    cell = run(hermes, blocked)
    assert (cell.n_steps, cell.reason, cell.ok, cell.steps[0].decision.rule) == (1, "content_policy_blocked", False,
                                                                                "api-content-policy")
    other = run(hermes, replace(blocked, error=TurnError("invalid_request", "bad", 400)))
    assert other.reason == "non_retryable_client_error"


def test_on_the_gemini_wire_a_continuation_boosts_max_tokens_once_then_the_native_default_returns(
        hermes: Predicate) -> None:
    # gemini profile: no default_max_tokens, so the boost is 4096 * 2**n (conversation_loop.py L4418-4432);
    # the native client sends 65535 when the request has none (gemini_native_adapter.py L459-472), and
    # the boost is consumed by one request (chat_completion_helpers.py L1163-1166)
    cut = Turn(finish="length", finish_raw="MAX_TOKENS", content="partial")
    calls = replace(tools("read_file"), finish="stop", finish_raw="STOP")
    done = replace(answer(), finish_raw="STOP")
    cell = run(hermes, cut, cut, calls, done, dialect="gemini")
    assert actions(cell) == ["remind length-continue"] * 2 + ["continue tools", "stop text-response"]
    assert [s.decision.changes for s in cell.steps[:3]] == [
        RequestChanges(max_tokens=8192), RequestChanges(max_tokens=16384), RequestChanges(max_tokens=65535)]
