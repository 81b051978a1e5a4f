"""The reference loop's Ollama client: a streamed ``POST /api/chat`` over an ``httpx.Client`` (a base
dependency; the ``ollama`` package is not needed), its NDJSON lines read one by one.

`client` is an ``httpx.Client`` whose ``base_url`` is the Ollama host (``http://localhost:11434``,
or the replay server's root). The body is the chat request of ollama/ollama v0.33.0-rc2 @ fb307609
(api/types.go L133-180 ``ChatRequest``): ``messages``, ``tools`` as functions, ``stream: true``,
the output limit as ``options.num_predict`` (docs/api.md L390). A tool call is echoed with its id
when it had one and answered by ``tool_name`` and ``tool_call_id`` (api/types.go L205-206).

Errors: an HTTP error status carries ``{"error": "..."}``; an error after the output is a line of
its own of that shape (server/routes.go L2109-2124). A stream that ends before its ``done: true``
object was cut; a line that does not parse is a broken frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.base import tool_input
from bench.wires.client import Call, Reply, ReplyError, Result, cut_error, reply_error
from bench.wires.httpstream import FunctionChat, body_message, status_error, stream_post

PATH = "/api/chat"
DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where the official client looks without OLLAMA_HOST (ollama-python v0.6.2 @ 25b93290, ollama/_client.py
L1343-1380 ``_parse_host``)."""


def official_client(env: Mapping[str, str]) -> httpx.Client:
    """The client the reference loop talks through: an ``httpx.Client`` on ``OLLAMA_HOST`` (the official
    client's variable, a bare ``host:port`` taken as http), else Ollama's default host."""
    host = env.get("OLLAMA_HOST") or DEFAULT_HOST
    return httpx.Client(base_url=host if "://" in host else f"http://{host}", timeout=30.0)


class Chat(FunctionChat):
    """Ollama ``/api/chat`` over an ``httpx.Client``, streamed (stateless: the whole conversation every time)."""

    api: Dialect = "ollama"

    def limit(self) -> dict[str, Any]:
        return {"options": {"num_predict": self.max_tokens}}

    def ask(self) -> Reply:
        got = _Stream()
        err = stream_post(self.client, PATH, self.body(), got.read, _status_error)
        last = got.last
        if err is None and last is None:
            err = cut_error("done: true")
        content = "".join(got.text) if got.text else None
        calls = tuple(got.calls)
        if err is not None or last is None:
            return Reply(None, "error", content, calls, error=err, raw=(content, calls))
        raw = last.get("done_reason") if isinstance(last.get("done_reason"), str) else None
        used = last.get("eval_count")
        return Reply(raw, dialects.canonical("ollama", raw), content, calls, raw=(content, calls),
                     at_limit=isinstance(used, int) and used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        content, made = reply.raw
        msg: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if made:
            msg["tool_calls"] = [{**({"id": c.id} if c.id else {}),
                                  "function": {"index": n, "name": c.name, "arguments": tool_input(c.arguments)}}
                                 for n, c in enumerate(made)]
        self.messages.append(msg)

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            msg: dict[str, Any] = {"role": "tool", "content": r.text, "tool_name": r.call.name}
            if r.call.id:
                msg["tool_call_id"] = r.call.id
            self.messages.append(msg)
        if message:
            self.messages.append({"role": "user", "content": message})


class _Stream:
    """What an NDJSON stream has said so far: its text pieces, its (whole) tool calls, its ``done: true`` object."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[Call] = []
        self.last: dict[str, Any] | None = None

    def read(self, response: httpx.Response) -> ReplyError | None:
        """The stream's lines, one object each; the error line that ends it, if one does."""
        for got in response.iter_lines():
            if not got.strip():
                continue
            obj = json.loads(got)
            if not isinstance(obj, dict):
                raise ValueError(f"a line that is not an object: {got[:60]!r}")
            if isinstance(obj.get("error"), str):
                return reply_error(None, "", obj["error"], in_stream=True)
            _message(obj.get("message"), self.text, self.calls)
            if obj.get("done") is True:
                self.last = obj
        return None


def _message(value: Any, text: list[str], calls: list[Call]) -> None:
    """One streamed object's message: its text piece and its (whole) tool calls."""
    msg = value if isinstance(value, dict) else {}
    if isinstance(msg.get("content"), str) and msg["content"]:
        text.append(msg["content"])
    for c in msg.get("tool_calls") or []:
        fn = (c.get("function") if isinstance(c, dict) else None) or {}
        args = fn.get("arguments")
        calls.append(Call(str(c.get("id") or ""), str(fn.get("name") or ""),
                          args if isinstance(args, str) else json.dumps(args if args is not None else {})))


def _status_error(response: httpx.Response) -> ReplyError:
    """An HTTP error answer: the status and Ollama's ``error`` message (a ``Retry-After`` honoured if sent)."""
    return status_error(response, body_message(response, "error"))
