"""The reference loop's Cohere client: a streamed ``POST /v2/chat`` over an ``httpx.Client`` (a base
dependency; the ``cohere`` package is not needed), its server-sent events read one by one.

`client` is an ``httpx.Client`` whose ``base_url`` is the API's root (``https://api.cohere.com``, or
the replay server's root) and whose headers carry ``Authorization: Bearer <key>``. The body is the
v2 chat request (cohere-ai/cohere-python 7.0.9 @ bc495daa, src/cohere/v2/raw_client.py L59-221:
``model``, ``messages``, ``tools`` as functions, ``max_tokens``, ``stream: true``). A reply is echoed
as an assistant message with its ``tool_plan`` and ``tool_calls`` (arguments the raw string), each
result as a ``tool`` message naming the call's id.

Errors: an HTTP error status carries ``{"message": "..."}``; an error after the output is a
``message-end`` whose ``delta.error`` says it (src/cohere/types/chat_message_end_event_delta.py
L13-16). A stream that ends before ``message-end`` was cut; an event that does not parse is a
broken frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.capture import read_events
from bench.wires.client import Call, Reply, ReplyError, Result, cut_error, reply_error
from bench.wires.httpstream import FunctionChat, body_message, status_error, stream_post

PATH = "/v2/chat"
DEFAULT_URL = "https://api.cohere.com"
"""The API's root (cohere-python 7.0.9 @ bc495daa src/cohere/environment.py L7, ClientEnvironment.PRODUCTION)."""


def official_client(env: Mapping[str, str]) -> httpx.Client:
    """The client the reference loop talks through: an ``httpx.Client`` on ``CO_API_URL`` (the official
    client's variable), else the API's root, with ``CO_API_KEY`` as the bearer token."""
    key = env.get("CO_API_KEY") or ""
    return httpx.Client(base_url=env.get("CO_API_URL") or DEFAULT_URL, timeout=30.0,
                        headers={"Authorization": f"Bearer {key}"} if key else None)


class Chat(FunctionChat):
    """Cohere v2 chat over an ``httpx.Client``, streamed (stateless: the whole conversation every time)."""

    api: Dialect = "cohere"

    def limit(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens}

    def ask(self) -> Reply:
        got = _Got()
        err = stream_post(self.client, PATH, self.body(), got.read, _status_error)
        if err is None and got.end is None:
            err = cut_error("message-end")
        made = tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(got.calls.items()))
        text = "".join(got.text) if got.text else None
        plan = "".join(got.plan) if got.plan else None
        if err is not None or got.end is None:
            return Reply(None, "error", text, made, error=err, raw=(plan, made))
        raw = got.end.get("finish_reason") if isinstance(got.end.get("finish_reason"), str) else None
        tokens = (got.end.get("usage") or {}).get("tokens") or {}
        used = tokens.get("output_tokens") if isinstance(tokens, dict) else None
        return Reply(raw, dialects.canonical("cohere", raw), text if text is not None else plan, made,
                     raw=(text if text is not None else plan, made),
                     at_limit=isinstance(used, int | float) and used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        text, made = reply.raw
        msg: dict[str, Any] = {"role": "assistant"}
        if made:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in made]
            if text:
                msg["tool_plan"] = text
        else:
            msg["content"] = text or ""
        self.messages.append(msg)

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            self.messages.append({"role": "tool", "tool_call_id": r.call.id,
                                  "content": [{"type": "text", "text": r.text}]})
        if message:
            self.messages.append({"role": "user", "content": message})


class _Got:
    """What a stream has said so far."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.plan: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.end: dict[str, Any] | None = None

    def read(self, response: httpx.Response) -> ReplyError | None:
        """The stream's events up to ``message-end`` (or a ``[DONE]``); the error that ends it, if one does."""
        for ev in read_events(response.iter_lines()):
            if ev.data.strip() == "[DONE]":  # what some Cohere streams end with (the SDK stops there)
                break
            obj = json.loads(ev.data)
            if not isinstance(obj, dict):
                raise ValueError(f"an event that is not an object: {ev.data[:60]!r}")
            err = self.feed(obj)
            if err is not None or self.end is not None:
                return err
        return None

    def feed(self, obj: dict[str, Any]) -> ReplyError | None:
        """One event; the error it carries, if any."""
        kind = obj.get("type")
        delta: dict[str, Any] = d if isinstance(d := obj.get("delta"), dict) else {}
        msg: dict[str, Any] = m if isinstance(m := delta.get("message"), dict) else {}
        if kind in ("content-start", "content-delta"):
            piece = (msg.get("content") or {}).get("text")
            if isinstance(piece, str):
                self.text.append(piece)
        elif kind == "tool-plan-delta" and isinstance(msg.get("tool_plan"), str):
            self.plan.append(msg["tool_plan"])
        elif kind in ("tool-call-start", "tool-call-delta"):
            tc = msg.get("tool_calls") or {}
            fn = tc.get("function") or {}
            slot = self.calls.setdefault(int(obj.get("index") or 0), {"id": "", "name": "", "arguments": ""})
            slot["id"] = slot["id"] or str(tc.get("id") or "")
            slot["name"] = slot["name"] or str(fn.get("name") or "")
            slot["arguments"] += str(fn.get("arguments") or "")
        elif kind == "message-end":
            if isinstance(delta.get("error"), str):
                return reply_error(None, "", delta["error"], in_stream=True)
            self.end = delta
        return None


def _status_error(response: httpx.Response) -> ReplyError:
    """An HTTP error answer: the status and Cohere's ``message`` (a ``Retry-After`` honoured if sent)."""
    return status_error(response, body_message(response, "message"))
