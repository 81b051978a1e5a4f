"""A turn's answer is rendered once per run and reused, with each request's own response id put in;
requests that should get different answers (another model name, usage asked in the stream, another
token limit on a cut turn, JSON instead of a stream) still get them, each byte for byte what a fresh
rendering gives."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bench.catalogue.load import parse_sequence
from bench.serve.render import Context, render
from bench.wires import registry
from tests.serve.serving import CHAT_TOOLS, serving

SEQ = parse_sequence({"title": "one answer forever", "kind": "constructed", "dialect": "openai-chat",
                      "source": "tests/serve", "then": "repeat", "max_tokens": 40,
                      "turns": [{"finish": "length", "content": "a long answer " * 20,
                                 "usage": {"input_tokens": 7, "output_tokens": 40}}]}, "rendered-once")
MESSAGES = [{"role": "user", "content": "go"}]


def ask(url: str, **extra: Any) -> tuple[str, bytes]:
    body = {"model": "m", "messages": MESSAGES, "tools": CHAT_TOOLS, "stream": True, **extra}
    got = httpx.post(url + "/v1/chat/completions", json=body, timeout=10)
    assert got.status_code == 200, got.text
    return got.headers["content-type"], got.content


def fresh(rid: str, model: str, stream: bool = True, include_usage: bool = False, limit: int | None = None) -> bytes:
    """The answer rendered anew, as the server rendered every request before it kept renderings."""
    served = registry.wire("openai-chat")
    turn = SEQ.turns[0]
    if limit is not None:
        from bench.serve.render import at_request_limit
        turn = at_request_limit(turn, SEQ.max_tokens, "openai-chat", {"max_tokens": limit})
    out = render("openai-chat", turn, Context(rid, model, served.finish_for(SEQ.dialect, turn),
                                              include_usage=include_usage), stream)
    if out.body is not None:
        import json
        return json.dumps(out.body, ensure_ascii=False, separators=(",", ":")).encode()
    return b"".join(out.frames)


def test_repeated_requests_render_once_and_differing_requests_still_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    wire = type(registry.wire("openai-chat"))
    calls = []
    original = wire.render

    def counted(self: Any, *args: Any) -> Any:
        calls.append(args)
        return original(self, *args)

    monkeypatch.setattr(wire, "render", counted)
    with serving(SEQ) as srv:
        got = [ask(srv.url)[1] for _ in range(3)]
        assert len(calls) == 1  # the second and third request reuse the first rendering
        other_model = ask(srv.url, model="other")[1]
        with_usage = ask(srv.url, stream_options={"include_usage": True})[1]
        limited = ask(srv.url, max_tokens=9, stream_options={"include_usage": True})[1]
        kind, as_json = ask(srv.url, stream=False)
        again = ask(srv.url)[1]
    assert len(calls) == 5
    assert got == [fresh(f"chatcmpl-stopbench-1-{n}", "m") for n in (1, 2, 3)]
    assert len(set(got)) == 3  # each with its own id
    assert other_model == fresh("chatcmpl-stopbench-1-4", "other")
    assert with_usage == fresh("chatcmpl-stopbench-1-5", "m", include_usage=True)
    assert limited == fresh("chatcmpl-stopbench-1-6", "m", include_usage=True, limit=9)
    assert b'"completion_tokens":9' in limited and b'"completion_tokens":40' in with_usage
    assert kind == "application/json" and as_json == fresh("chatcmpl-stopbench-1-7", "m", stream=False)
    assert again == fresh("chatcmpl-stopbench-1-8", "m")


def test_a_new_run_renders_its_own_sequence() -> None:
    other = parse_sequence({"title": "another answer", "kind": "constructed", "dialect": "openai-chat",
                            "source": "tests/serve", "then": "repeat",
                            "turns": [{"finish": "stop", "content": "something else"}]}, "rendered-twice")
    with serving(SEQ) as srv:
        first = ask(srv.url)[1]
        srv.session.start(other)
        second = ask(srv.url)[1]
    assert b"a long answer" in first and b"something else" in second and b"a long answer" not in second
