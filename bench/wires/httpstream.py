"""What the reference clients over plain HTTP share (Ollama, Cohere, Bedrock: an ``httpx.Client``, no
provider package): one streamed ``POST``, the error its answer stands for, and (:class:`FunctionChat`)
the conversation of the two whose messages and tools have Chat Completions' shape.

:func:`stream_post` sends the body and hands a 2xx answer to the wire's reader, which reads the
stream and returns the error it carried, if any. Whatever else goes wrong is an error in place of a
reply, never raised: an error status is the wire's error answer (:func:`status_error`), a frame that
does not parse (a ``ValueError`` from the reader) a broken frame, an ``httpx`` failure a transport one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import httpx

from bench.wires.client import (
    MAX_TOKENS,
    ReplyError,
    broken_frame,
    chat_messages,
    function_tools,
    reply_error,
    retry_after,
    transport_error,
)

Reader = Callable[[httpx.Response], ReplyError | None]
"""Reads a 2xx answer's stream into the wire's assembler; returns the error the stream carried, if any."""


def stream_post(client: httpx.Client, path: str, body: dict[str, Any], read: Reader,
                on_status: Callable[[httpx.Response], ReplyError]) -> ReplyError | None:
    """POST `body` to `path` streamed: an answer with an error status (read whole) is `on_status`'s
    error, else the stream goes to `read`; a frame that does not parse and a transport failure are
    errors too. None: the stream was read without an error (it may still have been cut)."""
    try:
        with client.stream("POST", path, json=body) as response:
            if response.status_code >= 400:
                response.read()
                return on_status(response)
            return read(response)
    except ValueError as exc:  # a frame that does not parse: a broken answer, resent, never a crash
        return broken_frame(exc)
    except httpx.HTTPError as exc:
        return transport_error(exc)


def status_error(response: httpx.Response, message: str, code: str = "") -> ReplyError:
    """An HTTP error answer: its status, the provider's `code` and `message`, and a ``Retry-After`` if sent."""
    out = reply_error(response.status_code, code, message)
    wait = retry_after(response.headers)
    return out if wait is None else replace(out, retry_after=wait)


def body_message(response: httpx.Response, key: str) -> str:
    """The message an error answer's JSON body carries under `key`, else the start of its text."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return str(body.get(key, "")) if isinstance(body, dict) else response.text[:200]


class FunctionChat:
    """The conversation of a chat over an ``httpx.Client`` whose messages and tools have Chat Completions'
    shape (Ollama, Cohere), stateless: the whole conversation every time. A wire's class says how it
    sends the output limit (:meth:`limit`), and reads and echoes its replies."""

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        self.client: httpx.Client = client
        self.model = model
        self.messages = chat_messages(prompt, system)
        self.tools = function_tools(tools)
        self.max_tokens = MAX_TOKENS

    def limit(self) -> dict[str, Any]:
        """The request's output limit, as the wire's body carries it."""
        raise NotImplementedError

    def body(self) -> dict[str, Any]:
        """The streamed request: the model, the whole conversation, the limit, the tools when there are any."""
        body: dict[str, Any] = {"model": self.model, "messages": self.messages, "stream": True, **self.limit()}
        if self.tools:
            body["tools"] = self.tools
        return body
