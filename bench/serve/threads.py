"""Conversations a client carries by reference: rebuilt from the server's own previous reply.

Two wires let a request send only what is new and name the reply it follows:

* Anthropic message threads (the ``message-threads-2026-08-12`` beta, which the Anthropic SDK's
  ``client.beta.messages.tool_runner`` uses by default from anthropic 2.15.0): the first request
  carries ``thread: {"type": "create"}`` and the whole history; each later one carries
  ``thread: {"type": "continue", "previous_message_id": ID}``, only the new messages, and no
  ``system`` or ``tools`` (the server takes those from the thread: anthropic 2.15.0,
  lib/threads/_thread_state.py ``create_arguments``, ``CREATE_ONLY_FIELDS``).
* OpenAI Responses ``previous_response_id``: the input is what follows that response.

The server rebuilds such a request into the conversation it carries: the request its reference
answered (itself rebuilt), that request's reply as the server served it, then the new messages;
a thread ``continue`` also gets the thread's ``system`` and ``tools``. The observation then reads it
like any request that sends the whole history.

A reference to an id the server never gave (or to a reply it did not finish) cannot be followed:
it is refused with the provider's own error, so that the client falls back to sending the whole
history, as it does against the real API. Anthropic: 404 ``not_found_error`` with
``details.error_code`` ``thread_not_found`` (the SDK then replays the full history under a new
thread: lib/threads/_thread_state.py ``recovers_from``, ``_REPLAY_ERROR_CODES``). Responses: 400
``invalid_request_error``, code ``previous_response_not_found``, param ``previous_response_id``.
A Responses ``conversation`` (items stored in a conversation object) is never followed: the server
keeps no conversations, so it answers 404 ``conversation_not_found``, as for an unknown id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.engine.model import Turn
from bench.serve.render import _anthropic_blocks

THREAD_CREATE_ONLY = ("system", "tools")
"""The fields a thread ``continue`` takes from the thread (anthropic 2.15.0 ``CREATE_ONLY_FIELDS``)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A reference the server cannot follow: the HTTP status and the provider's error body."""

    status: int
    body: dict[str, Any]


def reference(wire: str, body: dict[str, Any]) -> str | None:
    """The id of the reply a request follows by reference, or None when it sends its whole history."""
    if wire == "anthropic":
        thread = body.get("thread")
        if isinstance(thread, dict) and thread.get("type") == "continue":
            ref = thread.get("previous_message_id")
            return ref if isinstance(ref, str) else ""
        return None
    if wire == "openai-responses":
        ref = body.get("previous_response_id")
        return ref if isinstance(ref, str) else None
    return None


def refusal(wire: str, ref: str) -> Refusal:
    """The provider's answer to a reference to an id it does not know."""
    if wire == "anthropic":
        return Refusal(404, {"type": "error", "error": {
            "type": "not_found_error", "message": f"No thread was found for previous_message_id {ref!r}.",
            "details": {"error_code": "thread_not_found"}}})
    return Refusal(400, {"error": {"message": f"Previous response with id '{ref}' not found.",
                                   "type": "invalid_request_error", "param": "previous_response_id",
                                   "code": "previous_response_not_found"}})


def _input_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def _responses_output(turn: Turn) -> list[dict[str, Any]]:
    """A served Responses reply as the input items that echo it."""
    items: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": turn.reasoning}]})
    if turn.content is not None:
        items.append({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": turn.content}]})
    for call in turn.tool_calls:
        items.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
    return items


def rebuild(wire: str, body: dict[str, Any], base: dict[str, Any], reply: Turn) -> dict[str, Any]:
    """`body`, which follows the reply `reply` to the request `base` (itself rebuilt), as the
    whole conversation it carries."""
    if wire == "anthropic":
        out = {key: base[key] for key in THREAD_CREATE_ONLY if key in base}
        out.update({key: value for key, value in body.items() if key != "thread"})
        new = body.get("messages")
        echo = {"role": "assistant", "content": _anthropic_blocks(reply)}
        out["messages"] = [*_input_list(base.get("messages")), echo, *(new if isinstance(new, list) else [])]
        return out
    out = {key: value for key, value in body.items() if key != "previous_response_id"}
    out["input"] = [*_input_list(base.get("input")), *_responses_output(reply), *_input_list(body.get("input"))]
    return out


def stored_conversation(wire: str, body: dict[str, Any]) -> str | None:
    """The id of a server-side conversation a Responses request adds to (``conversation``: an id or
    ``{"id": ...}``), or None. The replay server keeps none, so every such id is one it never gave."""
    if wire != "openai-responses" or "conversation" not in body or body["conversation"] is None:
        return None
    value = body["conversation"]
    ref = value.get("id") if isinstance(value, dict) else value
    return ref if isinstance(ref, str) else json.dumps(ref)


def follow(wire: str, body: dict[str, Any],
           replied: Callable[[str], tuple[dict[str, Any], Turn] | None]) -> dict[str, Any] | Refusal:
    """The conversation `body` carries: itself when it sends its whole history, rebuilt when it
    follows a reply by reference, or a :class:`Refusal` when `replied` (the server's lookup: the
    rebuilt request and the served turn of a reply id, None for an id it never gave) does not
    know the reply."""
    if (conv := stored_conversation(wire, body)) is not None:
        return Refusal(404, {"error": {"message": f"Conversation with id '{conv}' not found.",
                                       "type": "invalid_request_error", "param": "conversation",
                                       "code": "conversation_not_found"}})
    ref = reference(wire, body)
    if ref is None:
        return body
    found = replied(ref)
    if found is None:
        return refusal(wire, ref)
    return rebuild(wire, body, *found)
