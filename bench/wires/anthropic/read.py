"""An Anthropic Messages request read back: its conversation, and a message thread it continues.

The ``messages`` are reduced to the dialect-neutral conversation: an assistant message's ``text``
and ``tool_use`` blocks are its echo, a user message's ``tool_result`` blocks answer calls by
``tool_use_id`` (its ``is_error`` flag kept), its ``text`` blocks are user text.

Message threads (the ``message-threads-2026-08-12`` beta, which the Anthropic SDK's
``client.beta.messages.tool_runner`` uses by default from anthropic 2.15.0): the first request
carries ``thread: {"type": "create"}`` and the whole history; each later one carries
``thread: {"type": "continue", "previous_message_id": ID}``, only the new messages, and no
``system`` or ``tools`` (the server takes those from the thread: anthropic 2.15.0,
lib/threads/_thread_state.py ``create_arguments``, ``CREATE_ONLY_FIELDS``). An unknown id is
refused with 404 ``not_found_error``, ``details.error_code`` ``thread_not_found`` (the SDK then
replays the full history under a new thread: lib/threads/_thread_state.py ``recovers_from``).
"""

from __future__ import annotations

from typing import Any

from bench.engine.model import Turn
from bench.wires.anthropic.render import blocks
from bench.wires.base import Refusal
from bench.wires.conversation import Conversation, Item, args_text, as_list, merge, text_of

THREAD_CREATE_ONLY = ("system", "tools")
"""The fields a thread ``continue`` takes from the thread (anthropic 2.15.0 ``CREATE_ONLY_FIELDS``)."""


def conversation(body: dict[str, Any]) -> Conversation:
    """An Anthropic Messages request body reduced to the dialect-neutral conversation."""
    items: list[Item] = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        if m.get("role") == "assistant":
            uses = [b for b in parts if isinstance(b, dict) and b.get("type") == "tool_use"]
            text = "".join(str(b.get("text", "")) for b in parts if isinstance(b, dict) and b.get("type") == "text")
            items.append(Item("assistant", text, calls=tuple(str(b.get("id", "")) for b in uses),
                              call_names=tuple(str(b.get("name", "")) for b in uses),
                              call_args=tuple(args_text(b.get("input")) for b in uses)))
            continue
        for b in parts:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                flag = b.get("is_error")
                items.append(Item("tool", text_of(b.get("content")), call_id=str(b.get("tool_use_id", "")),
                                  is_error=bool(flag) if flag is not None else None))
            elif b.get("type") == "text":
                items.append(Item("user", str(b.get("text", ""))))
    return Conversation(text_of(body.get("system")), merge(items))


def reference(body: dict[str, Any]) -> str | None:
    """The message a thread ``continue`` follows ("" when it names none), or None."""
    thread = body.get("thread")
    if isinstance(thread, dict) and thread.get("type") == "continue":
        ref = thread.get("previous_message_id")
        return ref if isinstance(ref, str) else ""
    return None


def unknown_reference(ref: str) -> Refusal:
    """Anthropic's answer to a thread that names a message it does not know."""
    return Refusal(404, {"type": "error", "error": {
        "type": "not_found_error", "message": f"No thread was found for previous_message_id {ref!r}.",
        "details": {"error_code": "thread_not_found"}}})


def rebuild(body: dict[str, Any], base: dict[str, Any], reply: Turn) -> dict[str, Any]:
    """A thread ``continue`` as the whole conversation: the thread's ``system`` and ``tools``, the
    messages of `base`, the reply's echo, then the new messages."""
    out = {key: base[key] for key in THREAD_CREATE_ONLY if key in base}
    out.update({key: value for key, value in body.items() if key != "thread"})
    new = body.get("messages")
    echo = {"role": "assistant", "content": blocks(reply)}
    out["messages"] = [*as_list(base.get("messages")), echo, *(new if isinstance(new, list) else [])]
    return out
