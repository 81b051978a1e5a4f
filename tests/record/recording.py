"""Shared helpers: a recording proxy in a background thread, the official clients per wire, and
sequences whose answer carries a secret split across the stream's deltas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bench.catalogue.load import load_sequence, parse_sequence
from bench.catalogue.yaml_read import read_yaml
from bench.engine.model import Sequence
from bench.faults import Recipe
from bench.record import Recorder, redactor, response_bytes
from bench.record.proxy import create_proxy
from bench.record.recording import BOUNDS, Bounds
from bench.serve import BackgroundServer, Session
from bench.serve.server import BackgroundUvicorn

SECRET = "sk-ant-api03-" + "Zq7" * 14  # 55 characters: across three 24-character deltas of the server's stream
ANSWER = f"Here is the key you want: {SECRET} (keep it safe)."
"""The final answer: the secret starts at character 26, so the server's deltas cut it twice."""
WIRES = ("openai-chat", "anthropic", "openai-responses", "gemini", "bedrock-converse")
RAW_FINISH = {"openai-chat": ("tool_calls", "stop"), "anthropic": ("tool_use", "end_turn"),
              "openai-responses": ("completed", "completed"), "gemini": ("STOP", "STOP"),
              "bedrock-converse": ("tool_use", "end_turn")}
"""wire -> the raw finish of the call turn and of the answer (Gemini and Responses have no tool-call finish)."""
CALL = {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.txt"}'}


def conversation_sequence(dialect: str, sid: str = "upstream") -> Sequence:
    """A tool call, then the answer with the secret."""
    first, last = RAW_FINISH[dialect]
    call: dict[str, Any] = {"finish": "stop" if first in ("STOP", "completed") else "tool_calls",
                            "content": "reading it", "tool_calls": [CALL],
                            "usage": {"input_tokens": 11, "output_tokens": 7}}
    answer: dict[str, Any] = {"finish": "stop", "content": ANSWER, "usage": {"input_tokens": 30, "output_tokens": 12}}
    call["finish_raw"] = first
    answer["finish_raw"] = last
    return parse_sequence({"title": "upstream", "kind": "constructed", "dialect": dialect, "source": "tests/record",
                           "then": "end", "turns": [call, answer]}, sid)


@contextmanager
def recording_proxy(upstream: str, out: Path, name: str = "rec", patterns: tuple[str, ...] = (),
                    faults: Recipe | None = None, client: httpx.AsyncClient | None = None,
                    bounds: Bounds = BOUNDS) -> Iterator[tuple[BackgroundUvicorn, Recorder]]:
    recorder = Recorder(upstream, out, name, redactor(patterns), bounds)
    config = uvicorn.Config(create_proxy(recorder, client, faults), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off", access_log=False)
    try:
        with BackgroundUvicorn(config, "recording proxy", "stopbench-record") as proxy:
            yield proxy, recorder
    finally:
        recorder.close()


# ---------------------------------------------------------------- one conversation per wire, official clients

TOOLS_CHAT: list[Any] = [{"type": "function", "function": {"name": "read_file", "description": "read a file",
                                                           "parameters": {"type": "object", "properties": {}}}}]


def _chat(url: str, stream: bool) -> None:
    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-proj-" + "k" * 40, max_retries=0, timeout=10)
    messages: list[Any] = [{"role": "user", "content": "read a.txt"}]
    for _ in range(2):
        if stream:
            with client.chat.completions.stream(model="gpt-test", messages=messages, tools=TOOLS_CHAT,
                                                stream_options={"include_usage": True}) as s:
                msg = s.get_final_completion().choices[0].message
        else:
            done = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS_CHAT)
            msg = done.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        for call in msg.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "hello"})


def _anthropic(url: str, stream: bool) -> None:
    import anthropic

    client = anthropic.Anthropic(base_url=url, api_key="sk-ant-api03-" + "k" * 40, max_retries=0, timeout=10)
    tools: list[Any] = [{"name": "read_file", "description": "read a file", "input_schema": {"type": "object"}}]
    messages: list[Any] = [{"role": "user", "content": "read a.txt"}]
    for _ in range(2):
        if stream:
            with client.messages.stream(model="claude-test", max_tokens=100, messages=messages, tools=tools) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
        results = [{"type": "tool_result", "tool_use_id": b.id, "content": "hello"}
                   for b in msg.content if b.type == "tool_use"]
        if results:
            messages.append({"role": "user", "content": results})


