"""A served 429 carries the retry hint the provider documents, as a real one does:

- Anthropic: ``retry-after``, seconds (https://docs.anthropic.com/en/api/rate-limits, "Response
  headers": "The number of seconds to wait until you can retry the request"); its SDKs wait that long.
- OpenAI (Chat Completions and Responses): ``x-ratelimit-remaining-requests`` and
  ``x-ratelimit-reset-requests``, a duration (https://platform.openai.com/docs/guides/rate-limits,
  "Rate limits in headers"); OpenAI documents no ``retry-after``, so none is sent.

The sequence model's error has no field for the wait: the bench's is one second (bench/wires). No
other status carries a hint."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, make_sequence, serving

RATE_LIMITED: dict[str, Any] = {"finish": "error", "error": {"kind": "rate_limit", "status": 429,
                                                             "code": "rate_limit_error", "message": "slow down"}}
SERVER_ERROR: dict[str, Any] = {"finish": "error", "error": {"kind": "server_error", "status": 500,
                                                             "code": "server_error", "message": "oops"}}
USER = [{"role": "user", "content": "hi"}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "messages": USER, "tools": CHAT_TOOLS}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 9, "messages": USER, "tools": CLAUDE_TOOLS}),
    "openai-responses": ("/v1/responses", {"model": "m", "input": USER, "tools": RESPONSES_TOOLS}),
}
DOCUMENTED: dict[str, dict[str, str]] = {
    "openai-chat": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"},
    "openai-responses": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"},
    "anthropic": {"retry-after": "1"},
}


def hints(wire: str, turn: dict[str, Any]) -> tuple[int, dict[str, str]]:
    path, body = REQUESTS[wire]
    with serving(make_sequence([turn], wire)) as srv:
        got = httpx.post(srv.url + path, json=body, timeout=10)
    return got.status_code, {h: v for h, v in got.headers.items()
                             if h.lower() in ("retry-after", "retry-after-ms") or "ratelimit" in h.lower()}


@pytest.mark.parametrize("wire", list(REQUESTS))
def test_a_served_429_carries_the_providers_documented_retry_hint(wire: str) -> None:
    assert hints(wire, RATE_LIMITED) == (429, DOCUMENTED[wire])


@pytest.mark.parametrize("wire", list(REQUESTS))
def test_another_error_status_carries_no_retry_hint(wire: str) -> None:
    assert hints(wire, SERVER_ERROR) == (500, {})


def test_the_official_anthropic_client_waits_the_served_retry_after() -> None:
    """anthropic-python reads retry-after (0 < s <= 60) in place of its own back-off."""
    anthropic = pytest.importorskip("anthropic")
    answer = {"finish": "stop", "content": "Done."}
    with serving(make_sequence([RATE_LIMITED, answer], "anthropic")) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="x", max_retries=1)
        waits: list[float] = []
        original = client._calculate_retry_timeout

        def spy(*args: Any, **kwargs: Any) -> float:
            waits.append(original(*args, **kwargs))
            return 0.0

        client._calculate_retry_timeout = spy  # type: ignore[method-assign]
        reply = client.messages.create(model="m", max_tokens=9, messages=USER)  # type: ignore[arg-type]
    assert waits == [1.0]
    assert reply.content[0].text == "Done."  # type: ignore[union-attr]
