"""OpenAI Responses (``POST /v1/responses``, and on Azure OpenAI: :mod:`bench.wires.openai_chat.azure`):
finish table, serving, reading, importing.

The answer is rendered by :mod:`.render`, a request (and a reply it follows by
``previous_response_id``) read back by :mod:`.read`, a capture imported by :mod:`.capture`;
:data:`WIRE` ties them behind :class:`bench.wires.base.Wire`. The raw finish is the response's
status, ``incomplete`` joined with its reason (``incomplete/max_output_tokens``).
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bench.engine.model import TurnError
from bench.wires.base import (
    OPENAI_CLIENT_ENV,
    OPENAI_STATUS_ERRORS,
    Context,
    Entry,
    Refusal,
    Shape,
    Wire,
    openai_error_body,
)
from bench.wires.openai_chat import azure, openai_rate_limit_headers
from bench.wires.openai_responses import capture, read, render

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_DOC = "https://platform.openai.com/docs/api-reference/responses/object (status, incomplete_details.reason)"
_SDK = "openai-python 3.57.0 openai/types/responses/response.py IncompleteDetails.reason"


class OpenAIResponses(Wire):
    name = "openai-responses"
    table = MappingProxyType({
        "completed": Entry("stop", f"{_DOC}: status 'completed' (tool calls, if any, are output items; there is no tool finish)"),
        "incomplete/max_output_tokens": Entry("length", f"{_DOC}: status 'incomplete', incomplete_details.reason 'max_output_tokens'"),
        "incomplete/content_filter": Entry("content_filter", f"{_DOC}: status 'incomplete', incomplete_details.reason 'content_filter'"),
        "incomplete/steered": Entry("unknown", f"{_SDK}: 'steered means the response stopped at a safe output boundary after a WebSocket response.steer event. The server can then create a successor response automatically with the queued input': neither an answer nor a cut, the turn goes on with the new input"),
        "incomplete/max_messages": Entry("unknown", f"{_SDK}: a reason the client lists with no documented meaning; the bench does not guess one"),
        "failed": Entry("error", f"{_DOC}: status 'failed' (with an error object)"),
        "cancelled": Entry("error", f"{_DOC}: status 'cancelled'"),
    })
    id_prefix = "resp_"
    paths = ("/v1/responses", "/responses", *azure.RESPONSES_PATHS)
    conversation_field = ("input", (list, str), False)
    max_tokens_keys = ("max_output_tokens",)
    detect_rank = 10  # its events carry a "type" as Anthropic's do: tried first
    uri_markers = ("/responses",)
    renderer = render
    reader = read
    threads = read
    importer = capture
    provider = "openai"
    default_model = "gpt-4o"
    client_env = OPENAI_CLIENT_ENV
    status_errors = OPENAI_STATUS_ERRORS
    corpus_models = (("o3", 0.15),)
    end_turn = True

    def shape(self, path: str, alt: str | None) -> Shape | None:
        return azure.shape(path)

    def error_in_body(self, ctx: Context) -> bool:
        return ctx.finish_raw == "failed"  # a failed response is a 200 body with status failed

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return openai_error_body(err)

    def error_headers(self, status: int) -> Mapping[str, str]:
        return openai_rate_limit_headers(status)

    def stored_conversation(self, body: dict[str, Any]) -> Refusal | None:
        return read.stored_conversation(body)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        kind = obj.get("type")
        return isinstance(kind, str) and kind != "error" and kind.startswith("response.")

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.openai_responses.client import Responses  # the official client package loads only for a loop

        return Responses(client, model, prompt, tools, system)

    def loop_client(self, env: Mapping[str, str]) -> Any:
        import openai  # reads OPENAI_BASE_URL and OPENAI_API_KEY itself

        return openai.OpenAI(timeout=30.0)


WIRE = OpenAIResponses()
