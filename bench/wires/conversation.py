"""The dialect-neutral conversation a request is reduced to, and the helpers every wire's reader shares.

Each wire reads its request body into a :class:`Conversation` (system text plus a list of items: user
and system messages, assistant messages with their call ids, tool results); the observation
(:mod:`bench.serve.observe`) compares two of them to tell what the client did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a conversation: kind system/user/assistant/tool."""

    kind: Literal["system", "user", "assistant", "tool"]
    text: str = ""
    call_id: str = ""
    calls: tuple[str, ...] = ()
    is_error: bool | None = None
    call_names: tuple[str, ...] = ()
    """An assistant item's calls' names, beside `calls` (their ids), where the wire says them."""
    call_args: tuple[str, ...] = ()
    """An assistant item's calls' arguments as JSON text, beside `calls`, where the wire says them."""

    def key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """What must be equal for two items to be 'the same' (an assistant's echoed text may differ)."""
        return (self.kind, "" if self.kind == "assistant" else self.text, self.call_id, self.calls)


@dataclass(frozen=True, slots=True)
class Conversation:
    system: str
    items: tuple[Item, ...]
    previous_id: str | None = None


def text_of(content: Any) -> str:
    """Text of a message content: a string, or the text of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                value = part.get("text", part.get("content"))
                out.append(text_of(value) if not isinstance(value, str) else value)
        return "\n".join(out)
    if isinstance(content, dict):
        return text_of(content.get("text", ""))
    return json.dumps(content, sort_keys=True)


def args_text(value: Any) -> str:
    """A call's arguments as the wire carried them, as text (a string as it is, an object as JSON)."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, sort_keys=True)


def merge(items: list[Item]) -> tuple[Item, ...]:
    """Merge consecutive assistant items into one (a Responses echo is several output items)."""
    out: list[Item] = []
    for item in items:
        if item.kind == "assistant" and out and out[-1].kind == "assistant":
            prev = out[-1]
            out[-1] = Item("assistant", prev.text + item.text, calls=prev.calls + item.calls,
                           call_names=prev.call_names + item.call_names, call_args=prev.call_args + item.call_args)
        else:
            out.append(item)
    return tuple(out)


def as_list(value: Any) -> list[Any]:
    """A conversation field as a list of messages: a string is one user message, anything but a
    list is none."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []
