"""A recipe applied to one answer's delivery plan: pure, seeded, and shaped as each provider sends it."""

from __future__ import annotations

import json
import random

import pytest

from bench.faults import Injected, apply, inject, parse_recipe_text
from bench.serve.respond import Frame, Plan, json_plan

STREAM = Plan(200, (("content-type", "text/event-stream"),),
              tuple(Frame(f"data: {{\"n\": {i}}}\n\n".encode()) for i in range(6)), "close")


def run(text: str, plan: Plan = STREAM, request: int = 1, wire: str = "openai-chat",
        seed: int = 0) -> tuple[Plan, Injected]:
    return apply(parse_recipe_text(text), plan, request_index=request, rng=random.Random(seed), wire=wire)


def test_truncate_after_3_frames_ends_the_stream_cleanly_with_the_first_three() -> None:
    out, done = run("faults: [{fault: truncate, after_frames: 3}]")
    assert out.frames == STREAM.frames[:3]
    assert out.end == "close" and out.one_by_one
    assert done.kind == "stream_cut" and done.replaced


def test_disconnect_breaks_the_connection_after_its_frames() -> None:
    out, done = run("faults: [{fault: disconnect, after_frames: 2}]")
    assert out.frames == STREAM.frames[:2] and out.end == "cut"
    assert done.kind == "connection_reset"


def test_a_cut_past_the_last_frame_changes_nothing() -> None:
    out, done = run("faults: [{fault: truncate, after_frames: 6}]")
    assert out is STREAM and not done


def test_a_cut_after_n_ms_keeps_the_frames_due_before_and_ends_at_n_ms() -> None:
    out, done = run("pace: {ttft_ms: 100, tokens_per_second: 60}\nfaults: [{fault: truncate, after_ms: 250}]")
    # frames due at 0.1, 0.2, 0.3 s...: two go out, then the end 50 ms after the second
    assert [f.data for f in out.frames[:2]] == [f.data for f in STREAM.frames[:2]]
    assert out.frames[2].data == b""
    assert sum(f.delay for f in out.frames) == pytest.approx(0.25)
    assert done.kind == "stream_cut"


def test_a_json_answer_cut_breaks_the_connection_after_half_its_body() -> None:
    body = json_plan({"choices": [{"message": {"content": "x" * 40}}]}, 200)
    out, done = run("faults: [{fault: truncate, after_frames: 0}]", body)
    assert out.frames[0].data == body.frames[0].data[:len(body.frames[0].data) // 2]
    assert out.end == "cut" and done.kind == "connection_reset"


def test_duplicate_sends_a_frame_twice_and_the_turn_still_arrives() -> None:
    out, done = run("faults: [{fault: duplicate, frame: 2}]")
    assert [f.data for f in out.frames] == [f.data for f in (STREAM.frames[:2] + STREAM.frames[1:])]
    assert done and not done.replaced


def test_corrupt_garbles_a_frame_keeping_its_length_and_its_sse_framing() -> None:
    out, done = run("faults: [{fault: corrupt, frame: 1}]")
    bad = out.frames[0].data
    assert len(bad) == len(STREAM.frames[0].data) and bad.endswith(b"\n\n") and b"#" in bad
    with pytest.raises(ValueError):
        json.loads(bad.decode()[len("data: "):])
    assert done.kind == "stream_error"


def test_stall_adds_a_pause_before_its_frame() -> None:
    out, done = run("faults: [{fault: stall, seconds: 2.5, before_frame: 3}]")
    assert [f.delay for f in out.frames] == [0, 0, 2.5, 0, 0, 0]
    assert done and not done.replaced


def test_pacing_waits_ttft_then_spaces_frames_by_the_token_rate() -> None:
    out, done = run("pace: {ttft_ms: 300, tokens_per_second: 30}")
    assert [round(f.delay, 6) for f in out.frames] == [0.3] + [0.2] * 5
    assert out.one_by_one and done.describe() == "paced: first frame after 300 ms, 30 tokens/s"


def test_jitter_moves_each_delay_within_its_bound_and_the_seed_fixes_it() -> None:
    text = "pace: {ttft_ms: 100, tokens_per_second: 60, jitter_ms: 50}"
    a, _ = run(text, seed=1)
    b, _ = run(text, seed=1)
    c, _ = run(text, seed=2)
    assert a == b and a != c
    assert all(0.05 - 1e-9 <= f.delay <= 0.15 + 1e-9 for f in a.frames)


def test_a_fault_applies_only_at_the_requests_it_names() -> None:
    text = "faults: [{fault: truncate, after_frames: 1, requests: [2]}]"
    assert not run(text, request=1)[1]
    assert run(text, request=2)[1].kind == "stream_cut"


def test_a_probability_applies_a_fault_on_some_requests_and_the_seed_says_which() -> None:
    recipe = parse_recipe_text("seed: 4\nfaults: [{fault: truncate, after_frames: 1, probability: 0.5}]")
    hits = [bool(inject(recipe, STREAM, wire="openai-chat", request_index=i, key="s")[1]) for i in range(1, 41)]
    again = [bool(inject(recipe, STREAM, wire="openai-chat", request_index=i, key="s")[1]) for i in range(1, 41)]
    other = [bool(inject(recipe.with_seed(5), STREAM, wire="openai-chat", request_index=i, key="s")[1])
             for i in range(1, 41)]
    assert hits == again and hits != other
    assert 8 < sum(hits) < 32


def test_nothing_applies_and_the_plan_is_the_same_object() -> None:
    out, done = run("faults: []")
    assert out is STREAM and done == Injected()


@pytest.mark.parametrize(("wire", "status", "body", "headers"), [
    ("openai-chat", 429, {"error": {"message": "Rate limit reached for requests. Please try again later.",
                                    "type": "rate_limit_exceeded", "param": None, "code": 429}},
     {"retry-after": "2", "x-ratelimit-remaining-requests": "0"}),
    ("openai-responses", 429, {"error": {"message": "Rate limit reached for requests. Please try again later.",
                                         "type": "rate_limit_exceeded", "param": None, "code": 429}},
     {"retry-after": "2"}),
    ("anthropic", 429, {"type": "error", "error": {"type": "rate_limit_error",
                                                   "message": "Number of requests has exceeded your rate limit."}},
     {"retry-after": "2", "anthropic-ratelimit-requests-remaining": "0"}),
    ("anthropic", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     {"retry-after": "2"}),
    ("gemini", 429, {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                               "status": "RESOURCE_EXHAUSTED",
                               "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                            "retryDelay": "2s"}]}},
     {"retry-after": "2"}),
    ("bedrock-converse", 429, {"message": "Too many requests, please wait before trying again."},
     {"retry-after": "2", "x-amzn-errortype": "ThrottlingException"}),
])
def test_a_status_fault_is_the_providers_error_with_retry_after(wire: str, status: int, body: object,
                                                               headers: dict[str, str]) -> None:
    out, done = run(f"faults: [{{fault: status, status: {status}, retry_after: 2}}]", wire=wire)
    assert out.status == status
    assert json.loads(out.frames[0].data) == body
    got = {k.lower(): v for k, v in out.headers}
    assert {k: got.get(k) for k in headers} == headers
    assert int(got["content-length"]) == len(out.frames[0].data)
    assert done.status == status and done.retry_after == 2 and done.replaced
    assert done.kind == ("overloaded" if status == 529 else "rate_limit")


def test_a_status_fault_without_retry_after_sends_no_hint() -> None:
    out, done = run("faults: [{fault: status, status: 500}]")
    assert "retry-after" not in {k.lower() for k, _ in out.headers}
    assert done.kind == "server_error" and done.retry_after is None


def test_injected_survives_its_json_form() -> None:
    _, done = run("faults: [{fault: status, status: 429, retry_after: 1}]")
    assert Injected.from_json(json.loads(json.dumps(done.as_json()))) == done


def test_a_clean_cut_that_loses_only_the_end_marker_leaves_the_turn_whole() -> None:
    stream = Plan(200, (), (Frame(b'data: {"choices":[{"delta":{"content":"Done."}}]}\n\n'),
                            Frame(b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n'),
                            Frame(b"data: [DONE]\n\n")), "close")
    out, done = run("faults: [{fault: truncate, after_frames: 2}]", stream)
    assert out.frames == stream.frames[:2]
    assert done and not done.replaced and "only the end marker was lost" in done.describe()
    _, broken = run("faults: [{fault: disconnect, after_frames: 2}]", stream)
    assert broken.kind == "connection_reset"  # a broken connection is an error to the client all the same
