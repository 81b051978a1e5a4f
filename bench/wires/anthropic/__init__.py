"""Anthropic Messages (``POST /v1/messages``, and through Vertex AI and Bedrock: :mod:`.gateways`):
finish table, serving, reading, importing.

The answer is rendered by :mod:`.render`, a request (and a message thread) read back by :mod:`.read`,
a capture imported by :mod:`.capture`; :data:`WIRE` ties them behind :class:`bench.wires.base.Wire`.
A refusal is its own stop_reason (``refusal``), whatever the turn's finish (a chat refusal arrives
with finish ``stop``).
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bench.engine.model import Turn, TurnError
from bench.wires.anthropic import capture, gateways, read, render
from bench.wires.base import Context, Entry, Rendered, Route, Shape, StatusError, Wire

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_DOC = "https://docs.anthropic.com/en/api/messages (response stop_reason)"
_STOP_DOC = "https://docs.anthropic.com/en/docs/build-with-claude/handling-stop-reasons"
RETRY_AFTER_S = 1
"""Seconds a served 429 asks the client to wait (the sequence model's error has no field for it)."""


class AnthropicMessages(Wire):
    name = "anthropic"
    table = MappingProxyType({
        "end_turn": Entry("stop", f"{_DOC}: 'the model reached a natural stopping point'"),
        "stop_sequence": Entry("stop", f"{_DOC}: 'one of your provided custom stop_sequences was generated'"),
        "max_tokens": Entry("length", f"{_DOC}: 'we exceeded the requested max_tokens or the model's maximum'"),
        "model_context_window_exceeded": Entry("length", f"{_STOP_DOC}: generation stopped at the context window limit"),
        "tool_use": Entry("tool_calls", f"{_DOC}: 'the model invoked one or more tools'"),
        "pause_turn": Entry("unknown", f"{_DOC}: 'we paused a long-running turn'; the client must send the response back to continue, so it is neither done nor a tool call"),
        "refusal": Entry("content_filter", f"{_DOC}: 'when streaming classifiers intervene to handle potential policy violations'"),
    })
    refusal_finish = "refusal"
    id_prefix = "msg_"
    paths = ("/v1/messages", "/messages", "/v1/messages/count_tokens", "/messages/count_tokens",
             *gateways.VERTEX_PATHS, *gateways.BEDROCK_PATHS)
    conversation_field = ("messages", (list,), True)
    max_tokens_keys = ("max_tokens",)
    detect_rank = 20  # after Responses, whose events also carry a "type"
    uri_markers = ("/v1/messages",)
    renderer = render
    reader = read
    threads = read
    importer = capture
    provider = "anthropic"
    refused_as = MappingProxyType({gateways.BEDROCK: "bedrock-converse"})  # InvokeModel's errors are Bedrock's
    default_model = "claude-sonnet-4-5"
    client_env = MappingProxyType({"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "{key}"})
    # https://docs.anthropic.com/en/api/errors (429 rate_limit_error, 500 api_error, 529 overloaded_error) and
    # https://docs.anthropic.com/en/api/rate-limits#response-headers (anthropic-ratelimit-requests-remaining)
    status_errors = MappingProxyType({
        429: StatusError("rate_limit_error", "Number of requests has exceeded your rate limit.",
                         (("anthropic-ratelimit-requests-remaining", "0"),)),
        500: StatusError("api_error", "Internal server error"),
        529: StatusError("overloaded_error", "Overloaded"),
    })
    corpus_models = (("claude-sonnet-4", 0.30), ("claude-opus-4", 0.05))

    def route(self, path: str) -> Route | None:
        if path.endswith("/count_tokens"):
            return "count"
        return "model" if path in self.paths else gateways.route(path)

    def shape(self, path: str, alt: str | None) -> Shape | None:
        return gateways.shape(path)

    def render(self, turn: Turn, ctx: Context, stream: bool) -> Rendered:
        out = super().render(turn, ctx, stream)
        return gateways.on_bedrock(out, turn) if ctx.surface == gateways.BEDROCK else out

    def count_tokens(self, size: int) -> dict[str, Any]:
        return {"input_tokens": max(1, size // 4)}

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return render.error_body(err)

    def error_headers(self, status: int) -> Mapping[str, str]:
        # a 429 says how long to wait, as the API's does: "retry-after: The number of seconds to wait until
        # you can retry the request" (https://docs.anthropic.com/en/api/rate-limits, Response headers); the
        # sequence model has no field for the wait, the bench's is RETRY_AFTER_S
        return {"retry-after": str(RETRY_AFTER_S)} if status == 429 else {}

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        kind = obj.get("type")
        return isinstance(kind, str) and kind != "error" and kind in capture.STREAM_EVENTS

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.anthropic.client import Messages  # the official client package loads only for a loop

        return Messages(client, model, prompt, tools, system)

    def loop_client(self, env: Mapping[str, str]) -> Any:
        import anthropic  # reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY itself

        return anthropic.Anthropic(timeout=30.0)


WIRE = AnthropicMessages()
