"""One model request and its assembled reply, over the official ``openai`` and ``anthropic`` clients.

A loop needs three things from an API: ask (and get the reply assembled from the stream, with tool
call arguments as the raw string the model produced, cut-off JSON included), append the reply to
the conversation, and append tool results and user messages. :class:`Chat` (Chat Completions),
:class:`Messages` (Anthropic Messages) and :class:`Responses` (OpenAI Responses, stateless) do that
with the same methods, so a loop is written once (:mod:`bench.loops.reference`).

Every request streams: only a stream shows what a truncated reply really carried (Anthropic's
``input_json_delta`` is the only place cut-off arguments reach a client). The clients' own retries
are switched off (``max_retries=0``): the loop decides what to resend, and counts it.

Errors are caught, never raised: a reply with ``error`` set is what the loop decides on. Its
``status`` is the HTTP status when the server answered with an error status; an error event inside
a stream, and a connection that broke, have none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

import httpx

from bench.engine.model import ERROR_KINDS, ErrorKind, Finish
from bench.importers._common import error_kind
from bench.wires.dialects import canonical

MAX_TOKENS = 4096
"""The max_tokens every request sends, so that a reply cut at the limit shows as usage reaching it."""

Api: TypeAlias = Literal["openai-chat", "anthropic", "openai-responses"]
APIS: tuple[Api, ...] = ("openai-chat", "anthropic", "openai-responses")


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a reply; `arguments` is the raw string (maybe not JSON)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ReplyError:
    """What went wrong in place of a reply: its kind, the HTTP status (None inside a stream or for a
    broken connection), the provider's error type or code as sent, and its message.

    The kind is all a loop decides on (with the status): it comes from the exception's class for a
    transport failure, else from the status and the provider's code (:func:`reply_error`), never
    from the message, which is kept for people."""

    kind: ErrorKind
    status: int | None
    code: str
    message: str


def reply_error(status: int | None, code: str, message: str, *, in_stream: bool = False) -> ReplyError:
    """An error the provider sent, with its kind: the code when it names a kind itself (the replay
    server sends the kind when the sequence recorded no code), else the provider code table and
    the status (:func:`bench.importers._common.error_kind`, the importers' reading); an error event
    in a stream that names neither is ``stream_error``."""
    kind: ErrorKind = code if code in ERROR_KINDS else error_kind(status, code or None)
    if kind == "http_status" and status is None and in_stream:
        kind = "stream_error"
    return ReplyError(kind, status, code, message)


@dataclass(frozen=True, slots=True)
class Reply:
    """One model response as the loop received it."""

    finish_raw: str | None
    finish: Finish
    content: str | None = None
    calls: tuple[Call, ...] = ()
    end_turn: bool | None = None
    error: ReplyError | None = None
    raw: Any = field(default=None, compare=False, repr=False)
    """What the conversation needs to echo the reply (API-specific)."""
    refusal: str | None = None
    """The model's refusal text (chat ``refusal``, a Responses refusal part), whatever the finish."""
    at_limit: bool = False
    """The reply's output tokens reached the request's max_tokens: cut off, whatever the finish says."""


@dataclass(frozen=True, slots=True)
class Result:
    """A tool result to send back: `is_error` results tell the model the call failed."""

    call: Call
    text: str
    is_error: bool = False


class Conversation(Protocol):
    """One conversation with a model on one API."""

    api: Api

    def ask(self) -> Reply: ...

    def add_reply(self, reply: Reply) -> None: ...

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None: ...


def _status_error(exc: Any) -> ReplyError:
    """An error from an official client: its status (a 2xx status means an error event in a
    stream), and the type and message from its body."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    kind = str(err.get("type") or err.get("code") or "") if isinstance(err, dict) else ""
    message = str(err.get("message", "")) if isinstance(err, dict) else str(getattr(exc, "message", exc))
    code = err.get("code") if isinstance(err, dict) else None
    in_stream = not isinstance(status, int) or status < 400
    if in_stream:
        # inside a stream: an OpenAI error event may carry the status as its code (OpenRouter does)
        status = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else None
    return reply_error(status, kind or type(exc).__name__, message, in_stream=in_stream)


def _connection_error(exc: BaseException) -> ReplyError:
    """A transport failure: a timeout by its class (the clients' APITimeoutError, httpx's
    TimeoutException), else a connection that failed or broke."""
    timeout = isinstance(exc, httpx.TimeoutException) or type(exc).__name__ == "APITimeoutError"
    kind: ErrorKind = "timeout" if timeout else "connection_reset"
    return ReplyError(kind, None, type(exc).__name__, f"{type(exc).__name__}: {exc}")


def _errors(mod: Any) -> tuple[type[BaseException], type[BaseException]]:
    """(the client's API error base class, its connection error class)."""
    return mod.APIError, mod.APIConnectionError


# ---------------------------------------------------------------- OpenAI Chat Completions


class Chat:
    """Chat Completions over ``openai.OpenAI`` (streamed)."""

    api: Api = "openai-chat"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        import openai
        self.client = client.with_options(max_retries=0)
        self.errors = _errors(openai)
        self.model = model
        self.messages: list[dict[str, Any]] = ([{"role": "system", "content": system}] if system else [])
        self.messages.append({"role": "user", "content": prompt})
        self.tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                        "parameters": t["parameters"]}} for t in tools]
        self.max_tokens = MAX_TOKENS

    def ask(self) -> Reply:
        content: list[str] = []
        refusal: list[str] = []
        got_content = False
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        used = 0
        api_error, connection_error = self.errors
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            stream = self.client.chat.completions.create(model=self.model, messages=self.messages, stream=True,
                                                         max_tokens=self.max_tokens,
                                                         stream_options={"include_usage": True}, **kwargs)
            for chunk in stream:
                if chunk.usage is not None:
                    used = chunk.usage.completion_tokens
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and getattr(delta, "refusal", None):
                        refusal.append(delta.refusal or "")
                    if delta is not None and delta.content is not None:
                        got_content = True
                        content.append(delta.content)
                    for tc in (delta.tool_calls if delta is not None else None) or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            slot["name"] += tc.function.name or ""
                            slot["arguments"] += tc.function.arguments or ""
                    if choice.finish_reason is not None:
                        finish = choice.finish_reason
        except connection_error as exc:
            return self._failed(_connection_error(exc), content, got_content, calls)
        except api_error as exc:
            return self._failed(_status_error(exc), content, got_content, calls)
        except httpx.HTTPError as exc:
            return self._failed(_connection_error(exc), content, got_content, calls)
        text = "".join(content) if got_content else None
        made = tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items()))
        return Reply(finish, canonical("openai-chat", finish), text, made, raw=(text, made),
                     refusal="".join(refusal) if refusal else None, at_limit=used >= self.max_tokens)

    def _failed(self, err: ReplyError, content: list[str], got: bool, calls: dict[int, dict[str, str]]) -> Reply:
        made = tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items()))
        text = "".join(content) if got else None
        return Reply(None, "error", text, made, error=err, raw=(text, made))

    def add_reply(self, reply: Reply) -> None:
        text, made = reply.raw
        msg: dict[str, Any] = {"role": "assistant", "content": text if text is not None or made else ""}
        if made:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in made]
        self.messages.append(msg)

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            self.messages.append({"role": "tool", "tool_call_id": r.call.id, "content": r.text})
        if message:
            self.messages.append({"role": "user", "content": message})


