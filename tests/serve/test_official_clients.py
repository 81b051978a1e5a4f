"""The official openai and anthropic clients, JSON and streaming, assemble exactly the served turns."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from bench.engine.model import Sequence, Turn
from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, make_sequence, serving

USER = [{"role": "user", "content": "read main.py"}]
LONG = "This answer is long enough to arrive in several deltas of the stream, not in one."

TOOL_TURN: dict[str, Any] = {
    "finish": "tool_calls", "content": "let me look",
    "tool_calls": [{"id": "call_a", "name": "read_file", "arguments": '{"path": "main.py"}'},
                   {"id": "call_b", "name": "grep", "arguments": '{"pattern": "def ma'}],  # cut-off JSON
    "usage": {"input_tokens": 11, "output_tokens": 7},
}
ANSWER_TURN: dict[str, Any] = {"finish": "stop", "content": LONG}


def chat_seq() -> Sequence:
    return make_sequence([TOOL_TURN, ANSWER_TURN], "openai-chat")


def oai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0, timeout=10)


def claude(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0, timeout=10)


def calls_of(turn: Turn) -> list[tuple[str, str, str]]:
    return [(c.id, c.name, c.arguments) for c in turn.tool_calls]


# ---------------------------------------------------------------- OpenAI Chat Completions


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_client_assembles_the_served_turns(stream: bool) -> None:
    seq = chat_seq()
    with serving(seq) as srv:
        client = oai(srv.base_url)
        got = []
        for _ in seq.turns:
            if stream:
                with client.chat.completions.stream(model="m", messages=USER, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                    stream_options={"include_usage": True}) as s:
                    got.append(s.get_final_completion())
            else:
                got.append(client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS))  # type: ignore[arg-type]
    for completion, turn in zip(got, seq.turns, strict=True):
        choice = completion.choices[0]
        assert choice.finish_reason == turn.finish_raw
        assert choice.message.content == turn.content
        calls = [(c.id, c.function.name, c.function.arguments)  # type: ignore[union-attr]
                 for c in choice.message.tool_calls or []]
        assert calls == calls_of(turn)
    assert got[0].usage is not None and got[0].usage.prompt_tokens == 11
    assert got[0].usage.completion_tokens == 7


def test_chat_stream_sends_the_finish_reason_in_its_own_chunk_with_an_empty_delta() -> None:
    seq = chat_seq()
    with serving(seq) as srv:
        chunks = list(oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                                stream=True))
    with_finish = [c for c in chunks if c.choices and c.choices[0].finish_reason is not None]
    assert len(with_finish) == 1
    delta = with_finish[0].choices[0].delta
    assert delta.content is None and delta.tool_calls is None and delta.role is None
    assert len(chunks) > 4  # text and arguments came in pieces


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_turn_without_a_finish_reason_is_served_with_none(stream: bool) -> None:
    seq = make_sequence([{"finish": "unknown", "finish_raw": None, "content": "no finish"}], "openai-chat")
    with serving(seq) as srv:
        client = oai(srv.base_url)
        if stream:
            chunks = list(client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS, stream=True))  # type: ignore[arg-type]
            assert all(c.choices[0].finish_reason is None for c in chunks if c.choices)
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "no finish"
        else:
            done = client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS)  # type: ignore[arg-type]
            assert done.choices[0].finish_reason is None
            assert done.choices[0].message.content == "no finish"


def test_non_standard_finish_string_is_sent_verbatim() -> None:
    seq = make_sequence([{"finish": "unknown", "finish_raw": "tool_call", "content": None,
                          "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}]}], "openai-chat")
    with serving(seq) as srv:
        raw = oai(srv.base_url).chat.completions.with_raw_response.create(model="m", messages=USER, tools=CHAT_TOOLS)  # type: ignore[arg-type]
    assert json.loads(raw.text)["choices"][0]["finish_reason"] == "tool_call"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_error_turn_with_a_status_is_that_http_status_and_body(stream: bool) -> None:
    seq = make_sequence([{"finish": "error", "error": {"kind": "rate_limit", "code": "rate_limit_error",
                                                       "message": "slow down", "status": 429}}], "openai-chat")
    with serving(seq) as srv, pytest.raises(openai.RateLimitError) as info:
        oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS, stream=stream)  # type: ignore[call-overload]
    assert info.value.status_code == 429
    assert "slow down" in str(info.value)


def test_error_turn_without_a_status_breaks_the_chat_stream_after_its_content() -> None:
    seq = make_sequence([{"finish": "error", "content": "partial answ",
                          "error": {"kind": "server_error", "message": "stream cut"}}], "openai-chat")
    seen: list[str] = []
    with serving(seq) as srv, pytest.raises(openai.APIError, match="stream cut"):
        for chunk in oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                               stream=True):
            seen.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(seen) == "partial answ"


def test_a_stream_cut_ends_the_chat_stream_cleanly_with_no_finish_and_no_error_event() -> None:
    seq = make_sequence([{"finish": "error", "content": "partial answ",
                          "error": {"kind": "stream_cut", "message": "never sent"}}], "openai-chat")
    seen: list[str] = []
    finishes: list[str | None] = []
    with serving(seq) as srv:
        for chunk in oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                               stream=True):
            seen.extend(c.delta.content or "" for c in chunk.choices)
            finishes.extend(c.finish_reason for c in chunk.choices)
    assert "".join(seen) == "partial answ"
    assert set(finishes) == {None}


# ---------------------------------------------------------------- Anthropic Messages


def anthropic_seq() -> Sequence:
    tool = {**TOOL_TURN, "finish": "tool_calls", "tool_calls": TOOL_TURN["tool_calls"][:1]}
    return make_sequence([tool, ANSWER_TURN], "anthropic")


def _claude_calls(message: Any) -> list[tuple[str, str, str]]:
    return [(b.id, b.name, json.dumps(b.input)) for b in message.content if b.type == "tool_use"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_anthropic_client_assembles_the_served_turns(stream: bool) -> None:
    seq = anthropic_seq()
    with serving(seq) as srv:
        client = claude(srv.url)
        got = []
        for _ in seq.turns:
            if stream:
                with client.messages.stream(model="m", max_tokens=100, messages=USER, tools=CLAUDE_TOOLS) as s:  # type: ignore[arg-type]
                    got.append(s.get_final_message())
            else:
                got.append(client.messages.create(model="m", max_tokens=100, messages=USER, tools=CLAUDE_TOOLS))  # type: ignore[arg-type]
    for message, turn in zip(got, seq.turns, strict=True):
        assert message.stop_reason == turn.finish_raw
        text = [b.text for b in message.content if b.type == "text"]
        assert text == ([turn.content] if turn.content is not None else [])
        assert _claude_calls(message) == calls_of(turn)  # valid JSON: json.dumps gives the same text here
    assert got[0].usage.input_tokens == 11 and got[0].usage.output_tokens == 7


def test_anthropic_stream_sends_invalid_arguments_as_raw_partial_json() -> None:
    seq = make_sequence([{"finish": "length", "content": None,
                          "tool_calls": [{"id": "toolu_1", "name": "grep", "arguments": '{"pattern": "def ma'}]}],
                        "anthropic")
    partial: list[str] = []
    stop = None
    with serving(seq) as srv:
        for ev in claude(srv.url).messages.create(model="m", max_tokens=5, messages=USER, tools=CLAUDE_TOOLS,  # type: ignore[arg-type]
                                                  stream=True):
            if ev.type == "content_block_delta" and ev.delta.type == "input_json_delta":
                partial.append(ev.delta.partial_json)
            if ev.type == "message_delta":
                stop = ev.delta.stop_reason
    assert "".join(partial) == '{"pattern": "def ma'
    assert stop == "max_tokens"


def test_anthropic_json_sends_invalid_arguments_as_an_empty_input_object() -> None:
    seq = make_sequence([{"finish": "length", "content": None,
                          "tool_calls": [{"id": "toolu_1", "name": "grep", "arguments": '{"pattern": "def ma'}]}],
                        "anthropic")
    with serving(seq) as srv:
        message = claude(srv.url).messages.create(model="m", max_tokens=5, messages=USER, tools=CLAUDE_TOOLS)  # type: ignore[arg-type]
    assert [(b.type, b.input) for b in message.content if b.type == "tool_use"] == [("tool_use", {})]


def test_anthropic_in_stream_error_raises_in_the_client() -> None:
    seq = make_sequence([{"finish": "error", "content": "partial",
                          "error": {"kind": "overloaded", "code": "overloaded_error", "message": "Overloaded"}}],
                        "anthropic")
    with (serving(seq) as srv, pytest.raises(anthropic.APIStatusError, match="Overloaded"),
          claude(srv.url).messages.stream(model="m", max_tokens=5, messages=USER, tools=CLAUDE_TOOLS) as s):  # type: ignore[arg-type]
        s.get_final_message()


def test_anthropic_turn_without_stop_reason_is_served_with_null() -> None:
    seq = make_sequence([{"finish": "unknown", "finish_raw": None, "content": "hm"}], "anthropic")
    with serving(seq) as srv:
        client = claude(srv.url)
        with client.messages.stream(model="m", max_tokens=5, messages=USER, tools=CLAUDE_TOOLS) as s:  # type: ignore[arg-type]
            streamed = s.get_final_message()
    assert streamed.stop_reason is None
    assert [b.text for b in streamed.content if b.type == "text"] == ["hm"]


def test_a_chat_sequence_served_on_anthropic_gets_anthropics_finish_string() -> None:
    with serving(chat_seq()) as srv:
        message = claude(srv.url).messages.create(model="m", max_tokens=5, messages=USER, tools=CLAUDE_TOOLS)  # type: ignore[arg-type]
    assert message.stop_reason == "tool_use"  # canonical tool_calls in anthropic's table


# ---------------------------------------------------------------- OpenAI Responses


def responses_seq() -> Sequence:
    return make_sequence([{**TOOL_TURN, "finish": "stop", "finish_raw": "completed", "reasoning": "think"},
                          {"finish": "length", "finish_raw": "incomplete/max_output_tokens", "content": "cut"},
                          {**ANSWER_TURN, "finish": "stop", "finish_raw": "completed", "end_turn": True}],
                         "openai-responses")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_client_assembles_the_served_turns(stream: bool) -> None:
    seq = responses_seq()
    with serving(seq) as srv:
        client = oai(srv.base_url)
        got = []
        for _ in seq.turns:
            if stream:
                # the SDK's stream helper only keeps response.completed; the real API ends an
                # incomplete response with response.incomplete, so take whichever terminal event came
                terminal = [ev.response for ev in client.responses.create(model="m", input="read main.py",
                                                                         tools=RESPONSES_TOOLS, stream=True)
                            if ev.type in ("response.completed", "response.incomplete", "response.failed")]
                assert len(terminal) == 1
                got.append(terminal[0])
            else:
                got.append(client.responses.create(model="m", input="read main.py", tools=RESPONSES_TOOLS))
    for response, turn in zip(got, seq.turns, strict=True):
        status, _, reason = (turn.finish_raw or "").partition("/")
        assert response.status == status
        assert (response.incomplete_details.reason if response.incomplete_details else "") == reason
        texts = [c.text for item in response.output if item.type == "message" for c in item.content
                 if c.type == "output_text"]
        assert texts == ([turn.content] if turn.content is not None else [])
        calls = [(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
        assert calls == calls_of(turn)
    reasoning = [i for i in got[0].output if i.type == "reasoning"]
    assert [s.text for s in reasoning[0].summary] == ["think"]


def test_responses_stream_without_finish_has_no_terminal_event() -> None:
    seq = make_sequence([{"finish": "unknown", "finish_raw": None, "content": "x"}], "openai-responses")
    with serving(seq) as srv:
        kinds = [ev.type for ev in oai(srv.base_url).responses.create(model="m", input="hi", stream=True)]
    assert kinds[0] == "response.created"
    assert not {"response.completed", "response.incomplete", "response.failed"} & set(kinds)


def test_responses_end_turn_flag_is_on_the_completed_response() -> None:
    seq = make_sequence([{"finish": "stop", "finish_raw": "completed", "content": "more", "end_turn": False}],
                        "openai-responses")
    with serving(seq) as srv:
        raw = oai(srv.base_url).responses.with_raw_response.create(model="m", input="hi", tools=RESPONSES_TOOLS)
    assert json.loads(raw.text)["end_turn"] is False


def test_a_stream_error_with_a_status_is_sent_inside_a_200_stream_with_the_status_as_code() -> None:
    seq = make_sequence([{"finish": "error", "finish_raw": None, "content": "", "reasoning": "We need",
                          "error": {"kind": "stream_error", "message": "Token limit reached", "status": 400}}],
                        "openai-chat")
    with serving(seq) as srv, pytest.raises(openai.APIError) as info:
        for _ in oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS, stream=True):  # type: ignore[arg-type]
            pass
    assert not isinstance(info.value, openai.APIStatusError)  # raised while reading the stream, not at request
    assert info.value.body == {"message": "Token limit reached", "type": "stream_error", "param": None, "code": 400}


def test_a_connection_error_turn_cuts_the_stream_off_mid_body() -> None:
    seq = make_sequence([{"finish": "error", "content": "partial",
                          "error": {"kind": "connection_reset", "message": "peer closed connection"}}],
                        "openai-chat")
    seen: list[str] = []
    # openai 3.x wraps the transport's "incomplete chunked read" in APIConnectionError while iterating
    with serving(seq) as srv, pytest.raises(openai.APIConnectionError):
        for chunk in oai(srv.base_url).chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                               stream=True):
            seen.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(seen) == "partial"
