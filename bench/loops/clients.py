"""The reference loop's conversation on a wire, over the official ``openai`` and ``anthropic`` clients
(Bedrock Converse over an ``httpx.Client``).

Each wire with a client keeps it in ``bench/wires/<wire>/client.py`` (what a request and its reply
are, and how errors are caught, is :mod:`bench.wires.client`); :func:`conversation` opens one on
the wire asked for, so a loop is written once (:mod:`bench.loops.reference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from bench.engine.model import Dialect
from bench.wires.base import Wire
from bench.wires.client import MAX_TOKENS, Call, Conversation, Reply, ReplyError, Result, reply_error
from bench.wires.registry import wire, wires

__all__ = ["APIS", "MAX_TOKENS", "Api", "Call", "Conversation", "Reply", "ReplyError", "Result", "conversation",
           "reply_error"]

Api: TypeAlias = Dialect
"""A wire's name, as the reference loop is given it (:data:`APIS`: those it has a client for)."""
APIS: tuple[Api, ...] = tuple(w.name for w in wires() if type(w).open_conversation is not Wire.open_conversation)
"""The wires the reference loop has a client for, read from the wires, in their order."""


def conversation(api: Api, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> Conversation:
    """A conversation on `api` with a client of the matching package (openai for both OpenAI APIs, an
    ``httpx.Client`` on the bedrock-runtime endpoint for Bedrock Converse)."""
    return wire(api).open_conversation(client, model, prompt, tools, system)
