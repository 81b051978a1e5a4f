"""The reference loop's Anthropic Messages client: ``anthropic.Anthropic``, streamed (raw events), its retries off."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.base import tool_input
from bench.wires.client import (
    Call,
    OfficialClient,
    Reply,
    ReplyError,
    Result,
    broken_frame,
    caught,
    cut_error,
)


class Messages(OfficialClient):
    """Anthropic Messages over ``anthropic.Anthropic`` (streamed, raw events)."""

    api: Dialect = "anthropic"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None, max_tokens: int = 4096) -> None:
        import anthropic
        super().__init__(client, anthropic, model)
        self.system = system
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.tools = [{"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
                      for t in tools]

    def ask(self) -> Reply:
        got = _Stream()
        err: ReplyError | None = None
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            if self.system:
                kwargs["system"] = self.system
            stream = self.client.messages.create(model=self.model, max_tokens=self.max_tokens,
                                                 messages=self.messages, stream=True, **kwargs)
            for event in stream:
                got.feed(event)
        except ValueError as exc:  # a frame that does not parse: a broken answer, resent, never a crash
            err = broken_frame(exc)
        except (*self.errors, *self.transport) as exc:
            err = caught(exc, self.errors)
        if err is None and got.stop is None and not got.ended:
            err = cut_error("message_stop")
        ordered = [b for _, b in sorted(got.blocks.items())]
        texts = [b["text"] for b in ordered if b["type"] == "text"]
        made = tuple(Call(b["id"], b["name"], b["json"] or b["start"]) for b in ordered if b["type"] == "tool_use")
        text = "".join(texts) if texts else None
        if err is not None:
            return Reply(None, "error", text, made, error=err, raw=ordered)
        return Reply(got.stop, dialects.canonical("anthropic", got.stop), text, made, raw=ordered,
                     at_limit=got.used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        content: list[dict[str, Any]] = []
        for b in reply.raw:
            if b["type"] == "text":
                content.append({"type": "text", "text": b["text"]})
            elif b["type"] in ("thinking", "redacted_thinking"):  # the API wants them back with tool use
                content.append(dict(b))
            else:
                content.append({"type": "tool_use", "id": b["id"], "name": b["name"],
                                "input": tool_input(b["json"] or b["start"])})
        if content:  # an empty reply has nothing to echo (the API refuses empty assistant content)
            self.messages.append({"role": "assistant", "content": content})

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        content: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": r.call.id, "content": r.text,
                                          "is_error": r.is_error} for r in results]
        if message:
            content.append({"type": "text", "text": message})
        if content:
            self.messages.append({"role": "user", "content": content})


class _Stream:
    """What a stream's events have said so far: its content blocks by index, its stop reason, its
    output tokens, whether ``message_stop`` came."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stop: str | None = None
        self.used = 0
        self.ended = False

    def feed(self, event: Any) -> None:
        """One raw event of the client's stream."""
        kind = event.type
        if kind == "message_start":
            self.stop = event.message.stop_reason or self.stop
        elif kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            slot = self.blocks.get(event.index)
            if slot is not None:
                _delta(slot, event.delta)
        elif kind == "message_delta":
            self.stop = event.delta.stop_reason or self.stop
            self.used = event.usage.output_tokens if event.usage is not None else self.used
        elif kind == "message_stop":
            self.ended = True

    def _start(self, index: int, block: Any) -> None:
        if block.type == "tool_use":
            start = json.dumps(block.input) if block.input else ""
            self.blocks[index] = {"type": "tool_use", "id": block.id, "name": block.name, "json": "", "start": start}
        elif block.type == "text":
            self.blocks[index] = {"type": "text", "text": block.text or ""}
        elif block.type == "thinking":
            self.blocks[index] = {"type": "thinking", "thinking": block.thinking or "",
                                  "signature": block.signature or ""}
        elif block.type == "redacted_thinking":
            self.blocks[index] = {"type": "redacted_thinking", "data": block.data}


def _delta(slot: dict[str, Any], delta: Any) -> None:
    """One ``content_block_delta``: a text, tool input, thinking or signature piece added to its block."""
    if delta.type == "text_delta":
        slot["text"] = slot.get("text", "") + delta.text
    elif delta.type == "input_json_delta":
        slot["json"] += delta.partial_json
    elif delta.type == "thinking_delta":
        slot["thinking"] += delta.thinking
    elif delta.type == "signature_delta":
        slot["signature"] += delta.signature
