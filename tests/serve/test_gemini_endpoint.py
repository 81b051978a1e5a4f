"""The Gemini endpoint, read by the official google-genai client: JSON, SSE and array streams,
function calls as parts, every finish reason, Google's error bodies, and what the follow-up
request says the client did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from bench.catalogue.load import load_catalogue
from bench.engine.model import Sequence, Turn
from bench.serve.render import tool_input
from bench.wires.dialects import TABLES
from tests.serve.serving import GEMINI_TOOLS, make_sequence, serving

ROOT = Path(__file__).resolve().parents[2]
GEMINI = [s for s in load_catalogue(ROOT / "sequences").sequences if s.dialect == "gemini"]
LONG = "An answer long enough to arrive in several pieces of the stream, not in one."
MODEL = "gemini-2.5-pro"


def client(base_url: str) -> genai.Client:
    root = base_url.removesuffix("/v1")
    return genai.Client(api_key="k", http_options=types.HttpOptions(base_url=root, timeout=10_000))


def assembled(responses: list[types.GenerateContentResponse]) -> dict[str, Any]:
    """What a client makes of one answer: text, thoughts, calls, finish, block reason."""
    text: list[str] = []
    thoughts: list[str] = []
    calls: list[tuple[str | None, str | None, dict[str, Any]]] = []
    finish = None
    block = None
    for r in responses:
        if r.prompt_feedback is not None and r.prompt_feedback.block_reason is not None:
            block = r.prompt_feedback.block_reason.value
        for cand in r.candidates or []:
            if cand.finish_reason is not None:
                finish = cand.finish_reason.value if hasattr(cand.finish_reason, "value") else cand.finish_reason
            for part in (cand.content.parts if cand.content and cand.content.parts else []):
                if part.function_call is not None:
                    fc = part.function_call
                    calls.append((fc.id, fc.name, dict(fc.args or {})))
                elif part.text is not None:
                    (thoughts if part.thought else text).append(part.text)
    return {"text": "".join(text) if text else None, "thoughts": "".join(thoughts) if thoughts else None,
            "calls": calls, "finish": finish, "block": block}


def expected(turn: Turn) -> dict[str, Any]:
    block = None
    if turn.finish_detail and turn.finish_detail.startswith("promptFeedback.blockReason "):
        block = turn.finish_detail.split(" ", 1)[1].split(":", 1)[0]
    return {"text": turn.content, "thoughts": turn.reasoning,
            "calls": [(c.id or None, c.name, tool_input(c.arguments)) for c in turn.tool_calls],
            "finish": turn.finish_raw, "block": block}


# the tools every request offers (a request offering none is answered in text)
OFFERED = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
    name=t["name"], description=t["description"]) for t in GEMINI_TOOLS[0]["functionDeclarations"]])])


def ask(c: genai.Client, stream: bool, contents: Any = "hi") -> list[types.GenerateContentResponse]:
    if stream:
        return list(c.models.generate_content_stream(model=MODEL, contents=contents, config=OFFERED))
    return [c.models.generate_content(model=MODEL, contents=contents, config=OFFERED)]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("seq", GEMINI, ids=[s.id for s in GEMINI])
def test_every_gemini_sequence_reaches_the_official_client_as_recorded(seq: Sequence, stream: bool) -> None:
    with serving(seq) as srv:
        c = client(srv.base_url)
        got = [assembled(ask(c, stream)) for _ in seq.turns]
    assert got == [expected(t) for t in seq.turns]


@pytest.mark.parametrize("raw", sorted(TABLES["gemini"]))
def test_every_gemini_finish_reason_arrives_verbatim_streamed_and_not(raw: str) -> None:
    seq = make_sequence([{"finish": TABLES["gemini"][raw].finish, "finish_raw": raw, "content": LONG}], "gemini",
                        then="repeat")
    with serving(seq) as srv:
        c = client(srv.base_url)
        plain, streamed = assembled(ask(c, False)), assembled(ask(c, True))
    assert plain == streamed == {"text": LONG, "thoughts": None, "calls": [], "finish": raw, "block": None}


def test_a_stream_comes_in_pieces_with_the_finish_and_usage_on_the_last() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "STOP", "content": LONG, "reasoning": "think",
                          "usage": {"input_tokens": 7, "output_tokens": 9}}], "gemini")
    with serving(seq) as srv:
        chunks = ask(client(srv.base_url), True)
    assert len(chunks) > 2
    assert [c.candidates[0].finish_reason for c in chunks[:-1]] == [None] * (len(chunks) - 1)  # type: ignore[index]
    assert chunks[-1].usage_metadata is not None and chunks[-1].usage_metadata.total_token_count == 16


def test_a_call_of_another_dialect_is_a_function_call_part_with_stop() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None,
                          "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": '{"path": "a"}'},
                                         {"id": "call_2", "name": "grep", "arguments": '{"pattern": "de'}]}])
    with serving(seq, dialect="gemini") as srv:
        got = assembled(ask(client(srv.base_url), True))
    # Gemini has no tool-call finish; cut-off arguments cannot be an object on this wire: {}
    assert got["finish"] == "STOP"
    assert got["calls"] == [("call_1", "read_file", {"path": "a"}), ("call_2", "grep", {})]


def test_without_alt_sse_the_stream_is_one_json_array_of_the_pieces() -> None:
    seq = make_sequence([{"finish": "length", "finish_raw": "MAX_TOKENS", "content": LONG}], "gemini")
    with serving(seq) as srv:
        url = srv.base_url.removesuffix("/v1") + f"/v1beta/models/{MODEL}:streamGenerateContent"
        r = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                                  "tools": GEMINI_TOOLS}, timeout=10)
    pieces = json.loads(r.text)
    assert r.headers["content-type"].startswith("application/json") and len(pieces) > 1
    assert "".join(p["candidates"][0]["content"]["parts"][0]["text"] for p in pieces) == LONG
    assert [p["candidates"][0].get("finishReason") for p in pieces][-2:] == [None, "MAX_TOKENS"]


# ---------------------------------------------------------------- errors, as Google sends them


@pytest.mark.parametrize(("error", "code", "status"), [
    ({"kind": "rate_limit", "status": 429}, 429, "RESOURCE_EXHAUSTED"),
    ({"kind": "overloaded", "status": 503, "code": "UNAVAILABLE"}, 503, "UNAVAILABLE"),
    ({"kind": "server_error", "status": 500}, 500, "INTERNAL"),
    ({"kind": "context_overflow", "status": 400}, 400, "INVALID_ARGUMENT"),
    ({"kind": "authentication", "status": 401, "code": "invalid_api_key"}, 401, "UNAUTHENTICATED"),
    ({"kind": "not_found", "status": 404}, 404, "NOT_FOUND"),
])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_http_error_is_a_google_rpc_status_body(error: dict[str, Any], code: int, status: str,
                                                   stream: bool) -> None:
    seq = make_sequence([{"finish": "error", "content": None, "error": {**error, "message": "no luck"}}], "gemini")
    with serving(seq) as srv, pytest.raises(errors.APIError) as info:
        ask(client(srv.base_url), stream)
    assert (info.value.code, info.value.status, info.value.message) == (code, status, "no luck")


def test_an_error_inside_a_stream_follows_the_output_and_the_client_raises_it() -> None:
    seq = make_sequence([{"finish": "error", "content": LONG,
                          "error": {"kind": "stream_error", "status": 500, "message": "broke"}}], "gemini")
    received: list[str] = []
    with serving(seq) as srv, pytest.raises(errors.APIError) as info:
        c = client(srv.base_url)
        for chunk in c.models.generate_content_stream(model=MODEL, contents="hi", config=OFFERED):
            received.append(chunk.text or "")
    assert "".join(received) == LONG
    assert (info.value.code, info.value.status) == (500, "INTERNAL")


def test_a_request_past_the_end_of_the_script_is_a_410_google_error() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "STOP", "content": "done"}], "gemini")
    with serving(seq) as srv:
        c = client(srv.base_url)
        ask(c, False)
        with pytest.raises(errors.APIError) as info:
            ask(c, False)
    assert info.value.code == 410 and "ended" in (info.value.message or "")


# ---------------------------------------------------------------- what the next request says


def observed(seq: Sequence, follow: list[Any], dialect: str | None = None) -> list[dict[str, Any]]:
    with serving(seq, dialect=dialect) as srv:
        c = client(srv.base_url)
        for contents in follow:
            ask(c, True, contents)
        return [o.as_json() for o in srv.session.observed()]


PROMPT = types.Content(role="user", parts=[types.Part(text="fix the bug")])
CALLS = {"finish": "stop", "finish_raw": "STOP", "content": None,
         "tool_calls": [{"id": "", "name": "read_file", "arguments": '{"path": "a"}'},
                        {"id": "", "name": "read_file", "arguments": '{"path": "b"}'}]}
ECHO = types.Content(role="model", parts=[
    types.Part(function_call=types.FunctionCall(name="read_file", args={"path": "a"})),
    types.Part(function_call=types.FunctionCall(name="read_file", args={"path": "b"}))])


def result(name: str, response: dict[str, Any]) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(name=name, response=response))


def test_function_responses_after_the_echo_are_a_continue_paired_by_name_and_order() -> None:
    seq = make_sequence([CALLS, {"finish": "stop", "finish_raw": "STOP", "content": "done"}], "gemini")
    answers = types.Content(role="user", parts=[result("read_file", {"output": "text of a"}),
                                                result("read_file", {"error": "no such file: b"})])
    steps = observed(seq, [[PROMPT], [PROMPT, ECHO, answers]])
    assert [(s["action"], s["run"], s["failed"]) for s in steps] == [("continue", [0], [1]), ("stop", [], [])]


def test_the_same_contents_again_is_a_resend_and_a_new_user_text_a_remind() -> None:
    seq = make_sequence([{"finish": "error", "finish_raw": "MALFORMED_FUNCTION_CALL", "content": None}] * 2
                        + [{"finish": "stop", "finish_raw": "STOP", "content": "done"}], "gemini")
    nudge = types.Content(role="user", parts=[types.Part(text="call the tool properly")])
    steps = observed(seq, [[PROMPT], [PROMPT], [PROMPT, nudge]])
    assert [(s["action"], s["message"]) for s in steps] == [
        ("resend", None), ("remind", "call the tool properly"), ("stop", None)]


def test_a_result_answering_a_call_by_its_id_is_paired_with_that_call() -> None:
    seq = make_sequence([{**CALLS, "tool_calls": [{"id": "fc_a", "name": "read_file", "arguments": '{"path": "a"}'},
                                                  {"id": "fc_b", "name": "read_file", "arguments": '{"path": "b"}'}]},
                         {"finish": "stop", "finish_raw": "STOP", "content": "done"}], "gemini")
    echo = types.Content(role="model", parts=[
        types.Part(function_call=types.FunctionCall(id="fc_a", name="read_file", args={"path": "a"})),
        types.Part(function_call=types.FunctionCall(id="fc_b", name="read_file", args={"path": "b"}))])
    only_b = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id="fc_b", name="read_file", response={"output": "text of b"}))])
    steps = observed(seq, [[PROMPT], [PROMPT, echo, only_b]])
    assert (steps[0]["action"], steps[0]["run"], steps[0]["failed"]) == ("continue", [1], [])