# ---------------------------------------------------------------- Anthropic Messages


class Messages:
    """Anthropic Messages over ``anthropic.Anthropic`` (streamed, raw events)."""

    api: Api = "anthropic"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None, max_tokens: int = 4096) -> None:
        import anthropic
        self.client = client.with_options(max_retries=0)
        self.errors = _errors(anthropic)
        self.model = model
        self.system = system
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.tools = [{"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
                      for t in tools]

    def ask(self) -> Reply:
        blocks: dict[int, dict[str, Any]] = {}
        stop: str | None = None
        used = 0
        api_error, connection_error = self.errors
        err: ReplyError | None = None
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            if self.system:
                kwargs["system"] = self.system
            stream = self.client.messages.create(model=self.model, max_tokens=self.max_tokens,
                                                 messages=self.messages, stream=True, **kwargs)
            for event in stream:
                kind = event.type
                if kind == "message_start":
                    stop = event.message.stop_reason or stop
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        start = json.dumps(block.input) if block.input else ""
                        blocks[event.index] = {"type": "tool_use", "id": block.id, "name": block.name,
                                               "json": "", "start": start}
                    elif block.type == "text":
                        blocks[event.index] = {"type": "text", "text": block.text or ""}
                    elif block.type == "thinking":
                        blocks[event.index] = {"type": "thinking", "thinking": block.thinking or "",
                                               "signature": block.signature or ""}
                    elif block.type == "redacted_thinking":
                        blocks[event.index] = {"type": "redacted_thinking", "data": block.data}
                elif kind == "content_block_delta":
                    slot = blocks.get(event.index)
                    delta = event.delta
                    if slot is None:
                        continue
                    if delta.type == "text_delta":
                        slot["text"] = slot.get("text", "") + delta.text
                    elif delta.type == "input_json_delta":
                        slot["json"] += delta.partial_json
                    elif delta.type == "thinking_delta":
                        slot["thinking"] += delta.thinking
                    elif delta.type == "signature_delta":
                        slot["signature"] += delta.signature
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
                    used = event.usage.output_tokens if event.usage is not None else used
        except connection_error as exc:
            err = _connection_error(exc)
        except api_error as exc:
            err = _status_error(exc)
        except httpx.HTTPError as exc:
            err = _connection_error(exc)
        ordered = [b for _, b in sorted(blocks.items())]
        texts = [b["text"] for b in ordered if b["type"] == "text"]
        made = tuple(Call(b["id"], b["name"], b["json"] or b["start"]) for b in ordered if b["type"] == "tool_use")
        text = "".join(texts) if texts else None
        if err is not None:
            return Reply(None, "error", text, made, error=err, raw=ordered)
        return Reply(stop, canonical("anthropic", stop), text, made, raw=ordered, at_limit=used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        content: list[dict[str, Any]] = []
        for b in reply.raw:
            if b["type"] == "text":
                content.append({"type": "text", "text": b["text"]})
            elif b["type"] in ("thinking", "redacted_thinking"):  # the API wants them back with tool use
                content.append(dict(b))
            else:
                content.append({"type": "tool_use", "id": b["id"], "name": b["name"],
                                "input": _object(b["json"] or b["start"])})
        if content:  # an empty reply has nothing to echo (the API refuses empty assistant content)
            self.messages.append({"role": "assistant", "content": content})

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        content: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": r.call.id, "content": r.text,
                                          "is_error": r.is_error} for r in results]
        if message:
            content.append({"type": "text", "text": message})
        if content:
            self.messages.append({"role": "user", "content": content})


