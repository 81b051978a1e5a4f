"""Every wire whose real API always sends usage sends it, zeros when the turn recorded none.

smolagents 1.26.0 reads ``response.usage.prompt_tokens`` of a Chat completion unguarded: a body
without ``usage`` crashed it at its first step, a verdict of the bench, not of the framework."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, GEMINI_TOOLS, RESPONSES_TOOLS, make_sequence, serving

NO_USAGE: dict[str, Any] = {"finish": "stop", "content": "done"}
USER = [{"role": "user", "content": "hi"}]


def test_a_chat_completion_without_recorded_usage_reads_as_zero_tokens_in_the_official_client() -> None:
    with serving(make_sequence([NO_USAGE], "openai-chat")) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=10)
        got = client.chat.completions.create(model="gpt-4o", messages=USER, tools=CHAT_TOOLS)  # type: ignore[arg-type]
    assert got.usage is not None
    assert (got.usage.prompt_tokens, got.usage.completion_tokens, got.usage.total_tokens) == (0, 0, 0)


WIRES: dict[str, tuple[str, dict[str, Any], str, dict[str, int]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "messages": USER, "tools": CHAT_TOOLS}, "usage",
                    {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 100, "messages": USER, "tools": CLAUDE_TOOLS},
                  "usage", {"input_tokens": 0, "output_tokens": 0}),
    "openai-responses": ("/v1/responses", {"model": "m", "input": USER, "tools": RESPONSES_TOOLS}, "usage",
                         {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}),
    "gemini": ("/v1beta/models/gemini-2.5-flash:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": GEMINI_TOOLS},
               "usageMetadata", {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0}),
}


@pytest.mark.parametrize("wire", list(WIRES))
def test_every_json_body_carries_usage_zeros_when_the_turn_has_none(wire: str) -> None:
    path, request, field, zeros = WIRES[wire]
    with serving(make_sequence([NO_USAGE], wire)) as srv:
        body = httpx.post(srv.url + path, json=request, timeout=10).json()
    assert field in body, body
    assert {k: body[field][k] for k in zeros} == zeros
