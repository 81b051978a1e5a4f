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

Each wire says how it names a reply and how it is refused (``reference``, ``unknown_reference``,
``rebuild``, ``stored_conversation`` of :class:`bench.wires.base.Wire`); this module follows them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.engine.model import Turn
from bench.wires.base import Refusal
from bench.wires.registry import wire

__all__ = ["Refusal", "follow"]


def follow(name: str, body: dict[str, Any],
           replied: Callable[[str], tuple[dict[str, Any], Turn] | None]) -> dict[str, Any] | Refusal:
    """The conversation `body` carries on wire `name`: itself when it sends its whole history,
    rebuilt when it follows a reply by reference, or a :class:`Refusal` when `replied` (the server's
    lookup: the rebuilt request and the served turn of a reply id, None for an id it never gave)
    does not know the reply, or when it adds to a conversation stored on the provider's side."""
    w = wire(name)
    if (refused := w.stored_conversation(body)) is not None:
        return refused
    ref = w.reference(body)
    if ref is None:
        return body
    found = replied(ref)
    if found is None:
        return w.unknown_reference(ref)
    return w.rebuild(body, *found)