def _responses(url: str, stream: bool) -> None:
    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-proj-" + "k" * 40, max_retries=0, timeout=10)
    tools: list[Any] = [{"type": "function", "name": "read_file", "description": "read a file",
                         "parameters": {"type": "object", "properties": {}}}]
    items: list[Any] = [{"role": "user", "content": "read a.txt"}]
    for _ in range(2):
        if stream:
            with client.responses.stream(model="gpt-test", input=items, tools=tools, store=False) as s:
                resp = s.get_final_response()
        else:
            resp = client.responses.create(model="gpt-test", input=items, tools=tools, store=False)
        for item in resp.output:
            items.append(item.model_dump(exclude_none=True))
            if item.type == "function_call":
                items.append({"type": "function_call_output", "call_id": item.call_id, "output": "hello"})


def _gemini(url: str, stream: bool) -> None:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="AIza" + "k" * 35, http_options=types.HttpOptions(base_url=url, timeout=10_000))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
        name="read_file", description="read a file")])])
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="read a.txt")])]
    for _ in range(2):
        if stream:
            chunks = list(client.models.generate_content_stream(model="gemini-test", contents=contents, config=config))
        else:
            chunks = [client.models.generate_content(model="gemini-test", contents=contents, config=config)]
        parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])  # type: ignore[index, union-attr]
                 ] if chunks else []
        contents.append(types.Content(role="model", parts=parts))
        calls = [p.function_call for p in parts if p.function_call is not None]
        if calls:
            contents.append(types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                id=c.id, name=c.name, response={"output": "hello"})) for c in calls]))


def _bedrock(url: str, stream: bool) -> None:
    import boto3
    from botocore.config import Config

    client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id="AKIA" + "K" * 16, aws_secret_access_key="s" * 40,
                          config=Config(retries={"total_max_attempts": 1}))
    tool_config = {"tools": [{"toolSpec": {"name": "read_file", "description": "read a file",
                                           "inputSchema": {"json": {"type": "object"}}}}]}
    messages: list[Any] = [{"role": "user", "content": [{"text": "read a.txt"}]}]
    for _ in range(2):
        if stream:
            out = client.converse_stream(modelId="model-test", messages=messages, toolConfig=tool_config)
            text, calls, current = "", [], None
            for event in out["stream"]:
                if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
                    current = dict(event["contentBlockStart"]["start"]["toolUse"], input="")
                    calls.append(current)
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]["delta"]
                    if "text" in delta:
                        text += delta["text"]
                    elif "toolUse" in delta and current is not None:
                        current["input"] += delta["toolUse"]["input"]
            content: list[Any] = [{"text": text}] if text else []
            content += [{"toolUse": {"toolUseId": c["toolUseId"], "name": c["name"],
                                     "input": json.loads(c["input"] or "{}")}} for c in calls]
        else:
            content = client.converse(modelId="model-test", messages=messages, toolConfig=tool_config)[
                "output"]["message"]["content"]
        messages.append({"role": "assistant", "content": content})
        uses = [b["toolUse"] for b in content if "toolUse" in b]
        if uses:
            results = [{"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": "hello"}]}} for u in uses]
            messages.append({"role": "user", "content": results})


CLIENTS = {"openai-chat": _chat, "anthropic": _anthropic, "openai-responses": _responses, "gemini": _gemini,
           "bedrock-converse": _bedrock}
"""wire -> a two-request conversation (a tool call, then the answer) through the official client at a root URL."""


# ---------------------------------------------------------------- replay


def cassette(path: Path) -> list[dict[str, Any]]:
    data = read_yaml(path, aliases=True)
    interactions: list[dict[str, Any]] = data["interactions"]
    return interactions


def replayed(sequence_file: Path) -> list[tuple[bytes, bytes]]:
    """(recorded response, the replay server's response) for each recorded request, sent again as
    recorded to the bench's server serving the recorded sequence."""
    seq = load_sequence(sequence_file)
    out = []
    with BackgroundServer(Session(seq)) as srv, httpx.Client(timeout=10) as http:
        for inter in cassette(sequence_file.with_suffix(".cassette")):
            req = inter["request"]
            path = req["uri"].split("://", 1)[1].split("/", 1)[1]
            got = http.request(req["method"], f"{srv.url}/{path}", content=req["body"].encode(),
                               headers={"content-type": "application/json"})
            out.append((response_bytes(inter), got.content))
    return out
