"""The gateway a request's client tells where its path cannot: Mistral's own client on Chat Completions.

Mistral's API speaks Chat Completions on OpenAI's path (``/v1/chat/completions``) but streams each tool
call whole, its id, name and arguments in one delta (the recorded stream of
``rec-mistral-stream-tool-call``; microsoft/semantic-kernel#6316: "Tool calls from MistralAI will be
contained entirely in a single chunk"), and its official client parses each streamed call into a model
that requires ``function.name`` (mistralai 3.7.0 ``client/models/functioncall.py`` lines 20-23), so it
fails on OpenAI's framing, whose arguments deltas carry no name.

The path cannot tell the two clients apart, and a path of the bench's own would be one more set-up step
that Mistral's docs do not have: the client is told by the ``User-Agent`` its SDK sends with every
request, ``mistral-client-python/<version>`` (mistralai 3.7.0 ``client/_hooks/custom_user_agent.py``,
lines 8-20, a hook registered for every request by ``client/_hooks/registration.py`` line 24, which
replaces the generated ``speakeasy-sdk/python ...``). Any other client (OpenAI's sends ``OpenAI/Python
...``) gets OpenAI's framing, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable

from bench.wires.openai_chat.render import MISTRAL

_MISTRAL_AGENT = b"mistral-client-python/"
"""How the user agent of Mistral's official Python client starts."""


def client_surface(wire: str, headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The surface a request on `wire` is answered for by what its client says of itself (its raw ASGI
    `headers`): :data:`~bench.wires.openai_chat.render.MISTRAL` for Mistral's own client on Chat
    Completions, else empty (the wire's own API)."""
    if wire != "openai-chat":
        return ""
    for name, value in headers:
        if name == b"user-agent":
            return MISTRAL if is_mistral_client(value) else ""
    return ""


def is_mistral_client(user_agent: bytes) -> bool:
    """Whether `user_agent` is that of Mistral's official client."""
    return user_agent.startswith(_MISTRAL_AGENT)
