"""One model request and its assembled reply, over the official ``openai`` and ``anthropic`` clients.

A loop needs three things from an API: ask (and get the reply assembled from the stream, with tool
call arguments as the raw string the model produced, cut-off JSON included), append the reply to
the conversation, and append tool results and user messages. Each wire with a client does that with
the same methods (``bench/wires/<wire>/client.py``; the shared types are :mod:`bench.wires.client`),
so a loop is written once (:mod:`bench.loops.reference`).

Every request streams: only a stream shows what a truncated reply really carried (Anthropic's
``input_json_delta`` is the only place cut-off arguments reach a client). The clients' own retries
are switched off (``max_retries=0``): the loop decides what to resend, and counts it.

Errors are caught, never raised: a reply with ``error`` set is what the loop decides on. Its
``status`` is the HTTP status when the server answered with an error status; an error event inside
a stream, and a connection that broke, have none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from bench.wires.base import Wire
from bench.wires.client import MAX_TOKENS, Call, Conversation, Reply, ReplyError, Result, reply_error
from bench.wires.registry import wire, wires

__all__ = ["APIS", "MAX_TOKENS", "Api", "Call", "Conversation", "Reply", "ReplyError", "Result", "conversation",
           "reply_error"]

Api: TypeAlias = Literal["openai-chat", "anthropic", "openai-responses"]
"""The wires the reference loop has a client for (a type; :data:`APIS` is read from the wires)."""
APIS: tuple[Api, ...] = tuple(w.name for w in wires()  # type: ignore[misc]
                              if type(w).open_conversation is not Wire.open_conversation)


def conversation(api: Api, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> Conversation:
    """A conversation on `api` with a client of the matching package (openai for both OpenAI APIs)."""
    return wire(api).open_conversation(client, model, prompt, tools, system)
