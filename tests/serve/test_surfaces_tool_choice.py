"""A request's tool choice as each provider honours it, through each official client: under ``none``
no call is served (the turn's text, or a short one), the step marked as bent and the live cell saying
so; a forced call the scripted turn does not make is served as written and marked as not honoured."""

from __future__ import annotations

from typing import Any

import anthropic
import boto3
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from bench.check.report import cell_text
from bench.engine.judge import served_turn
from bench.serve import observed_cell
from bench.wires.withhold import BENT_NONE, NONE_TEXT, unmet
from tests.serve.serving import make_sequence, serving
from tests.serve.surfaces import NAMES, PROMPT, ROUNDS, SCHEMA

USER: list[Any] = [{"role": "user", "content": PROMPT}]
CHAT_TOOLS: list[Any] = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in NAMES]
CLAUDE_TOOLS: list[Any] = [{"name": n, "input_schema": SCHEMA} for n in NAMES]


def chat_none(url: str, stream: bool) -> tuple[str | None, Any, str | None]:
    client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=10)
    if stream:
        with client.chat.completions.stream(model="m", messages=USER, tools=CHAT_TOOLS, tool_choice="none") as s:
            done = s.get_final_completion()
    else:
        done = client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS, tool_choice="none")
    message = done.choices[0].message
    return message.content, message.tool_calls or [], done.choices[0].finish_reason


def responses_none(url: str, stream: bool) -> tuple[str | None, Any, str | None]:
    client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=10)
    tools: list[Any] = [{"type": "function", "name": n, "parameters": SCHEMA} for n in NAMES]
    if stream:
        with client.responses.stream(model="m", input=PROMPT, tools=tools, tool_choice="none") as s:
            done = s.get_final_response()
    else:
        done = client.responses.create(model="m", input=PROMPT, tools=tools, tool_choice="none")
    return done.output_text, [o for o in done.output if o.type == "function_call"], done.status


def claude_none(url: str, stream: bool) -> tuple[str | None, Any, str | None]:
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=10)
    ask: dict[str, Any] = {"model": "m", "max_tokens": 99, "messages": USER, "tools": CLAUDE_TOOLS,
                           "tool_choice": {"type": "none"}}
    if stream:
        with client.messages.stream(**ask) as s:
            done = s.get_final_message()
    else:
        done = client.messages.create(**ask)
    text = "".join(b.text for b in done.content if b.type == "text")
    return text, [b for b in done.content if b.type == "tool_use"], done.stop_reason


def gemini_none(url: str, stream: bool) -> tuple[str | None, Any, str | None]:
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=url, timeout=10_000))
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name=n, description=n) for n in NAMES])],
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="NONE")))
    if stream:
        chunks = list(client.models.generate_content_stream(model="m", contents=PROMPT, config=config))
    else:
        chunks = [client.models.generate_content(model="m", contents=PROMPT, config=config)]
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]  # type: ignore[index,union-attr]
    finish = chunks[-1].candidates[0].finish_reason  # type: ignore[index]
    return ("".join(p.text or "" for p in parts), [p for p in parts if p.function_call is not None],
            str(finish.value) if finish is not None else None)


ASK_NONE = {"openai-chat": (chat_none, "stop"), "openai-responses": (responses_none, "completed"),
            "anthropic": (claude_none, "end_turn"), "gemini": (gemini_none, "STOP")}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("wire", list(ASK_NONE))
def test_tool_choice_none_gets_no_call_through_the_official_client(wire: str, stream: bool) -> None:
    ask, normal_end = ASK_NONE[wire]
    with serving(ROUNDS) as srv:
        text, calls, finish = ask(srv.url, stream)
        notes = [r.note for r in srv.session.records() if r.kind == "model"]
    assert (text, calls, finish) == (NONE_TEXT, [], normal_end)
    assert notes == [BENT_NONE]


def test_tool_choice_none_serves_the_turns_own_text_when_it_has_one() -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": "let me look",
                          "tool_calls": [{"id": "call_a", "name": "read_file", "arguments": "{}"}]}])
    with serving(seq) as srv:
        assert chat_none(srv.url, False) == ("let me look", [], "stop")


def test_a_bent_step_is_judged_on_what_was_served_and_the_cell_says_so() -> None:
    with serving(ROUNDS) as srv:
        chat_none(srv.url, False)
        steps = srv.session.observed()
    cell = observed_cell(ROUNDS, "mine", steps, True, "answered")
    served = served_turn(ROUNDS, cell.steps[0])
    assert (served.tool_calls, served.content, served.finish) == ((), NONE_TEXT, "stop")
    assert "step 1: script bent by tool_choice none" in cell_text(cell, ROUNDS)
    assert steps[0].as_json()["note"] == BENT_NONE


def test_a_forced_call_the_turn_does_not_make_is_served_as_written_and_marked() -> None:
    answer = make_sequence([{"finish": "stop", "content": "done"}], "anthropic", then="repeat")
    client_of = lambda url: anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=10)  # noqa: E731
    with serving(answer) as srv:
        client = client_of(srv.url)
        forced = [client.messages.create(model="m", max_tokens=9, messages=USER, tools=CLAUDE_TOOLS,
                                         tool_choice=choice)  # type: ignore[arg-type]
                  for choice in ({"type": "any"}, {"type": "tool", "name": "read_file"}, {"type": "auto"})]
        notes = [r.note for r in srv.session.records() if r.kind == "model"]
    assert [[b.type for b in m.content] for m in forced] == [["text"]] * 3
    assert notes == [unmet("required"), unmet("read_file"), ""]


def test_a_forced_call_the_turn_makes_is_no_note() -> None:
    with serving(ROUNDS) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=10)
        for choice in ("required", {"type": "function", "function": {"name": "edit_file"}}):
            client.chat.completions.create(model="m", messages=USER, tools=CHAT_TOOLS, tool_choice=choice)  # type: ignore[arg-type]
        notes = [r.note for r in srv.session.records() if r.kind == "model"]
    assert notes == ["", ""]


def test_bedrock_converse_has_no_none_and_its_any_is_marked_on_a_text_turn() -> None:
    answer = make_sequence([{"finish": "stop", "content": "done"}], "bedrock-converse")
    with serving(answer) as srv:
        client = boto3.client("bedrock-runtime", endpoint_url=srv.url, region_name="us-east-1",
                              aws_access_key_id="stopbench", aws_secret_access_key="stopbench")
        spec = {"toolSpec": {"name": "read_file", "inputSchema": {"json": SCHEMA}}}
        got = client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": PROMPT}]}],
                              toolConfig={"tools": [spec], "toolChoice": {"any": {}}})
        notes = [r.note for r in srv.session.records() if r.kind == "model"]
    assert got["output"]["message"]["content"] == [{"text": "done"}]
    assert notes == [unmet("required")]


def test_gemini_mode_none_is_read_in_the_snake_case_spelling_too() -> None:
    body: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
                            "tools": [{"functionDeclarations": [{"name": "read_file"}]}],
                            "tool_config": {"function_calling_config": {"mode": "NONE"}}}
    with serving(ROUNDS) as srv:
        got = httpx.post(srv.url + "/v1beta/models/m:generateContent", json=body, timeout=10).json()
        notes = [r.note for r in srv.session.records() if r.kind == "model"]
    assert [p for p in got["candidates"][0]["content"]["parts"] if "functionCall" in p] == []
    assert notes == [BENT_NONE]
