"""The Bedrock Converse wire: its event-stream framing decoded by botocore's own parser, the official
client (boto3 ``bedrock-runtime``) against the replay server, errors as Bedrock sends them, requests
read back, and captures imported back to the turn that was served."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.config import Config  # noqa: E402
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer  # noqa: E402
from botocore.exceptions import EventStreamError  # noqa: E402
from botocore.loaders import Loader  # noqa: E402

from bench.engine.model import ToolCall, Turn, TurnError, Usage  # noqa: E402
from bench.importers import import_capture  # noqa: E402
from bench.serve import BackgroundServer  # noqa: E402
from bench.wires.base import Context  # noqa: E402
from bench.wires.bedrock_converse import WIRE, eventstream  # noqa: E402
from tests.serve.serving import make_sequence, serving  # noqa: E402

TOOLS: dict[str, Any] = {"tools": [{"toolSpec": {"name": "read_file", "description": "read a file",
                                                 "inputSchema": {"json": {"type": "object"}}}}]}
GO: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "go"}]}]
CALL = {"id": "tu_1", "name": "read_file", "arguments": '{"path": "a.txt"}'}
TOOL_THEN_END: list[dict[str, Any]] = [
    {"finish": "tool_calls", "finish_raw": "tool_use", "content": "reading", "tool_calls": [CALL],
     "usage": {"input_tokens": 11, "output_tokens": 7}},
    {"finish": "stop", "finish_raw": "end_turn", "content": "the file says hello, " * 3,
     "usage": {"input_tokens": 30, "output_tokens": 12}},
]


def _client(srv: BackgroundServer) -> Any:
    return boto3.client("bedrock-runtime", endpoint_url=srv.base_url.removesuffix("/v1"), region_name="us-east-1",
                        aws_access_key_id="stopbench", aws_secret_access_key="stopbench",
                        config=Config(retries={"total_max_attempts": 1}))


def _decode(frames: list[bytes]) -> list[Any]:
    buf = EventStreamBuffer()
    buf.add_data(b"".join(frames))
    return list(buf)


# ------------------------------------------------------------ framing


def test_every_frame_decodes_with_botocore_and_carries_its_three_headers() -> None:
    turn = Turn("tool_calls", "tool_use", content="héllo " * 9, tool_calls=(ToolCall("t", "read_file", '{"a": 1}'),),
                usage=Usage(3, 4))
    frames = WIRE.render_stream(turn, Context("r", "m", "tool_use"))
    messages = _decode(frames)
    assert len(messages) == len(frames)
    kinds = [m.headers[":event-type"] for m in messages]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert {"contentBlockStart", "contentBlockDelta", "contentBlockStop"} <= set(kinds)
    for m in messages:
        assert m.headers[":message-type"] == "event" and m.headers[":content-type"] == "application/json"
    assert json.loads(messages[-2].payload) == {"stopReason": "tool_use"}
    assert json.loads(messages[-1].payload)["usage"] == {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}


def test_the_prelude_and_message_checksums_are_the_crc32_botocore_checks() -> None:
    frame = eventstream.event("messageStart", {"role": "assistant"})
    assert int.from_bytes(frame[:4], "big") == len(frame)
    for at in (9, len(frame) - 1):  # a byte of the prelude's CRC, a byte of the message's CRC
        broken = bytearray(frame)
        broken[at] ^= 0xFF
        buf = EventStreamBuffer()
        buf.add_data(bytes(broken))
        with pytest.raises(ChecksumMismatch):
            list(buf)


def test_an_in_stream_error_is_an_exception_message_after_the_output() -> None:
    turn = Turn("error", content="part", error=TurnError("stream_error", "slow down", status=429))
    messages = _decode(WIRE.render_stream(turn, Context("r", "m", None)))
    last = messages[-1]
    assert last.headers[":message-type"] == "exception"
    assert last.headers[":exception-type"] == "throttlingException"
    assert json.loads(last.payload) == {"message": "slow down"}
    assert "messageStop" not in [m.headers.get(":event-type") for m in messages]


# ------------------------------------------------------------ the finish table


def test_the_finish_table_has_every_stop_reason_of_botocores_service_model_and_no_other() -> None:
    model = Loader().load_service_model("bedrock-runtime", "service-2")
    assert sorted(WIRE.table) == sorted(model["shapes"]["StopReason"]["enum"])
    for raw, entry in WIRE.table.items():
        assert "service-2.json" in entry.cite and f"'{raw}'" in entry.cite


# ------------------------------------------------------------ the official client


def test_boto3_converse_and_converse_stream_run_a_sequence_through_tool_use_to_the_end() -> None:
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse")) as srv:
        client = _client(srv)
        first = client.converse(modelId="us.anthropic.claude-sonnet-4:0", messages=GO, toolConfig=TOOLS,
                                inferenceConfig={"maxTokens": 500})
        assert first["stopReason"] == "tool_use"
        assert first["output"]["message"]["content"] == [
            {"text": "reading"}, {"toolUse": {"toolUseId": "tu_1", "name": "read_file", "input": {"path": "a.txt"}}}]
        assert first["usage"] == {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
        history = [*GO, first["output"]["message"],
                   {"role": "user", "content": [{"toolResult": {"toolUseId": "tu_1", "content": [{"text": "hello"}]}}]}]
        events = list(client.converse_stream(modelId="m", messages=history, toolConfig=TOOLS)["stream"])
        observed = srv.session.observed()
        records = srv.session.records()
    text = "".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e)
    assert text == TOOL_THEN_END[1]["content"]
    assert [e for e in events if "messageStop" in e] == [{"messageStop": {"stopReason": "end_turn"}}]
    assert events[-1]["metadata"]["usage"] == {"inputTokens": 30, "outputTokens": 12, "totalTokens": 42}
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]
    assert [(r.path, r.stream, r.wire) for r in records] == [
        ("/model/us.anthropic.claude-sonnet-4:0/converse", False, "bedrock-converse"),
        ("/model/m/converse-stream", True, "bedrock-converse")]


def test_boto3_streams_a_tool_use_as_its_raw_arguments() -> None:
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse")) as srv:
        events = list(_client(srv).converse_stream(modelId="m", messages=GO, toolConfig=TOOLS)["stream"])
    starts = [e["contentBlockStart"]["start"] for e in events if "contentBlockStart" in e]
    assert starts == [{"toolUse": {"toolUseId": "tu_1", "name": "read_file"}}]
    pieces = [e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events
              if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})]
    assert "".join(pieces) == CALL["arguments"]


@pytest.mark.parametrize(("error", "name", "status"), [
    ({"kind": "rate_limit", "status": 429}, "ThrottlingException", 429),
    ({"kind": "invalid_request", "status": 400}, "ValidationException", 400),
    ({"kind": "timeout", "status": 408}, "ModelTimeoutException", 408),
    ({"kind": "overloaded", "status": 503}, "ServiceUnavailableException", 503),
    ({"kind": "server_error", "status": 500}, "InternalServerException", 500),
])
@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse_stream"])
def test_boto3_raises_the_exception_bedrock_sends_for_each_error(error: dict[str, Any], name: str, status: int,
                                                                 stream: bool) -> None:
    turns = [{"finish": "error", "error": {**error, "message": "no"}}]
    with serving(make_sequence(turns, "bedrock-converse")) as srv:
        client = _client(srv)
        call = client.converse_stream if stream else client.converse
        with pytest.raises(client.exceptions.ClientError) as caught:
            call(modelId="m", messages=GO)
    assert caught.value.response["Error"] == {"Code": name, "Message": "no"}
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert caught.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-errortype"] == name


def test_boto3_raises_an_in_stream_exception_after_the_output() -> None:
    turns = [{"finish": "error", "content": "partial answer", "error": {"kind": "stream_error", "status": 503,
                                                                          "message": "gone"}}]
    got: list[Any] = []
    with serving(make_sequence(turns, "bedrock-converse")) as srv:
        client = _client(srv)
        with pytest.raises(EventStreamError) as caught:  # what botocore raises for an exception message
            got.extend(client.converse_stream(modelId="m", messages=GO)["stream"])
    assert caught.value.response["Error"] == {"Code": "serviceUnavailableException", "Message": "gone"}
    assert "".join(e["contentBlockDelta"]["delta"]["text"] for e in got if "contentBlockDelta" in e) == "partial answer"


def test_a_request_without_tool_config_is_served_the_turn_without_its_calls() -> None:
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse")) as srv:
        answer = _client(srv).converse(modelId="m", messages=GO)
    assert answer["stopReason"] == "end_turn"
    assert answer["output"]["message"]["content"] == [{"text": "reading"}]


# ------------------------------------------------------------ reading requests


def test_a_request_is_read_back_with_its_tool_results_limit_and_tool_choice() -> None:
    body = {"system": [{"text": "be brief"}], "inferenceConfig": {"maxTokens": 64},
            "toolConfig": {**TOOLS, "toolChoice": {"tool": {"name": "read_file"}}},
            "messages": [*GO, {"role": "assistant", "content": [{"text": "x"}, {"toolUse": {
                "toolUseId": "t1", "name": "read_file", "input": {"p": 1}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "error",
                                                             "content": [{"json": {"ok": False}}]}}]}]}
    conv = WIRE.conversation(body)
    assert conv.system == "be brief"
    assert [(i.kind, i.text, i.call_id, i.calls, i.is_error) for i in conv.items] == [
        ("user", "go", "", (), None), ("assistant", "x", "", ("t1",), None),
        ("tool", '{"ok": false}', "t1", (), True)]
    assert conv.items[1].call_args == ('{"p": 1}',)
    assert WIRE.max_tokens(body) == 64
    assert WIRE.tool_choice(body) == "read_file"
    assert WIRE.tool_choice({"toolConfig": {"toolChoice": {"any": {}}}}) == "required"
    assert WIRE.tool_choice({}) == "auto"
    assert WIRE.offers_tools(body) and not WIRE.offers_tools({"tools": []})


# ------------------------------------------------------------ importing captures


ROUND_TRIP = [
    Turn("tool_calls", "tool_use", content="let me look", tool_calls=(ToolCall("t9", "grep", '{"q":"x"}'),),
         usage=Usage(5, 6)),
    Turn("length", "model_context_window_exceeded", content="cut here", usage=Usage(9, 2)),
    Turn("content_filter", "guardrail_intervened", content="blocked", reasoning="thinking first", usage=Usage(1, 1)),
]


@pytest.mark.parametrize("turn", ROUND_TRIP, ids=[t.finish_raw or "" for t in ROUND_TRIP])
def test_a_served_converse_response_imports_back_as_the_same_turn(tmp_path: Path, turn: Turn) -> None:
    body = WIRE.render_json(turn, Context("r", "m", turn.finish_raw))
    path = tmp_path / "converse.json"
    path.write_text(json.dumps({"ResponseMetadata": {"HTTPStatusCode": 200}, **body}))
    (back,) = import_capture(path).turns
    assert back.dialect == "bedrock-converse"
    assert back.turn == turn


@pytest.fixture
def recorded_stream() -> Iterator[list[dict[str, Any]]]:
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse")) as srv:
        yield list(_client(srv).converse_stream(modelId="m", messages=GO, toolConfig=TOOLS)["stream"])


def test_a_converse_stream_recorded_by_boto3_imports_back_as_the_served_turn(
        tmp_path: Path, recorded_stream: list[dict[str, Any]]) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in recorded_stream))
    result = import_capture(path)
    (back,) = result.turns
    assert back.dialect == "bedrock-converse" and not result.unknown
    assert back.turn == Turn("tool_calls", "tool_use", content="reading",
                             tool_calls=(ToolCall("tu_1", "read_file", CALL["arguments"]),), usage=Usage(11, 7))


def test_an_in_stream_exception_imports_as_a_stream_error() -> None:
    asm = WIRE.assembler(Counter())
    for event in ({"messageStart": {"role": "assistant"}},
                  {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "par"}}},
                  {"throttlingException": {"message": "slow"}}):
        asm.feed(event)
    turn = asm.finish().turn
    assert (turn.finish, turn.content, turn.error) == (
        "error", "par", TurnError("stream_error", "slow", None, "throttlingException"))


def test_a_converse_call_recorded_by_botocore_in_a_cassette_imports_as_its_turn() -> None:
    data = Path(__file__).resolve().parents[1] / "importers" / "data"
    result = import_capture(data / "pydantic-ai" / "test_bedrock_model_max_tokens.yaml")
    (back,) = result.turns
    assert not result.skipped and not result.unknown
    assert back.dialect == "bedrock-converse"
    assert back.turn == Turn("length", "max_tokens", content="The capital of France is", usage=Usage(13, 5))
    assert back.max_tokens == 5  # the request's inferenceConfig.maxTokens


def test_the_servers_own_refusals_name_their_exception_too() -> None:
    """Past the end of a ``then: end`` sequence, and a request on another wire's endpoint than the
    one the server was told to serve: boto3 sees an exception by name, not a bare status."""
    with serving(make_sequence(TOOL_THEN_END[1:], "bedrock-converse")) as srv:
        client = _client(srv)
        client.converse(modelId="m", messages=GO)
        with pytest.raises(client.exceptions.ClientError) as past_end:
            client.converse(modelId="m", messages=GO)
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse"), dialect="anthropic") as srv:
        client = _client(srv)
        with pytest.raises(client.exceptions.ResourceNotFoundException):
            client.converse(modelId="m", messages=GO)
    assert past_end.value.response["Error"]["Code"] == "ValidationException"


def test_boto3_count_tokens_is_answered_on_the_side_without_consuming_a_turn() -> None:
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse")) as srv:
        client = _client(srv)
        counted = client.count_tokens(modelId="us.anthropic.claude-sonnet-4:0", input={"converse": {"messages": GO}})
        first = client.converse(modelId="m", messages=GO, toolConfig=TOOLS)
        records = srv.session.records()
    assert type(counted["inputTokens"]) is int and counted["inputTokens"] >= 1
    assert first["stopReason"] == "tool_use"  # the count took no turn
    assert (records[0].kind, records[0].path) == ("side", "/model/us.anthropic.claude-sonnet-4:0/count-tokens")


def test_a_token_count_the_server_refuses_names_its_exception_for_boto3() -> None:
    """A count-tokens body past the server's limit is refused as Bedrock refuses: the exception is
    named in the x-amzn-ErrorType header, so botocore raises it by name, not a bare ClientError."""
    with serving(make_sequence(TOOL_THEN_END, "bedrock-converse"), max_body=64) as srv:
        client = _client(srv)
        with pytest.raises(client.exceptions.ClientError) as refused:
            client.count_tokens(modelId="m", input={"converse": {"messages": [
                {"role": "user", "content": [{"text": "x" * 200}]}]}})
    assert refused.value.response["Error"]["Code"] == "ValidationException"
