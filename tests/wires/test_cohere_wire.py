"""The Cohere v2 wire (``POST /v2/chat``): the official client (``cohere.ClientV2(base_url=...)``,
``chat`` and ``chat_stream``) against the replay server through tool use to the end; errors as Cohere
sends them; requests read back; captures imported back to the turn that was served; the reference
loop's client."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

cohere = pytest.importorskip("cohere")

from bench.engine.model import ToolCall, Turn, TurnError, Usage  # noqa: E402
from bench.importers import import_capture  # noqa: E402
from bench.serve import BackgroundServer  # noqa: E402
from bench.wires.base import Context  # noqa: E402
from bench.wires.client import Result  # noqa: E402
from bench.wires.cohere import WIRE  # noqa: E402
from tests.serve.serving import CHAT_TOOLS, make_sequence, serving  # noqa: E402

CALL = {"id": "read_file_1", "name": "read_file", "arguments": '{"path": "a.txt"}'}
TOOL_THEN_END: list[dict[str, Any]] = [
    {"finish": "tool_calls", "finish_raw": "TOOL_CALL", "content": "I will read the file.", "tool_calls": [CALL],
     "usage": {"input_tokens": 11, "output_tokens": 7}},
    {"finish": "stop", "finish_raw": "COMPLETE", "content": "the file says hello, " * 3,
     "usage": {"input_tokens": 30, "output_tokens": 12}},
]
GO = [{"role": "user", "content": "go"}]


def _client(srv: BackgroundServer) -> Any:
    return cohere.ClientV2(base_url=srv.base_url.removesuffix("/v1"), api_key="x", timeout=10)


def _streamed(client: Any, messages: list[Any]) -> tuple[str, str | None, list[tuple[str, str, str]], str | None]:
    """(text, tool plan, calls, finish) of one chat_stream, assembled from the SDK's parsed events."""
    text, plan, finish = [], [], None
    calls: dict[int, list[str]] = {}
    for ev in client.chat_stream(model="command-a-03-2025", messages=messages, tools=CHAT_TOOLS):
        if ev.type == "content-delta":
            text.append(ev.delta.message.content.text or "")
        elif ev.type == "tool-plan-delta":
            plan.append(ev.delta.message.tool_plan)
        elif ev.type == "tool-call-start":
            tc = ev.delta.message.tool_calls
            calls[ev.index] = [tc.id, tc.function.name, tc.function.arguments or ""]
        elif ev.type == "tool-call-delta":
            calls[ev.index][2] += ev.delta.message.tool_calls.function.arguments or ""
        elif ev.type == "message-end":
            finish = ev.delta.finish_reason
    return "".join(text), "".join(plan) or None, [tuple(c) for _, c in sorted(calls.items())], finish  # type: ignore[misc]


def _tool_round(calls: list[tuple[str, str, str]], plan: str | None) -> list[Any]:
    assistant = {"role": "assistant", "tool_plan": plan,
                 "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                for i, n, a in calls]}
    return [assistant, *({"role": "tool", "tool_call_id": i, "content": [{"type": "text", "text": "hello"}]}
                         for i, _, _ in calls)]


def test_cohere_chat_parses_the_served_tool_call_and_reaches_the_end() -> None:
    with serving(make_sequence(TOOL_THEN_END, "cohere")) as srv:
        client = _client(srv)
        first = client.chat(model="command-a-03-2025", messages=GO, tools=CHAT_TOOLS)
        calls = [(c.id, c.function.name, c.function.arguments) for c in first.message.tool_calls]
        second = client.chat(model="command-a-03-2025", messages=[*GO, *_tool_round(calls, first.message.tool_plan)],
                             tools=CHAT_TOOLS)
        observed = srv.session.observed()
        records = srv.session.records()
    assert (first.finish_reason, first.message.tool_plan, calls) == (
        "TOOL_CALL", "I will read the file.", [("read_file_1", "read_file", CALL["arguments"])])
    assert (second.finish_reason, second.message.content[0].text) == ("COMPLETE", TOOL_THEN_END[1]["content"])
    assert (second.usage.tokens.input_tokens, second.usage.tokens.output_tokens) == (30, 12)
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]
    assert [(r.path, r.stream, r.wire) for r in records] == [("/v2/chat", False, "cohere")] * 2


