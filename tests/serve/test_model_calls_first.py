"""Model calls taken straight to their handler (:class:`bench.serve.app.ModelCallsFirst`) are answered
byte for byte as Starlette's routing answers them: every catalogue sequence, on every wire the shortcut
takes, JSON and streamed, three requests a sequence (its turns in order, a repeat, the script's end),
in fresh sessions side by side; and the requests the shortcut does not take still reach their routes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.catalogue.load import load_catalogue
from bench.serve import Session
from bench.serve.app import ModelCallsFirst, create_app
from bench.serve.respond import CutConnection
from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, RESPONSES_TOOLS, asgi_request

ROOT = Path(__file__).resolve().parents[2]
USER = {"role": "user", "content": "go"}
BODIES: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "messages": [USER], "tools": CHAT_TOOLS,
                                             "stream_options": {"include_usage": True}}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 512, "messages": [USER], "tools": CLAUDE_TOOLS}),
    "openai-responses": ("/v1/responses", {"model": "m", "input": "go", "tools": RESPONSES_TOOLS}),
}


async def exchange(app: Any, method: str, path: str, body: bytes) -> list[Any]:
    """Every ASGI message the app sends for one request."""
    sent: list[Any] = []
    try:
        await asgi_request(app, path, body, sent, method)
    except CutConnection:  # a plan that breaks the connection (a cut turn): both ways raise it
        sent.append("cut")
    return sent


def test_the_shortcut_takes_the_model_paths_without_parameters_of_every_wire() -> None:
    app = create_app(Session(load_catalogue(ROOT / "sequences").sequences[0]))
    assert {"/v1/chat/completions", "/chat/completions", "/v1/messages", "/messages", "/v1/responses",
            "/responses", "/openai/v1/chat/completions", "/openai/v1/responses", "/openai/responses"} <= set(app.direct)
    assert not {p for p in app.direct if "{" in p or p.endswith("/count_tokens")}


@pytest.mark.parametrize("wire", sorted(BODIES))
def test_every_catalogue_sequence_is_served_the_same_bytes_with_and_without_the_shortcut(wire: str) -> None:
    sequences = load_catalogue(ROOT / "sequences").sequences
    assert len(sequences) > 100
    path, base = BODIES[wire]
    loop = asyncio.new_event_loop()
    compared = 0
    try:
        for seq in sequences:
            for stream in (False, True):
                body = json.dumps({**base, "stream": stream}).encode()
                direct = create_app(Session(seq))
                plain = create_app(Session(seq)).app  # the Starlette app alone: its routes
                for _ in range(3):
                    got = loop.run_until_complete(exchange(direct, "POST", path, body))
                    want = loop.run_until_complete(exchange(plain, "POST", path, body))
                    assert got == want, f"{seq.id} on {wire}, stream={stream}"
                    compared += 1
    finally:
        loop.close()
    assert compared == len(sequences) * 6


def test_requests_the_shortcut_does_not_take_reach_their_routes() -> None:
    seq = load_catalogue(ROOT / "sequences").sequences[0]
    loop = asyncio.new_event_loop()
    try:
        for method, path in [("GET", "/v1/chat/completions"), ("POST", "/v1/messages/count_tokens"),
                             ("GET", "/_stopbench/state"), ("GET", "/v1/models")]:
            app = create_app(Session(seq))
            assert isinstance(app, ModelCallsFirst)
            got = loop.run_until_complete(exchange(app, method, path, b'{"messages": []}'))
            want = loop.run_until_complete(exchange(create_app(Session(seq)).app, method, path,
                                                    b'{"messages": []}'))
            assert got == want, path
            assert got[0]["status"] in (200, 404), (path, got[0])
    finally:
        loop.close()
