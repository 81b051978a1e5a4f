"""Claude Code's headless loop (predicates/claude_code.py) against npm @anthropic-ai/claude-code@2.1.328
(byte offsets into the native binary are cited in the predicate file)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ErrorKind, RequestChanges, ToolCall, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, seq


@pytest.fixture(scope="module")
def cc() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "claude_code.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect="anthropic"), pred)


FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
          "pause_turn": "unknown", "refusal": "content_filter", "model_context_window_exceeded": "length"}


def a(raw: str, content: str | None = None, *calls: ToolCall, refusal: str | None = None) -> Turn:
    return Turn(finish=FINISH[raw], finish_raw=raw, content=content, tool_calls=calls, refusal=refusal)  # type: ignore[arg-type]


def tu(name: str = "read_file", arguments: str = '{"path": "a"}', i: int = 0) -> ToolCall:
    return ToolCall(id=f"toolu_{i}", name=name, arguments=arguments)


def err(kind: ErrorKind, status: int | None) -> Turn:
    return Turn(finish="error", error=TurnError(kind, "", status))


def path(cell: Cell) -> list[tuple[str, str]]:
    return [(s.decision.action, s.decision.rule) for s in cell.steps]


def test_every_tool_use_block_is_answered_and_a_cut_input_fails(cc: Predicate) -> None:
    # __unparsedToolInput (claude@306444306): input that is no JSON object fails the tool's validation
    cell = run(cc, a("max_tokens", None, tu(), tu("read_file", '{"path": "a', 1)), a("end_turn", "done"))
    assert path(cell) == [("continue", "calls"), ("stop", "answer")]
    assert (cell.steps[0].decision.run, cell.steps[0].decision.failed) == ((0,), (1,))
    assert cell.ok is True and cell.reason == "success"


def test_tool_use_without_a_block_is_nudged_twice_then_the_run_fails(cc: Predicate) -> None:
    # Ogr nudge while malformedToolUseRetryCount < VS (VS=2, claude@328738673), then malformed_tool_use_exhausted
    cell = run(cc, a("tool_use"), a("tool_use"), a("tool_use"), a("end_turn", "never"))
    assert path(cell) == [("remind", "dropped-call"), ("remind", "dropped-call"), ("stop", "dropped-call-stop")]
    assert (cell.reason, cell.ok) == ("success", False)  # observed: subtype success, is_error true


def test_an_empty_end_turn_is_nudged_once_then_accepted(cc: Predicate) -> None:
    # query_thinking_only_response (claude@328740500-328741500): iHn once (thinkingOnlyNudged); the
    # resend/give-up branches need a response without any message (observed: chat-empty-stop, 2 requests)
    cell = run(cc, a("end_turn", ""), a("end_turn", ""), a("end_turn", "late"))
    assert path(cell) == [("remind", "no-output"), ("stop", "answer")]
    assert (cell.steps[0].decision.message or "").startswith("[Your previous response had no visible output.")


def test_the_fifth_silent_tool_round_carries_the_silent_turn_reminder(cc: Predicate) -> None:
    # Qgo=5 (claude@320920954): observed at turns 4, 9 and 14 of chat-long-tool-run
    cell = run(cc, *[a("tool_use", None, tu(i=i)) for i in range(10)], a("end_turn", "done"))
    assert [s.decision.action for s in cell.steps] == (["continue"] * 4 + ["remind"]) * 2 + ["stop"]
    assert cell.steps[4].decision.run == (0,)  # the calls are run; the reminder rides on their results
    spoken = run(cc, *[a("tool_use", "step", tu(i=i)) for i in range(6)], a("end_turn", "done"))
    assert "remind" not in [s.decision.action for s in spoken.steps]


def test_a_cut_text_reply_is_resumed_three_times(cc: Predicate) -> None:
    # Rpo nudge, cs=3 attempts (claude@328692797), then the withheld reply surfaces as an error
    cut = a("max_tokens", "half an ans")
    cell = run(cc, cut, cut, cut, cut, a("end_turn", "done"))
    assert path(cell) == [("remind", "output-limit")] * 3 + [("stop", "output-limit-stop")]
    assert cell.steps[0].decision.changes is None  # max_tokens unchanged (observed: 32000 again)


def test_the_first_refusal_is_nudged_once_and_a_second_in_a_row_ends_the_run(cc: Predicate) -> None:
    # Cpo "stopped by a safety classifier" once; then model_refusal_no_fallback (claude@325804429)
    cell = run(cc, a("refusal", "", refusal="no"), a("refusal", "", refusal="no"), a("end_turn", "x"))
    assert path(cell) == [("remind", "refusal-nudge"), ("stop", "refusal-stop")]
    assert (cell.reason, cell.ok) == ("api_error", False)


def cyber(content: str = "") -> Turn:
    detail = '{"type":"refusal","category":"cyber","explanation":"declined"}'
    return Turn(finish="content_filter", finish_raw="refusal", finish_detail=detail, content=content)


def test_a_second_cyber_refusal_switches_to_the_fallback_model_once_then_ends_the_run(cc: Predicate) -> None:
    # observed (anthropic-refusal-mid-stream on 2.1.328): nudge on the session model, the refusal again is sent
    # once more on claude-opus-4-8 with max_tokens 64000 (categories cyber/frontier_llm, vR claude@312485945),
    # refused there too: "Opus 4.8's safeguards flagged this message" (api_error)
    cell = run(cc, a("tool_use", None, tu()), cyber("partial"), then="repeat")
    assert path(cell) == [("continue", "calls"), ("remind", "refusal-nudge"), ("resend", "refusal-switch"),
                          ("stop", "refusal-stop")]
    assert cell.steps[2].decision.changes == RequestChanges(max_tokens=64000, model="claude-opus-4-8")
    assert (cell.reason, cell.ok) == ("api_error", False)


@pytest.mark.parametrize("detail", [None, "refusal/cyber", '{"type":"refusal","category":"bio"}'])
def test_a_refusal_without_a_switching_category_ends_at_the_second(cc: Predicate, detail: str | None) -> None:
    # no stop_details (or a category outside cyber/frontier_llm): model_refusal_no_fallback (observed:
    # anthropic-refusal, bedrock-content-filtered)
    turn = Turn(finish="content_filter", finish_raw="refusal", finish_detail=detail, content="")
    cell = run(cc, turn, then="repeat")
    assert path(cell) == [("remind", "refusal-nudge"), ("stop", "refusal-stop")]


def test_pause_turn_ends_the_run_as_a_success(cc: Predicate) -> None:
    cell = run(cc, a("pause_turn", "searching..."), a("end_turn", "found"))
    assert path(cell) == [("stop", "pause")] and cell.ok is True


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_retryable_statuses_are_retried_ten_times(cc: Predicate, status: int) -> None:
    # zPs (claude@320103811): 408/409/429/>=500 -> zG while retries < maxRetries (QPs=10, claude@320110807)
    cell = run(cc, *[err("server_error", status)] * 11, a("end_turn", "ok"))
    assert [s.decision.action for s in cell.steps] == ["resend"] * 10 + ["stop"]
    assert (cell.reason, cell.ok) == ("api_error", False)


def test_overloaded_is_retried_while_under_max_overloaded(cc: Predicate) -> None:
    # 529 -> uAt (claude@320105517): maxOverloaded 3 (T_e=3, claude@320110838), no fallback model by default
    cell = run(cc, *[err("overloaded", 529)] * 3, a("end_turn", "ok"))
    assert path(cell) == [("resend", "overloaded-retry")] * 2 + [("stop", "api-error")]


def test_any_other_status_is_tried_once_more_without_streaming_then_fails(cc: Predicate) -> None:
    # zPs 404 -> j1e; qPs badRequest/unknown -> j1e (claude@320104200-320105500); observed for 400 and 403
    for kind, status in (("not_found", 404), ("invalid_request", 400), ("permission", 403)):
        cell = run(cc, err(kind, status), err(kind, status), a("end_turn", "ok"))  # type: ignore[arg-type]
        assert [s.decision.action for s in cell.steps] == ["resend", "stop"]
        assert (cell.reason, cell.ok) == ("api_error", False)


def test_a_dropped_connection_is_retried_ten_times_and_once_more_without_streaming(cc: Predicate) -> None:
    # qPs connectionLost -> zG(.., z) with z = j1e (claude@320104200-320105500): 10 retries, then one
    # non-streaming try; driving 2.1.328 showed 11 resends (chat-connection-dropped-repeat)
    cell = run(cc, *[err("connection_reset", None)] * 12, a("end_turn", "ok"))
    assert [s.decision.action for s in cell.steps] == ["resend"] * 11 + ["stop"]


def overflow() -> Turn:
    return Turn(finish="error", error=TurnError("context_overflow", "", 400))


def test_an_overflow_is_compacted_then_truncated_once_then_the_run_ends(cc: Predicate) -> None:
    # reactive compaction (k6n claude@319524457): summary request, each refused try sent twice (observed),
    # Dye (claude@319856914) drops the oldest groups while two are left; then "Prompt is too long"
    cell = run(cc, a("tool_use", None, tu()), overflow(), then="repeat")
    assert path(cell) == [("continue", "calls"), ("remind", "compact-summary"), ("resend", "compact-retry"),
                          ("remind", "compact-truncate"), ("resend", "compact-retry"), ("stop", "compact-failed")]
    assert [s.decision.changes.compact if s.decision.changes else False for s in cell.steps] == \
        [False, False, False, True, False, False]
    assert (cell.reason, cell.ok) == ("success", False)  # observed: subtype success, is_error true


def test_a_long_conversation_is_truncated_at_most_three_times(cc: Predicate) -> None:
    rounds = [a("tool_use", None, tu(i=i)) for i in range(20)]
    cell = run(cc, *rounds, overflow(), then="repeat")
    assert [r for _, r in path(cell)[20:]].count("compact-truncate") == 3  # Gee=3, claude@319856902


def test_a_summary_without_its_block_is_asked_for_once_more_then_the_loop_goes_on_compacted(cc: Predicate) -> None:
    cell = run(cc, a("tool_use", None, tu()), overflow(), a("end_turn", "Summary: ..."), a("end_turn", "again"),
               a("end_turn", "the answer"))
    assert path(cell)[1:] == [("remind", "compact-summary"), ("remind", "compact-summary-again"),
                              ("remind", "compacted"), ("stop", "answer")]
    assert cell.steps[3].decision.changes is not None and cell.steps[3].decision.changes.compact
    tagged = run(cc, a("tool_use", None, tu()), overflow(), a("end_turn", "<summary>ok</summary>"), a("end_turn", "x"))
    assert path(tagged)[2] == ("remind", "compacted")


def test_an_error_event_with_nothing_received_goes_out_again_without_streaming(cc: Predicate) -> None:
    # qPs: badRequest/serverError with progress "nothing" -> j1e (claude@320105900), max_tokens 64000 (observed)
    cell = run(cc, Turn(finish="error", error=TurnError("timeout", "", None)), a("end_turn", "ok"))
    assert path(cell) == [("resend", "no-stream-retry"), ("stop", "answer")]
    assert cell.steps[0].decision.changes is not None and cell.steps[0].decision.changes.max_tokens == 64000


def test_a_bad_request_event_after_thinking_fails_the_run_at_once(cc: Predicate) -> None:
    # qPs: progress thinkingOnly, cause badRequest -> fail (observed: rec-openrouter-length-then-stream-error)
    cut = Turn(finish="error", content="", reasoning="We need to", error=TurnError("stream_error", "", 400))
    assert path(run(cc, cut, a("end_turn", "ok"))) == [("stop", "stream-error-stop")]


def test_a_reply_with_no_block_and_no_stop_reason_is_tried_again_without_streaming(cc: Predicate) -> None:
    # observed: rec-gemini-prompt-blocked-no-candidates (one request, max_tokens 64000)
    cell = run(cc, Turn(finish="unknown", finish_raw=None), a("end_turn", "ok"))
    assert path(cell) == [("resend", "no-stream-retry"), ("stop", "answer")]