def test_cohere_chat_stream_parses_the_served_tool_call_and_reaches_the_end() -> None:
    with serving(make_sequence(TOOL_THEN_END, "cohere")) as srv:
        client = _client(srv)
        text, plan, calls, finish = _streamed(client, GO)
        answer = _streamed(client, [*GO, *_tool_round(calls, plan)])
        observed = srv.session.observed()
    assert (text, plan, calls, finish) == ("", "I will read the file.",
                                           [("read_file_1", "read_file", CALL["arguments"])], "TOOL_CALL")
    assert answer == (TOOL_THEN_END[1]["content"], None, [], "COMPLETE")
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]


@pytest.mark.parametrize(("status", "name"), [(429, "TooManyRequestsError"), (400, "BadRequestError"),
                                              (500, "InternalServerError"), (503, "ServiceUnavailableError")])
def test_cohere_raises_the_error_class_of_each_status_with_coheres_body(status: int, name: str) -> None:
    turns = [{"finish": "error", "error": {"kind": "http_status", "status": status, "message": "no"}}]
    with serving(make_sequence(turns, "cohere")) as srv, pytest.raises(cohere.core.ApiError) as caught:
        _client(srv).chat(model="m", messages=GO, request_options={"max_retries": 0})  # the SDK retries a 429
    assert type(caught.value).__name__ == name
    assert (caught.value.status_code, caught.value.body) == (status, {"message": "no"})


def test_an_error_after_the_output_is_a_message_end_with_error() -> None:
    turns = [{"finish": "error", "content": "partial answer", "error": {"kind": "stream_error", "message": "gone"}}]
    with serving(make_sequence(turns, "cohere")) as srv:
        events = list(_client(srv).chat_stream(model="m", messages=GO))
    assert "".join(e.delta.message.content.text for e in events if e.type == "content-delta") == "partial answer"
    assert (events[-1].type, events[-1].delta.finish_reason, events[-1].delta.error) == ("message-end", "ERROR", "gone")


def test_a_malformed_request_gets_coheres_400_in_its_shape() -> None:
    import httpx
    with serving(make_sequence(TOOL_THEN_END, "cohere")) as srv:
        url = srv.base_url.removesuffix("/v1") + "/v2/chat"
        for body in (b"{not json", b'{"model": "m", "messages": 5}', b"[1]"):
            answer = httpx.post(url, content=body)
            assert answer.status_code == 400
            assert list(answer.json()) == ["message"] and isinstance(answer.json()["message"], str)


# ------------------------------------------------------------ reading requests


def test_a_request_is_read_back_with_its_results_limit_and_tool_choice() -> None:
    body = {"max_tokens": 64, "tool_choice": "NONE", "tools": CHAT_TOOLS, "messages": [
        {"role": "system", "content": "be brief"}, *GO, *_tool_round([("c1", "grep", '{"q": 1}')], "plan"),
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "document", "document": {"data": {"n": 1}}}]}]}
    conv = WIRE.conversation(body)
    assert conv.system == "be brief"
    assert [(i.kind, i.text, i.call_id, i.calls) for i in conv.items] == [
        ("user", "go", "", ()), ("assistant", "plan", "", ("c1",)), ("tool", "hello", "c1", ()),
        ("tool", '{"n": 1}', "c1", ())]
    assert WIRE.max_tokens(body) == 64
    assert (WIRE.tool_choice(body), WIRE.tool_choice({"tool_choice": "REQUIRED"}), WIRE.tool_choice({})) == (
        "none", "required", "auto")


# ------------------------------------------------------------ importing captures


ROUND_TRIP = [
    Turn("tool_calls", "TOOL_CALL", content="let me look", tool_calls=(ToolCall("t9", "grep", '{"q":"x"}'),),
         usage=Usage(5, 6)),
    Turn("length", "MAX_TOKENS", content="cut here", reasoning="thinking first", usage=Usage(9, 2)),
    Turn("error", "TIMEOUT", content="half", usage=Usage(1, 1)),
]


