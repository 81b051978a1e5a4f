"""The Ollama wire (``POST /api/chat``): the official client (``ollama.Client(host=...).chat``) against
the replay server through tool use to the end, streamed and not; errors as Ollama sends them;
requests read back; captures imported back to the turn that was served; the reference loop's client."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ollama = pytest.importorskip("ollama")

from bench.engine.model import ToolCall, Turn, TurnError, Usage  # noqa: E402
from bench.importers import import_capture  # noqa: E402
from bench.serve import BackgroundServer  # noqa: E402
from bench.wires.base import Context  # noqa: E402
from bench.wires.client import Result  # noqa: E402
from bench.wires.ollama import WIRE  # noqa: E402
from tests.serve.serving import CHAT_TOOLS, make_sequence, serving  # noqa: E402

CALL = {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.txt"}'}
TOOL_THEN_END: list[dict[str, Any]] = [
    {"finish": "stop", "finish_raw": "stop", "content": None, "tool_calls": [CALL],
     "usage": {"input_tokens": 11, "output_tokens": 7}},
    {"finish": "stop", "finish_raw": "stop", "content": "the file says hello, " * 3,
     "usage": {"input_tokens": 30, "output_tokens": 12}},
]
GO = [{"role": "user", "content": "go"}]


def _client(srv: BackgroundServer) -> Any:
    return ollama.Client(host=srv.base_url.removesuffix("/v1"))


def _run(srv: BackgroundServer, stream: bool) -> list[Any]:
    """Two requests as an Ollama tool loop sends them: the call, its result by tool_name, the answer."""
    client = _client(srv)
    answers: list[Any] = []
    messages: list[Any] = list(GO)
    for _ in range(2):
        got = client.chat(model="llama3.2", messages=messages, tools=CHAT_TOOLS, stream=stream)
        parts = list(got) if stream else [got]
        answers.append(parts)
        calls = [c for p in parts for c in (p.message.tool_calls or [])]
        messages.append({"role": "assistant", "content": "".join(p.message.content or "" for p in parts),
                         "tool_calls": calls})
        messages += [{"role": "tool", "content": "hello", "tool_name": c.function.name} for c in calls]
    return answers


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_ollama_client_parses_the_served_tool_call_and_reaches_the_end(stream: bool) -> None:
    with serving(make_sequence(TOOL_THEN_END, "ollama")) as srv:
        first, second = _run(srv, stream)
        observed = srv.session.observed()
        records = srv.session.records()
    (call,) = [c for p in first for c in (p.message.tool_calls or [])]
    assert (call.function.name, dict(call.function.arguments)) == ("read_file", {"path": "a.txt"})
    assert first[-1].done and first[-1].done_reason == "stop"
    assert "".join(p.message.content for p in second) == TOOL_THEN_END[1]["content"]
    assert (second[-1].done_reason, second[-1].prompt_eval_count, second[-1].eval_count) == ("stop", 30, 12)
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]
    assert [(r.path, r.stream, r.wire) for r in records] == [("/api/chat", stream, "ollama")] * 2


def test_a_request_without_stream_false_is_answered_as_an_ndjson_stream() -> None:
    with serving(make_sequence(TOOL_THEN_END, "ollama")) as srv:
        import httpx
        answer = httpx.post(srv.base_url.removesuffix("/v1") + "/api/chat",
                            json={"model": "m", "messages": GO, "tools": CHAT_TOOLS})
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert [line["done"] for line in lines] == [False, True]
    assert lines[-1]["done_reason"] == "stop"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_ollama_client_raises_the_error_ollama_sends_with_its_status(stream: bool) -> None:
    turns = [{"finish": "error", "error": {"kind": "rate_limit", "status": 429, "message": "slow down"}}]
    with serving(make_sequence(turns, "ollama")) as srv, pytest.raises(ollama.ResponseError) as caught:
        got = _client(srv).chat(model="m", messages=GO, stream=stream)
        list(got) if stream else None
    assert (caught.value.error, caught.value.status_code) == ("slow down", 429)


def test_an_error_after_the_output_is_an_error_line_the_client_raises() -> None:
    turns = [{"finish": "error", "content": "partial answer",
              "error": {"kind": "stream_error", "message": "runner crashed"}}]
    got: list[Any] = []
    with serving(make_sequence(turns, "ollama")) as srv, pytest.raises(ollama.ResponseError) as caught:
        got.extend(_client(srv).chat(model="m", messages=GO, stream=True))
    assert caught.value.error == "runner crashed"
    assert "".join(p.message.content for p in got) == "partial answer"


def test_a_malformed_request_gets_ollamas_400_in_its_shape() -> None:
    import httpx
    with serving(make_sequence(TOOL_THEN_END, "ollama")) as srv:
        url = srv.base_url.removesuffix("/v1") + "/api/chat"
        for body in (b"{not json", b'{"model": "m", "messages": 5}', b"[1]"):
            answer = httpx.post(url, content=body)
            assert answer.status_code == 400
            assert list(answer.json()) == ["error"] and isinstance(answer.json()["error"], str)


# ------------------------------------------------------------ reading requests


def test_a_request_is_read_back_with_results_named_by_position_and_its_limit() -> None:
    body = {"options": {"num_predict": 64}, "tools": CHAT_TOOLS, "messages": [
        {"role": "system", "content": "be brief"}, *GO,
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "read_file", "arguments": {"p": 1}}},
            {"function": {"name": "grep", "arguments": {"q": "x"}}}]},
        {"role": "tool", "content": "found", "tool_name": "grep"},
        {"role": "tool", "content": "text", "tool_name": "read_file"}]}
    conv = WIRE.conversation(body)
    assert conv.system == "be brief"
    assert [(i.kind, i.text, i.call_id, i.calls) for i in conv.items] == [
        ("user", "go", "", ()), ("assistant", "", "", ("#0", "#1")), ("tool", "found", "#1", ()),
        ("tool", "text", "#0", ())]
    assert conv.items[1].call_args == ('{"p": 1}', '{"q": "x"}')
    assert WIRE.max_tokens(body) == 64
    assert WIRE.streams({}) and not WIRE.streams({"stream": False})
    assert WIRE.offers_tools(body)


# ------------------------------------------------------------ importing captures


ROUND_TRIP = [
    Turn("stop", "stop", content="let me look", tool_calls=(ToolCall("t9", "grep", '{"q":"x"}'),), usage=Usage(5, 6)),
    Turn("length", "length", content="cut here", reasoning="thinking first", usage=Usage(9, 2)),
    Turn("unknown", "load", usage=Usage(0, 0)),
]


@pytest.mark.parametrize("turn", ROUND_TRIP, ids=[t.finish_raw or "" for t in ROUND_TRIP])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_served_answer_imports_back_as_the_same_turn(tmp_path: Path, turn: Turn, stream: bool) -> None:
    ctx = Context("r", "m", turn.finish_raw)
    path = tmp_path / "ollama.json"
    if stream:
        path.write_bytes(b"".join(WIRE.render_stream(turn, ctx)))
    else:
        path.write_text(json.dumps(WIRE.render_json(turn, ctx)))
    result = import_capture(path)
    (back,) = result.turns
    assert back.dialect == "ollama" and not result.unknown
    assert back.turn == turn


def test_an_error_line_imports_as_a_stream_error_and_a_done_without_reason_says_so() -> None:
    asm = WIRE.assembler(Counter())
    for obj in ({"model": "m", "message": {"role": "assistant", "content": "par"}, "done": False},
                {"error": "runner crashed"}):
        asm.feed(obj)
    turn = asm.finish().turn
    assert (turn.finish, turn.content, turn.error) == ("error", "par", TurnError("stream_error", "runner crashed"))
    asm = WIRE.assembler(Counter())
    asm.feed({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True})
    assert asm.finish().turn.finish_detail == "done: true without a done_reason"


def test_an_error_body_imports_with_its_status() -> None:
    back = WIRE.from_response({"error": "model 'x' not found"}, Counter(), 404)
    assert back.turn.error == TurnError("not_found", "model 'x' not found", 404)


# ------------------------------------------------------------ the reference loop's client


def test_the_reference_client_runs_the_sequence_to_its_end() -> None:
    import httpx
    with serving(make_sequence(TOOL_THEN_END, "ollama")) as srv:
        conv = WIRE.open_conversation(httpx.Client(base_url=srv.base_url.removesuffix("/v1")), "m", "go",
                                      [{"name": "read_file", "parameters": {"type": "object"}}])
        first = conv.ask()
        conv.add_reply(first)
        conv.add_results([Result(c, "hello") for c in first.calls])
        second = conv.ask()
        observed = srv.session.observed()
    assert (first.finish_raw, [(c.id, c.name, json.loads(c.arguments)) for c in first.calls]) == (
        "stop", [("call_1", "read_file", {"path": "a.txt"})])
    assert (second.finish, second.content) == ("stop", TOOL_THEN_END[1]["content"])
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]


def test_the_finish_table_cites_ollamas_source_for_every_done_reason() -> None:
    assert sorted(WIRE.table) == ["length", "load", "stop", "unload"]
    for entry in WIRE.table.values():
        assert "ollama/ollama v0.33.0-rc2 @ fb307609" in entry.cite


def test_a_503_fault_is_ollamas_queue_full_error_the_client_raises() -> None:
    from bench.faults import parse_recipe_text

    recipe = parse_recipe_text("faults:\n  - {fault: status, status: 503, requests: [1]}\n", "busy.yaml")
    with serving(make_sequence(TOOL_THEN_END, "ollama"), faults=recipe) as srv, \
            pytest.raises(ollama.ResponseError) as caught:
        _client(srv).chat(model="m", messages=GO, tools=CHAT_TOOLS, stream=False)
    assert caught.value.status_code == 503
    assert caught.value.error == "server busy, please try again.  maximum pending requests exceeded"


def test_a_refusal_is_served_as_the_messages_content() -> None:
    refusal = Turn("stop", "stop", refusal="I can't help with that.")
    assert WIRE.render_json(refusal, Context("r", "m", "stop"))["message"]["content"] == "I can't help with that."
    lines = [json.loads(x) for x in b"".join(WIRE.render_stream(refusal, Context("r", "m", "stop"))).splitlines()]
    assert "".join(x["message"]["content"] for x in lines) == "I can't help with that."
