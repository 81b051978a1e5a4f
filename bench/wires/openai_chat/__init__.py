"""OpenAI Chat Completions (``POST /v1/chat/completions``, and on Azure OpenAI: :mod:`.azure`): finish
table, serving, reading, importing.

The answer is rendered by :mod:`.render`, a request read back by :mod:`.read`, a capture imported by
:mod:`.capture`; :data:`WIRE` ties them behind :class:`bench.wires.base.Wire`.
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import (
    OPENAI_CLIENT_ENV,
    OPENAI_STATUS_ERRORS,
    Context,
    Entry,
    Rendered,
    Shape,
    Wire,
    openai_error_body,
)
from bench.wires.openai_chat import azure, capture, read, render

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_DOC = "https://platform.openai.com/docs/api-reference/chat/object (choices[].finish_reason)"

RESET_REQUESTS = "1s"
"""When a served 429's request limit resets (the sequence model's error has no field for it)."""


def openai_rate_limit_headers(status: int) -> Mapping[str, str]:
    """The rate-limit headers of a 429 of OpenAI's APIs (Chat Completions and Responses):
    ``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests``, a duration
    (https://platform.openai.com/docs/guides/rate-limits, "Rate limits in headers"). OpenAI
    documents no ``retry-after``, so none is sent; its SDKs keep their own back-off."""
    return {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": RESET_REQUESTS} if status == 429 else {}


class OpenAIChat(Wire):
    name = "openai-chat"
    table = MappingProxyType({
        "stop": Entry("stop", f"{_DOC}: 'the model hit a natural stop point or a provided stop sequence'"),
        "length": Entry("length", f"{_DOC}: 'the maximum number of tokens specified in the request was reached'"),
        "tool_calls": Entry("tool_calls", f"{_DOC}: 'the model called a tool'"),
        "content_filter": Entry("content_filter", f"{_DOC}: 'content was omitted due to a flag from our content filters'"),
        "function_call": Entry("tool_calls", f"{_DOC}: deprecated 'the model called a function'"),
        # not in OpenAI's enum (openai-python 3.60.0 openai/types/chat/chat_completion.py L40 has the five above): a compatible provider's string
        "model_context_window_exceeded": Entry("length", "Z.ai GLM's Chat finish_reason when the context window fills (earendil-works/pi#1869: GLM-4.7, mapStopReason threw 'Unhandled stop reason'; mozilla-ai/any-llm#1200: GLM-5, a ChatCompletionChunk that failed openai-python's Literal); read as Anthropic's value of the same name, a truncation"),
    })
    id_prefix = "chatcmpl-"
    paths = ("/v1/chat/completions", "/chat/completions", *azure.CHAT_PATHS)
    conversation_field = ("messages", (list,), True)
    max_tokens_keys = ("max_completion_tokens", "max_tokens")
    detect_rank = 90  # the loosest test (any object with a choices list): tried last
    uri_markers = ("/chat/completions",)
    renderer = render
    reader = read
    importer = capture
    provider = "openai"
    default_model = "gpt-4o"
    client_env = OPENAI_CLIENT_ENV
    status_errors = OPENAI_STATUS_ERRORS
    corpus_models = (("gpt-4.1", 0.30), ("gpt-4o-mini", 0.10))
    agent_surfaces = (("mistral-client-python/", render.MISTRAL),)

    def shape(self, path: str, alt: str | None) -> Shape | None:
        return azure.shape(path)

    def render(self, turn: Turn, ctx: Context, stream: bool) -> Rendered:
        out = super().render(turn, ctx, stream)
        if ctx.surface == azure.SURFACE and out.body is not None and out.status >= 400:
            return Rendered(out.status, body=azure.prompt_filter_error(out.body, turn), headers=out.headers)
        return out

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return openai_error_body(err)

    def error_headers(self, status: int) -> Mapping[str, str]:
        return openai_rate_limit_headers(status)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        return obj.get("object") == "chat.completion.chunk"

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.openai_chat.client import Chat  # the official client package loads only for a loop

        return Chat(client, model, prompt, tools, system)

    def loop_client(self, env: Mapping[str, str]) -> Any:
        import openai  # reads OPENAI_BASE_URL and OPENAI_API_KEY itself

        return openai.OpenAI(timeout=30.0)


WIRE = OpenAIChat()
