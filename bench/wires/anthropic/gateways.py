"""Claude through Google's and Amazon's gateways: Vertex AI's ``rawPredict`` and Bedrock's
``InvokeModel``, each carrying the Messages conversation of this wire.

Vertex AI (the official ``anthropic`` client's ``AnthropicVertex``, anthropic-sdk-python 2.17.0
``src/anthropic/lib/vertex/_client.py`` L386-418): ``POST {base}/projects/{project}/locations/{region}
/publishers/anthropic/models/{model}:rawPredict`` (``:streamRawPredict`` when the body streams), the
base ending in ``/v1``; the model leaves the body for the path and an ``anthropic_version`` comes in
(Google's docs name ``vertex-2023-10-16``; that client sends its ``_constants.py``
``ANTHROPIC_API_VERSION``, L7; the server reads neither); a token count is
``models/count-tokens:rawPredict``. The answer is the Messages answer, a stream its server-sent events.

Bedrock (``AnthropicBedrock``, ``src/anthropic/lib/bedrock/_client.py`` L36-80): ``POST
/model/{model}/invoke``, or ``/invoke-with-response-stream`` (``stream`` leaves the body for the path),
the body the Messages request without ``model``, with an ``anthropic_version`` (AWS's docs name
``bedrock-2023-05-31``). The JSON answer is the Messages answer. The stream is not SSE: each Messages
event is the payload of an AWS event-stream ``chunk`` message, ``{"bytes": base64(event JSON)}`` (botocore 1.44.8
``bedrock-runtime/2023-09-30/service-2.json``: ``InvokeModelWithResponseStream``'s ``ResponseStream``
union, member ``chunk`` of shape ``PayloadPart``, ``bytes`` a blob; the client's decoder,
``_stream_decoder.py``, reads it back into the events), an error inside it an exception message of
that union; an error answer is Bedrock's (the exception in ``x-amzn-ErrorType``, the body
``{"message": ...}``), as on :mod:`bench.wires.bedrock_converse`. The events are encoded with that
wire's :mod:`~bench.wires.bedrock_converse.eventstream`.
"""

from __future__ import annotations

import base64
from urllib.parse import unquote

from bench.engine.model import Turn
from bench.wires.base import Rendered, Route, Shape
from bench.wires.bedrock_converse import eventstream
from bench.wires.bedrock_converse import render as bedrock

VERTEX = "vertex"
BEDROCK = "bedrock"
VERTEX_PATHS = tuple(f"{version}/projects/{{project}}/locations/{{location}}/publishers/anthropic/models/{{name:path}}"
                     for version in ("/v1", ""))
"""Vertex AI's paths, with ``/v1`` (the client's base URL ends with it) and without, as the server's other
paths work without it."""
BEDROCK_PATHS = ("/model/{model_id:path}/invoke", "/model/{model_id:path}/invoke-with-response-stream")
_RAW, _STREAM_RAW = ":rawPredict", ":streamRawPredict"
_VERTEX_MODELS = "/publishers/anthropic/models/"
_COUNT = "count-tokens"
_INVOKE, _INVOKE_STREAM = "/invoke", "/invoke-with-response-stream"


def route(path: str) -> Route | None:
    """What a gateway path is (a model call or, on Vertex, a token count); None: not a gateway path."""
    if _VERTEX_MODELS in path:
        model, _, method = path.rsplit("/", 1)[1].rpartition(":")
        if ":" + method not in (_RAW, _STREAM_RAW):
            return None
        return "count" if model == _COUNT else "model"
    return "model" if path.startswith("/model/") else None


def shape(path: str) -> Shape | None:
    """What a gateway path says (streamed or not, the model), None for the wire's own paths."""
    if _VERTEX_MODELS in path:
        model, _, method = path.rsplit("/", 1)[1].rpartition(":")
        return Shape(":" + method == _STREAM_RAW, unquote(model), True, VERTEX)
    if path.startswith("/model/"):
        stream = path.endswith(_INVOKE_STREAM)
        model = path.removeprefix("/model/").removesuffix(_INVOKE_STREAM if stream else _INVOKE)
        return Shape(stream, unquote(model), False, BEDROCK)
    return None


def on_bedrock(out: Rendered, turn: Turn) -> Rendered:
    """A Messages answer as ``InvokeModel`` sends it: an error answer in Bedrock's shape, a stream's
    events as event-stream messages; a JSON answer (whole or cut off) as it is."""
    err = turn.error
    if out.body is not None:
        if out.status < 400 or err is None:
            return out
        status = bedrock.http_status(err)
        return Rendered(status, body=bedrock.error_body(err),
                        headers={"x-amzn-ErrorType": bedrock.exception_name(status)})
    if not out.media.startswith("text/event-stream"):  # a JSON body cut off half-way
        return out
    frames = tuple(_chunk(frame, turn) for frame in out.frames)
    return Rendered(out.status, frames=frames, cut=out.cut, media=eventstream.MEDIA, settle=out.settle)


def _chunk(frame: bytes, turn: Turn) -> bytes:
    """One Messages server-sent event as an event-stream message: its data in a ``chunk``, an
    ``error`` event as the stream's exception."""
    head, _, data = frame.partition(b"data: ")
    payload = data.rstrip(b"\n")
    if head.startswith(b"event: error") and turn.error is not None:
        kind = bedrock.STREAM_EXCEPTIONS.get(bedrock.http_status(turn.error), "modelStreamErrorException")
        return eventstream.exception(kind, bedrock.error_body(turn.error))
    return eventstream.event("chunk", {"bytes": base64.b64encode(payload).decode()})