def _object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- OpenAI Responses


class Responses:
    """The Responses API over ``openai.OpenAI`` (streamed, stateless: the whole input every time)."""

    api: Api = "openai-responses"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        import openai
        self.client = client.with_options(max_retries=0)
        self.errors = _errors(openai)
        self.model = model
        self.system = system
        self.input: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.tools = [{"type": "function", "name": t["name"], "description": t.get("description", ""),
                       "parameters": t["parameters"], "strict": False} for t in tools]
        self.max_tokens = MAX_TOKENS

    def ask(self) -> Reply:
        items: dict[int, dict[str, Any]] = {}
        final: dict[str, Any] | None = None
        err: ReplyError | None = None
        api_error, connection_error = self.errors
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            if self.system:
                kwargs["instructions"] = self.system
            stream = self.client.responses.create(model=self.model, input=self.input, stream=True, store=False,
                                                  max_output_tokens=self.max_tokens, **kwargs)
            for event in stream:
                kind = event.type
                if kind == "response.output_item.done":
                    items[event.output_index] = event.item.model_dump()
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    final = event.response.model_dump()
                elif kind == "error":
                    err = reply_error(None, str(event.code or "error"), str(event.message), in_stream=True)
        except connection_error as exc:
            err = _connection_error(exc)
        except api_error as exc:
            err = _status_error(exc)
        except httpx.HTTPError as exc:
            err = _connection_error(exc)
        ordered = [i for _, i in sorted(items.items())]
        texts = ["".join(p.get("text", "") for p in i.get("content") or []) for i in ordered if i["type"] == "message"]
        made = tuple(Call(i.get("call_id", ""), i.get("name", ""), i.get("arguments", ""))
                     for i in ordered if i["type"] == "function_call")
        text = "".join(texts) if texts else None
        refusals = [p.get("refusal") or "" for i in ordered if i["type"] == "message" for p in i.get("content") or []
                    if p.get("type") == "refusal"]
        if err is not None:
            return Reply(None, "error", text, made, error=err, raw=ordered)
        raw: str | None = None
        end_turn: bool | None = None
        if final is not None:
            status = final.get("status")
            reason = (final.get("incomplete_details") or {}).get("reason")
            raw = f"{status}/{reason}" if status == "incomplete" and reason else status
            flag = final.get("end_turn")
            end_turn = flag if isinstance(flag, bool) else None
            if status == "failed":
                e = final.get("error") or {}
                return Reply(raw, canonical("openai-responses", raw), text, made, end_turn,
                             reply_error(None, str(e.get("code") or "failed"), str(e.get("message") or "")),
                             raw=ordered)
        used = ((final or {}).get("usage") or {}).get("output_tokens") or 0
        return Reply(raw, canonical("openai-responses", raw), text, made, end_turn, raw=ordered,
                     refusal="".join(refusals) if refusals else None, at_limit=used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        for item in reply.raw:
            if item["type"] == "message":
                text = "".join(p.get("text", "") for p in item.get("content") or [])
                self.input.append({"role": "assistant", "content": text})
            elif item["type"] == "function_call":
                self.input.append({"type": "function_call", "call_id": item.get("call_id", ""),
                                   "name": item.get("name", ""), "arguments": item.get("arguments", "")})

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            self.input.append({"type": "function_call_output", "call_id": r.call.id, "output": r.text})
        if message:
            self.input.append({"role": "user", "content": message})


def conversation(api: Api, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> Conversation:
    """A conversation on `api` with a client of the matching package (openai for both OpenAI APIs)."""
    if api == "anthropic":
        return Messages(client, model, prompt, tools, system)
    if api == "openai-responses":
        return Responses(client, model, prompt, tools, system)
    return Chat(client, model, prompt, tools, system)
