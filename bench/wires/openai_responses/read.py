"""An OpenAI Responses request read back: its input as the conversation, and a reply it follows.

The ``input`` (a string is one user message) is reduced to the dialect-neutral conversation: a
``function_call`` item is part of the assistant's echo, a ``function_call_output`` answers a call by
``call_id``, reasoning and other output items echoed back belong to the assistant's turn.

``previous_response_id`` names the reply a request follows: its input is what follows that
response. An unknown id is refused with 400 ``invalid_request_error``, code
``previous_response_not_found``, param ``previous_response_id``. A ``conversation`` (items stored
in a conversation object) is never followed: the replay server keeps no conversations, so it
answers 404 ``conversation_not_found``, as for an unknown id.
"""

from __future__ import annotations

import json
from typing import Any

from bench.engine.model import Turn
from bench.wires.base import Refusal
from bench.wires.conversation import Conversation, Item, args_text, as_list, merge, text_of


def conversation(body: dict[str, Any]) -> Conversation:
    """A Responses request body reduced to the dialect-neutral conversation."""
    items: list[Item] = []
    raw = body.get("input")
    entries = [{"role": "user", "content": raw}] if isinstance(raw, str) else (raw or [])
    for e in entries:
        if not isinstance(e, dict):
            continue
        kind = e.get("type", "message")
        if kind == "message":
            role = e.get("role")
            if role == "assistant":
                items.append(Item("assistant", text_of(e.get("content"))))
            elif role in ("system", "developer"):
                items.append(Item("system", text_of(e.get("content"))))
            else:
                items.append(Item("user", text_of(e.get("content"))))
        elif kind == "function_call":
            items.append(Item("assistant", calls=(str(e.get("call_id", "")),), call_names=(str(e.get("name", "")),),
                              call_args=(args_text(e.get("arguments")),)))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            items.append(Item("tool", text_of(e.get("output")), call_id=str(e.get("call_id", ""))))
        else:  # reasoning and other output items echoed back belong to the assistant's turn
            items.append(Item("assistant"))
    prev = body.get("previous_response_id")
    return Conversation(text_of(body.get("instructions")), merge(items), prev if isinstance(prev, str) else None)


def reference(body: dict[str, Any]) -> str | None:
    """The ``previous_response_id`` a request follows, or None."""
    ref = body.get("previous_response_id")
    return ref if isinstance(ref, str) else None


def unknown_reference(ref: str) -> Refusal:
    """OpenAI's answer to a ``previous_response_id`` it does not know."""
    return Refusal(400, {"error": {"message": f"Previous response with id '{ref}' not found.",
                                   "type": "invalid_request_error", "param": "previous_response_id",
                                   "code": "previous_response_not_found"}})


def _output(turn: Turn) -> list[dict[str, Any]]:
    """A served reply as the input items that echo it."""
    items: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": turn.reasoning}]})
    if turn.content is not None:
        items.append({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": turn.content}]})
    for call in turn.tool_calls:
        items.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
    return items


def rebuild(body: dict[str, Any], base: dict[str, Any], reply: Turn) -> dict[str, Any]:
    """A request that follows `reply` (the answer to `base`) as the whole conversation."""
    out = {key: value for key, value in body.items() if key != "previous_response_id"}
    out["input"] = [*as_list(base.get("input")), *_output(reply), *as_list(body.get("input"))]
    return out


def stored_conversation(body: dict[str, Any]) -> Refusal | None:
    """The refusal of a request that adds to a stored ``conversation`` (an id or ``{"id": ...}``):
    the replay server keeps none, so every such id is one it never gave."""
    if "conversation" not in body or body["conversation"] is None:
        return None
    value = body["conversation"]
    ref = value.get("id") if isinstance(value, dict) else value
    conv = ref if isinstance(ref, str) else json.dumps(ref)
    return Refusal(404, {"error": {"message": f"Conversation with id '{conv}' not found.",
                                   "type": "invalid_request_error", "param": "conversation",
                                   "code": "conversation_not_found"}})
