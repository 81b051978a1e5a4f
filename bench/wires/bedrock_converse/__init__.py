"""Amazon Bedrock Converse (``POST /model/{modelId}/converse`` and ``/converse-stream``, and
``/count-tokens`` answered on the side): finish table, serving, reading, importing.

The answer is rendered by :mod:`.render` (the stream in the AWS event-stream encoding of
:mod:`.eventstream`), a request read back by :mod:`.read`, a capture imported by :mod:`.capture`;
:data:`WIRE` ties them behind :class:`bench.wires.base.Wire`. The path, not the body, says whether a
request streams and which model it asks.

The finish table: the ``stopReason`` values are those of botocore's service model for
bedrock-runtime (botocore 1.44.8, ``botocore/data/bedrock-runtime/2023-09-30/service-2.json``,
shape ``StopReason``, the type of ``ConverseResponse.stopReason`` and ``MessageStopEvent.stopReason``).
Neither the model nor the API reference describes the values one by one: each entry's meaning is
read from its name, and where the name leaves a choice the entry says so.
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from bench.engine.model import TurnError
from bench.wires.base import Entry, Route, Shape, StatusError, Wire
from bench.wires.bedrock_converse import capture, eventstream, read, render

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_SRC = "botocore 1.44.8 botocore/data/bedrock-runtime/2023-09-30/service-2.json, StopReason enum (MessageStopEvent.stopReason; https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_MessageStopEvent.html)"
_STREAM = "/converse-stream"
_JSON = "/converse"
_COUNT = "/count-tokens"


class BedrockConverse(Wire):
    name = "bedrock-converse"
    table = MappingProxyType({
        "end_turn": Entry("stop", f"{_SRC}: 'end_turn', the model ended its turn"),
        "tool_use": Entry("tool_calls", f"{_SRC}: 'tool_use', the model asks for tool use (toolUse blocks)"),
        "max_tokens": Entry("length", f"{_SRC}: 'max_tokens', the output limit (inferenceConfig.maxTokens) was reached"),
        "stop_sequence": Entry("stop", f"{_SRC}: 'stop_sequence', one of inferenceConfig.stopSequences was generated"),
        "guardrail_intervened": Entry("content_filter", f"{_SRC}: 'guardrail_intervened', the request's guardrail (guardrailConfig) blocked the output"),
        "content_filtered": Entry("content_filter", f"{_SRC}: 'content_filtered', undescribed; read as the model's own content filter (not the guardrail, which has its own value)"),
        "malformed_model_output": Entry("error", f"{_SRC}: 'malformed_model_output', undescribed; the output could not be parsed, so neither done nor a call (ambiguous: a retry may succeed)"),
        "malformed_tool_use": Entry("error", f"{_SRC}: 'malformed_tool_use', undescribed; a tool use that could not be parsed, as Gemini's MALFORMED_FUNCTION_CALL (ambiguous: a retry may succeed)"),
        "model_context_window_exceeded": Entry("length", f"{_SRC}: 'model_context_window_exceeded', generation stopped at the context window limit, as Anthropic's value of the same name"),
    })
    id_prefix = "bedrock-"
    stream_media = eventstream.MEDIA
    paths = ("/model/{model_id:path}" + _JSON, "/model/{model_id:path}" + _STREAM, "/model/{model_id:path}" + _COUNT)
    conversation_field = ("messages", (list,), True)
    count_refusal_code = "ValidationException"
    detect_rank = 25
    uri_markers = (_JSON,)
    renderer = render
    reader = read
    importer = capture
    provider = "amazon-bedrock"
    default_model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
    client_env = MappingProxyType({  # AWS SDKs append their own paths to the root, signing with dummy credentials
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "{url}", "AWS_ACCESS_KEY_ID": "AKIASTOPBENCHDUMMY00",
        "AWS_SECRET_ACCESS_KEY": "{key}", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"})
    client_env_removed = ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE",
                          "AWS_SHARED_CREDENTIALS_FILE", "AWS_BEARER_TOKEN_BEDROCK")
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors,
    # named in the x-amzn-ErrorType header by error_headers. Bedrock documents no Retry-After (botocore backs
    # off on its own): the header goes out only when a fault recipe asks.
    status_errors = MappingProxyType({
        429: StatusError("ThrottlingException", "Too many requests, please wait before trying again."),
        500: StatusError("InternalServerException", "The request processing has failed because of an unknown error."),
        503: StatusError("ServiceUnavailableException", "The service isn't currently available. Try again later."),
    })

    def route(self, path: str) -> Route | None:
        return "count" if path.endswith(_COUNT) else "model"

    def count_tokens(self, size: int) -> dict[str, Any]:
        # CountTokens (POST /model/{modelId}/count-tokens, service-2.json CountTokensResponse: inputTokens,
        # required): a rough count of the body, as the other wires' token counts
        return {"inputTokens": max(1, size // 4)}

    def shape(self, path: str, alt: str | None) -> Shape | None:
        stream = path.endswith(_STREAM)
        model = path.removeprefix("/model/").removesuffix(_STREAM if stream else _JSON)
        return Shape(stream, unquote(model), sse=False)

    def http_status(self, err: TurnError) -> int:
        return render.http_status(err)

    def error_headers(self, status: int) -> Mapping[str, str]:
        return {"x-amzn-ErrorType": render.exception_name(status)}

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return render.error_body(err)

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        return read.max_tokens(body)

    def tool_choice(self, body: dict[str, Any]) -> str:
        return read.tool_choice(body)

    def offers_tools(self, body: dict[str, Any]) -> bool:
        return read.offers_tools(body)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        return len(obj) == 1 and next(iter(obj)) in capture.STREAM_EVENTS | capture.STREAM_EXCEPTIONS

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.bedrock_converse.client import Converse  # ConverseStream over an httpx.Client

        return Converse(client, model, prompt, tools, system)

    def loop_client(self, env: Mapping[str, str]) -> Any:
        from bench.wires.bedrock_converse.client import official_client

        return official_client(env)


WIRE = BedrockConverse()
