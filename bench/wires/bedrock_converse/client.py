"""The reference loop's Bedrock Converse client: ConverseStream over plain HTTP (``httpx``, a base
dependency; boto3 is not needed), its events read with the wire's event-stream decoder (:mod:`.eventstream`).

`client` is an ``httpx.Client`` whose ``base_url`` is the bedrock-runtime endpoint
(``https://bedrock-runtime.<region>.amazonaws.com``, or the replay server's root) and whose headers
carry the credentials: a Bedrock API key as ``Authorization: Bearer <AWS_BEARER_TOKEN_BEDROCK>``
(SigV4 signing is boto3's, and out of scope here). Requests are
``POST /model/{modelId}/converse-stream`` with the Converse request body (botocore 1.44.8
``service-2.json``, ``ConverseStreamRequest``).

Errors: an HTTP error status names its exception in ``x-amzn-ErrorType`` (body ``{"message"}``); an
exception inside the stream is a ``:message-type: exception`` message. Bedrock documents no retry
hint, so the loop backs off on its own (a ``Retry-After`` sent anyway is honoured). A stream that
ends before ``metadata`` (its last event, after ``messageStop``, carrying the usage; a turn without
a stop reason has no ``messageStop``) was cut; a message whose payload does not parse is a broken
frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.base import tool_input
from bench.wires.bedrock_converse.eventstream import decode
from bench.wires.client import MAX_TOKENS, Call, Reply, ReplyError, Result, cut_error, reply_error
from bench.wires.httpstream import status_error, stream_post


def official_client(env: Mapping[str, str]) -> httpx.Client:
    """The client the reference loop talks through: an ``httpx.Client`` on ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``
    (boto3's variable), else ``AWS_ENDPOINT_URL``, else the replay server's root (``ANTHROPIC_BASE_URL``,
    which serves every wire); an ``AWS_BEARER_TOKEN_BEDROCK`` goes out as the bearer token."""
    endpoint = (env.get("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") or env.get("AWS_ENDPOINT_URL")
                or env.get("ANTHROPIC_BASE_URL") or "")
    token = env.get("AWS_BEARER_TOKEN_BEDROCK")
    return httpx.Client(base_url=endpoint, timeout=30.0,
                        headers={"Authorization": f"Bearer {token}"} if token else None)


class Converse:
    """Bedrock ConverseStream over an ``httpx.Client`` (stateless: the whole conversation every time)."""

    api: Dialect = "bedrock-converse"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        self.client: httpx.Client = client
        self.path = f"/model/{quote(model, safe='')}/converse-stream"
        self.system = system
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": prompt}]}]
        self.tools = [{"toolSpec": {"name": t["name"], "description": t.get("description", "") or t["name"],
                                    "inputSchema": {"json": t["parameters"]}}} for t in tools]
        self.max_tokens = MAX_TOKENS

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": self.messages, "inferenceConfig": {"maxTokens": self.max_tokens}}
        if self.tools:
            body["toolConfig"] = {"tools": self.tools}
        if self.system:
            body["system"] = [{"text": self.system}]
        return body

    def ask(self) -> Reply:
        got = _Stream()
        err = stream_post(self.client, self.path, self._body(), got.read, _status_error)
        if err is None and not got.ended:
            err = cut_error("metadata")
        ordered = [b for _, b in sorted(got.blocks.items())]
        texts = [b["text"] for b in ordered if b["type"] == "text"]
        made = tuple(Call(b["id"], b["name"], b["json"]) for b in ordered if b["type"] == "toolUse")
        text = "".join(texts) if texts else None
        if err is not None:
            return Reply(None, "error", text, made, error=err, raw=ordered)
        return Reply(got.stop, dialects.canonical("bedrock-converse", got.stop), text, made, raw=ordered,
                     at_limit=got.used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        content: list[dict[str, Any]] = []
        for b in reply.raw:
            if b["type"] == "text":
                content.append({"text": b["text"]})
            elif b["type"] == "reasoning":
                content.append({"reasoningContent": {"reasoningText": {"text": b["text"]}}})
            else:
                content.append({"toolUse": {"toolUseId": b["id"], "name": b["name"], "input": tool_input(b["json"])}})
        if content:  # an empty reply has nothing to echo
            self.messages.append({"role": "assistant", "content": content})

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        content: list[dict[str, Any]] = [
            {"toolResult": {"toolUseId": r.call.id, "content": [{"text": r.text}],
                            "status": "error" if r.is_error else "success"}} for r in results]
        if message:
            content.append({"text": message})
        if content:
            self.messages.append({"role": "user", "content": content})


class _Stream:
    """What an event stream has said so far: its content blocks by index, its stop reason, its output
    tokens, whether its closing ``metadata`` event came."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stop: str | None = None
        self.used = 0
        self.ended = False

    def read(self, response: httpx.Response) -> ReplyError | None:
        """The stream's messages, decoded as their bytes come; the exception message that ends it, if one does."""
        left = b""
        for chunk in response.iter_bytes():
            messages, left = decode(left + chunk)
            for m in messages:
                if m.headers.get(":message-type") == "exception":
                    return _stream_exception(m.headers.get(":exception-type", ""), m.payload)
                event = m.as_event()
                if event is None:
                    raise ValueError(f"an event whose payload is not a JSON object: {m.payload[:60]!r}")
                ((kind, data),) = event.items()
                self._event(kind, data)
        return None

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "contentBlockStart":
            use = (data.get("start") or {}).get("toolUse") or {}
            self.blocks[data.get("contentBlockIndex", 0)] = {
                "type": "toolUse", "id": use.get("toolUseId", ""), "name": use.get("name", ""), "json": ""}
        elif kind == "contentBlockDelta":
            _delta(self.blocks, data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif kind == "messageStop":
            self.stop = data.get("stopReason")
        elif kind == "metadata":
            self.ended = True
            self.used = int((data.get("usage") or {}).get("outputTokens") or 0)


def _delta(blocks: dict[int, dict[str, Any]], index: int, delta: dict[str, Any]) -> None:
    """One ``contentBlockDelta``: text, a tool use's input piece (kept verbatim), or reasoning."""
    if "text" in delta:
        slot = blocks.setdefault(index, {"type": "text", "text": ""})
        slot["text"] = slot.get("text", "") + str(delta["text"])
    elif "toolUse" in delta:
        slot = blocks.setdefault(index, {"type": "toolUse", "id": "", "name": "", "json": ""})
        slot["json"] += str((delta["toolUse"] or {}).get("input") or "")
    elif "reasoningContent" in delta:
        slot = blocks.setdefault(index, {"type": "reasoning", "text": ""})
        slot["text"] += str((delta["reasoningContent"] or {}).get("text") or "")


def _message(payload: bytes) -> str:
    try:
        body = json.loads(payload or b"{}")
    except ValueError:
        return payload[:200].decode("utf-8", "replace")
    return str(body.get("message") or body.get("Message") or "") if isinstance(body, dict) else ""


def _status_error(response: httpx.Response) -> ReplyError:
    """An HTTP error answer: the status, the exception named in ``x-amzn-ErrorType`` (its part before
    a ``:``), and a ``Retry-After`` if one was sent."""
    return status_error(response, _message(response.content),
                        response.headers.get("x-amzn-errortype", "").split(":")[0])


def _stream_exception(kind: str, payload: bytes) -> ReplyError:
    """An exception message inside the stream (``throttlingException`` and the like)."""
    return reply_error(None, kind, _message(payload), in_stream=True)