@pytest.mark.parametrize("turn", ROUND_TRIP, ids=[t.finish_raw or "" for t in ROUND_TRIP])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_served_answer_imports_back_as_the_same_turn(tmp_path: Path, turn: Turn, stream: bool) -> None:
    ctx = Context("r", "m", turn.finish_raw)
    path = tmp_path / "cohere.txt"
    if stream:
        path.write_bytes(b"".join(WIRE.render_stream(turn, ctx)))
    else:
        path.write_text(json.dumps(WIRE.render_json(turn, ctx)))
    result = import_capture(path)
    (back,) = result.turns
    assert back.dialect == "cohere" and not result.unknown
    assert back.turn == turn


def test_an_in_stream_error_and_an_error_body_import_as_errors() -> None:
    asm = WIRE.assembler(Counter())
    for event in ({"type": "message-start", "id": "x"},
                  {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "par"}}}},
                  {"type": "message-end", "delta": {"finish_reason": "ERROR", "error": "gone"}}):
        asm.feed(event)
    turn = asm.finish().turn
    assert (turn.finish, turn.content, turn.error) == ("error", "par", TurnError("stream_error", "gone"))
    back = WIRE.from_response({"message": "invalid request: x"}, Counter(), 400)
    assert back.turn.error == TurnError("invalid_request", "invalid request: x", 400)


# ------------------------------------------------------------ the reference loop's client


def test_the_reference_client_runs_the_sequence_to_its_end() -> None:
    import httpx
    with serving(make_sequence(TOOL_THEN_END, "cohere")) as srv:
        conv = WIRE.open_conversation(httpx.Client(base_url=srv.base_url.removesuffix("/v1")), "m", "go",
                                      [{"name": "read_file", "parameters": {"type": "object"}}])
        first = conv.ask()
        conv.add_reply(first)
        conv.add_results([Result(c, "hello") for c in first.calls])
        second = conv.ask()
        observed = srv.session.observed()
    assert (first.finish, first.content, [(c.id, c.name, c.arguments) for c in first.calls]) == (
        "tool_calls", "I will read the file.", [("read_file_1", "read_file", CALL["arguments"])])
    assert (second.finish, second.content) == ("stop", TOOL_THEN_END[1]["content"])
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]


def test_the_finish_table_is_the_sdks_chat_finish_reason() -> None:
    import typing

    from cohere.types.chat_finish_reason import ChatFinishReason
    literal = typing.get_args(ChatFinishReason)[0]
    assert sorted(WIRE.table) == sorted(typing.get_args(literal))


def test_tool_choice_none_from_the_client_gets_no_tool_call_and_the_step_says_the_script_was_bent() -> None:
    with serving(make_sequence(TOOL_THEN_END, "cohere")) as srv:
        answer = _client(srv).chat(model="m", messages=GO, tools=CHAT_TOOLS, tool_choice="NONE")
        (step,) = srv.session.observed()
    assert not answer.message.tool_calls and answer.finish_reason == "COMPLETE"
    assert answer.message.content[0].text == TOOL_THEN_END[0]["content"]
    assert "tool_choice none" in step.note


def test_a_refusal_is_served_as_the_replys_text_and_a_usage_that_is_no_number_imports_as_zero() -> None:
    refusal = Turn("stop", "COMPLETE", refusal="I can't help with that.")
    body = WIRE.render_json(refusal, Context("r", "m", "COMPLETE"))
    assert body["message"]["content"] == [{"type": "text", "text": "I can't help with that."}]
    streamed = b"".join(WIRE.render_stream(refusal, Context("r", "m", "COMPLETE"))).decode()
    assert "I can't help with that." in streamed
    back = WIRE.from_response({**body, "usage": {"tokens": {"input_tokens": "many", "output_tokens": 3.0}}}, Counter())
    assert back.turn.usage == Usage(0, 3)


def test_the_reference_client_reads_done_as_the_end_of_the_stream_not_a_broken_frame() -> None:
    import httpx
    body = ('event: message-start\ndata: {"id":"x","type":"message-start","delta":{"message":{"role":"assistant"}}}\n\n'
            'data: [DONE]\n\n')
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=body,
                                                                   headers={"content-type": "text/event-stream"}))
    conv = WIRE.open_conversation(httpx.Client(transport=transport, base_url="http://cohere.test"), "m", "go", [])
    reply = conv.ask()
    assert reply.error is not None and reply.error.kind == "stream_cut"
