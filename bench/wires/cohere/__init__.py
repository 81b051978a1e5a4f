"""Cohere's v2 chat API (``POST /v2/chat``): finish table, serving, reading, importing.

The answer is rendered by :mod:`.render`, a request read back by :mod:`.read`, a capture imported by
:mod:`.capture`; :data:`WIRE` ties them behind :class:`bench.wires.base.Wire`. The body says whether
a request streams (``stream: true``, what the official client's ``chat_stream`` sends).

The finish table: the values of ``ChatFinishReason`` (cohere-ai/cohere-python 7.0.9 @ bc495daa,
src/cohere/types/chat_finish_reason.py L5-7), the type of ``V2ChatResponse.finish_reason``
(src/cohere/v2/types/v2chat_response.py L20) and of ``message-end``'s ``delta.finish_reason``
(src/cohere/types/chat_message_end_event_delta.py L18). The SDK describes three of them, on the
chat stream's end event (src/cohere/types/chat_stream_end_event.py L15-19); the others are read
from their names, and where the name leaves a choice the entry says so.
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bench.engine.model import TurnError
from bench.wires.base import Entry, Wire
from bench.wires.cohere import capture, read, render

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_SRC = "cohere-ai/cohere-python 7.0.9 @ bc495daa src/cohere/types/chat_finish_reason.py L5-7"
_END = "src/cohere/types/chat_stream_end_event.py L15-19"


class Cohere(Wire):
    name = "cohere"
    table = MappingProxyType({
        "COMPLETE": Entry("stop", f"{_SRC}; {_END}: 'the model sent back a finished reply'"),
        "STOP_SEQUENCE": Entry("stop", f"{_SRC}: undescribed; one of the request's stop_sequences was generated (read from the name)"),
        "MAX_TOKENS": Entry("length", f"{_SRC}; {_END}: 'the reply was cut off because the model reached the maximum number of tokens specified by the max_tokens parameter'"),
        "TOOL_CALL": Entry("tool_calls", f"{_SRC}: undescribed; the reply calls tools (message.tool_calls)"),
        "ERROR": Entry("error", f"{_SRC}; {_END}: 'something went wrong when generating the reply'"),
        "TIMEOUT": Entry("error", f"{_SRC}: undescribed; the generation ran out of time: neither done nor a call (ambiguous: a retry may succeed)"),
    })
    default_model = "command-a-03-2025"
    # the official client's base_url default and its key (cohere-python 7.0.9 src/cohere/client_v2.py L37,
    # src/cohere/client.py L576-578: CO_API_KEY, else the undocumented COHERE_API_KEY)
    client_env = MappingProxyType({"CO_API_URL": "{url}", "CO_API_KEY": "{key}"})
    client_env_removed = ("COHERE_API_KEY",)
    id_prefix = "cohere-"
    paths = ("/v2/chat",)
    conversation_field = ("messages", (list,), True)
    max_tokens_keys = ("max_tokens",)
    detect_rank = 36
    uri_markers = ("/v2/chat",)
    renderer = render
    reader = read
    importer = capture

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return render.error_body(err)

    def tool_choice(self, body: dict[str, Any]) -> str:
        return read.tool_choice(body)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        return obj.get("type") in capture.STREAM_EVENTS

    def loop_client(self, env: Mapping[str, str]) -> Any:
        from bench.wires.cohere.client import official_client

        return official_client(env)

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.cohere.client import Chat  # over an httpx.Client

        return Chat(client, model, prompt, tools, system)


WIRE = Cohere()
