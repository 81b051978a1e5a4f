"""Hostile requests on the Ollama (``/api/chat``) and Cohere v2 (``/v2/chat``) routes: each is that
provider's own 400 in its shape (Ollama ``{"error": "..."}``, Cohere ``{"message": "..."}``), takes no
turn, and leaves the server answering the next good request."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.serve.serving import CHAT_TOOLS, make_sequence, serving

CALL: dict[str, Any] = {"finish": "stop", "content": None, "tool_calls": [
    {"id": "call_1", "name": "read_file", "arguments": '{"path": "a"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}
GO = [{"role": "user", "content": "go"}]
ROUTES = {"ollama": ("/api/chat", {"model": "m", "messages": GO, "stream": False, "tools": CHAT_TOOLS}),
          "cohere": ("/v2/chat", {"model": "m", "messages": GO, "tools": CHAT_TOOLS})}
HOSTILE: dict[str, bytes] = {
    "not JSON": b"{not json",
    "NaN": b'{"model": "m", "messages": [], "temperature": NaN}',
    "not an object": b"[1, 2]",
    "nested 100000 deep": ("[" * 100_000 + "]" * 100_000).encode(),
    "not UTF-8": b'{"model": "m", "messages": "\xff\xfe"}',
    "messages missing": b'{"model": "m"}',
    "messages a number": b'{"model": "m", "messages": 5}',
    "tool calls a number": b'{"model": "m", "messages": [{"role": "assistant", "tool_calls": 5}]}',
}


def provider_400(wire: str, got: httpx.Response) -> bool:
    """The provider's own 400: Ollama's body is ``{"error": str}``, Cohere's ``{"message": str}``."""
    key = {"ollama": "error", "cohere": "message"}[wire]
    body = got.json()
    return got.status_code == 400 and list(body) == [key] and isinstance(body[key], str) and bool(body[key])


@pytest.mark.parametrize("wire", list(ROUTES))
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_body_is_the_providers_400_and_the_next_request_is_served(wire: str, name: str) -> None:
    path, valid = ROUTES[wire]
    with serving(make_sequence([ANSWER], wire)) as srv:
        root = srv.base_url.removesuffix("/v1")
        bad = httpx.post(root + path, content=HOSTILE[name], timeout=30, headers={"content-type": "application/json"})
        good = httpx.post(root + path, json=valid, timeout=10)
        state = httpx.get(srv.url + "/_stopbench/state", timeout=10).json()
    assert provider_400(wire, bad), bad.text[:300]
    assert good.status_code == 200 and state["answered"] == 1


@pytest.mark.parametrize("wire", list(ROUTES))
def test_odd_but_valid_parts_of_a_conversation_are_read_not_refused(wire: str) -> None:
    """Arguments as a string, a tool result without a name or id, content as a list, unknown roles:
    served (observed), never a 500."""
    path, valid = ROUTES[wire]
    history = [*GO, {"role": "assistant", "content": [{"type": "text", "text": "x"}],
                     "tool_calls": [{"id": 7, "function": {"name": None, "arguments": "{not json"}}, "junk"]},
               {"role": "tool", "content": {"weird": True}}, {"role": "wizard", "content": None}]
    with serving(make_sequence([CALL, ANSWER], wire)) as srv:
        root = srv.base_url.removesuffix("/v1")
        first = httpx.post(root + path, json=valid, timeout=10)
        second = httpx.post(root + path, json={**valid, "messages": history}, timeout=10)
        steps = srv.session.observed()
    assert first.status_code == 200 and second.status_code == 200, second.text[:300]
    assert len(steps) == 2


@pytest.mark.parametrize("wire", list(ROUTES))
def test_a_huge_tool_call_arguments_string_streams_back_whole(wire: str) -> None:
    big = json.dumps({"text": "x" * 200_000})
    turns = [{"finish": "stop" if wire == "ollama" else "tool_calls", "content": None,
              "tool_calls": [{"id": "c1", "name": "write", "arguments": big}]}]
    path, valid = ROUTES[wire]
    with serving(make_sequence(turns, wire)) as srv:
        got = httpx.post(srv.base_url.removesuffix("/v1") + path, json={**valid, "stream": True}, timeout=30)
    assert got.status_code == 200
    assert got.text.count("x") >= 200_000
