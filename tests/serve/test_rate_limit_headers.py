"""A served 429 carries the provider's error body and no retry hint: the sequence model's error has
no field for one and the server invents none (docs/serve.md, Errors)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, make_sequence, serving

RATE_LIMITED: dict[str, Any] = {"finish": "error", "error": {"kind": "rate_limit", "status": 429,
                                                             "code": "rate_limit_error", "message": "slow down"}}
USER = [{"role": "user", "content": "hi"}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "messages": USER, "tools": CHAT_TOOLS}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 9, "messages": USER, "tools": CLAUDE_TOOLS}),
    "openai-responses": ("/v1/responses", {"model": "m", "input": USER, "tools": RESPONSES_TOOLS}),
}


@pytest.mark.parametrize("wire", list(REQUESTS))
def test_a_served_429_has_no_retry_hint_header(wire: str) -> None:
    path, body = REQUESTS[wire]
    with serving(make_sequence([RATE_LIMITED], wire)) as srv:
        got = httpx.post(srv.url + path, json=body, timeout=10)
    assert got.status_code == 429
    hints = [h for h in got.headers if h.lower() in ("retry-after", "retry-after-ms") or "ratelimit" in h.lower()]
    assert hints == []
