"""VCR.py and pytest-recording cassettes (YAML): one turn per model call, in order.

The cassette is loaded by the project's YAML reader (``!!binary`` bodies are decoded, gzip bodies
unpacked within a size and a ratio bound, :func:`bench.wires.capture.inflate`); each interaction's
response body is then parsed on its own, a stream event by event.
The body may be ``body.string`` (VCR), ``body`` as a plain string, or ``parsed_body``
(pydantic-ai's cassettes keep JSON bodies parsed). The request's URI decides the dialect when
it names a known endpoint; otherwise the body's shape does (or the dialect ``--format`` forces).

Interactions that are not model calls are skipped and listed in :attr:`ImportResult.skipped`: an
OAuth token exchange, an embeddings call, and an
HTTP error from a request that is not a model call (the 403 an image host gave a test that
fetched its picture must not become a model turn). A model call is a request to a known
endpoint or one whose JSON body carries a conversation (``messages``, ``contents``, ``input``,
``prompt``). A body in a stream format no importer reads (Assistants' ``thread.run.*`` events) is
skipped and counted as unknown, and the rest of the cassette is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.catalogue.yaml_read import YamlError, read_yaml
from bench.engine.model import Dialect, Turn
from bench.importers import _read
from bench.wires.capture import (
    CaptureError,
    ImportedTurn,
    ImportResult,
    UnknownFormat,
    inflate,
    obj_of,
    provider_error,
    text_of,
)
from bench.wires.registry import wire, wires

_NOT_SUPPORTED: tuple[tuple[str, str], ...] = (
    ("/token", "not a model call"),
    ("/embeddings", "an embeddings call is not a model turn"),
)
_CONVERSATION_KEYS = ("messages", "contents", "input", "prompt")  # prompt: a legacy /v1/completions request
UNKNOWN_BODY = "cassette: a body in a format no importer reads"
"""How a skipped model call whose body no importer reads is counted in :attr:`ImportResult.unknown`."""


def dialect_of_uri(uri: str) -> Dialect | None:
    """The wire a recorded request's URI calls (its ``uri_markers``), or None."""
    path = uri.split("?", 1)[0]
    return next((w.name for w in wires() if any(marker in path for marker in w.uri_markers)), None)


def _text(value: Any, shown: str, where: str) -> str | None:
    """A recorded body or header value as text; a gzip one is inflated within the bounds of
    :func:`bench.wires.capture.inflate` (a decompression bomb is refused, naming `where`)."""
    if isinstance(value, bytes):
        if value[:2] == b"\x1f\x8b":
            value = inflate(value, shown, where)
        text: str = value.decode("utf-8", errors="replace")
        return text
    return text_of(value)


def _header(headers: Any, name: str, shown: str, where: str) -> str | None:
    if not isinstance(headers, dict):
        return None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            if isinstance(value, list) and value:
                value = value[0]
            text = _text(value, shown, f"{where}.{key}")
            return text if text else None
    return None


def _request_body(request: dict[str, Any], shown: str, where: str) -> Any:
    body = request.get("parsed_body")
    if body is None:
        raw = _text(request.get("body"), shown, f"{where}.request.body")
        if raw and raw.lstrip().startswith("{"):
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                body = None
    return body


def _is_model_request(body: Any) -> bool:
    """A request whose JSON body carries a conversation or a prompt: a model call, whatever its URI."""
    return isinstance(body, dict) and any(key in body for key in _CONVERSATION_KEYS)


_LIMIT_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def _max_tokens(body: Any, dialect: Dialect) -> int | None:
    """The request's output limit (Chat, Anthropic, Responses keys; Gemini's generationConfig), else
    where the call's wire carries it (:meth:`bench.wires.base.Wire.max_tokens`)."""
    if not isinstance(body, dict):
        return None
    config = body.get("generationConfig")
    candidates = [body.get(k) for k in _LIMIT_KEYS]
    if isinstance(config, dict):
        candidates.append(config.get("maxOutputTokens"))
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    limit = wire(dialect).max_tokens(body)
    return limit if limit is not None and limit >= 1 else None


def _conversation(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    for key in _CONVERSATION_KEYS:
        value = body.get(key)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, str):
            return 1
    return None


def load(path: str, shown: str) -> Any:
    """The cassette's data, read by the project's one YAML reader. Aliases are allowed (PyYAML-based
    recorders write a repeated headers mapping as ``&id001``/``*id001``) within the reader's budget."""
    try:
        return read_yaml(Path(path), aliases=True, shown=shown)
    except YamlError as exc:
        raise CaptureError(shown, "", exc.detail) from None


def _interaction_lines(path: str) -> list[int]:
    """1-based lines where VCR's layout starts each interaction (``- request:`` at column 0)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return [n for n, line in enumerate(fh, start=1) if line.startswith("- request:")]


def import_cassette(path: str, shown: str, dialect: Dialect | None, result: ImportResult) -> None:
    """Add one turn per model call of the cassette at `path` to `result`."""
    data = load(path, shown)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CaptureError(shown, "(top level)", "not a cassette: expected a mapping with an 'interactions' list")
    starts = _interaction_lines(path)
    if len(starts) != len(data["interactions"]):
        starts = []  # not the usual layout: name interactions by index only
    for i, inter in enumerate(data["interactions"]):
        where = f"interactions[{i}]" + (f" (cassette line {starts[i]})" if starts else "")
        if not isinstance(inter, dict) or not isinstance(inter.get("request"), dict) \
                or not isinstance(inter.get("response"), dict):
            raise CaptureError(shown, where, "expected a request and a response")
        turn = _interaction(inter["request"], inter["response"], dialect, shown, where, result)
        if turn is not None:
            result.turns.append(turn)
    if not result.turns:
        raise CaptureError(shown, "(top level)", "no model call in the cassette"
                           + (f" (skipped: {'; '.join(result.skipped)})" if result.skipped else ""))


@dataclass(frozen=True, slots=True)
class _Call:
    """One interaction as the importer names it in its notes: the file, where in it, the request's
    method and URI, and the response's HTTP status."""

    shown: str
    where: str
    method: str
    uri: str
    status: int | None

    @property
    def error_status(self) -> int | None:
        """The status when it is an HTTP error (400 or more), else None."""
        return self.status if self.status is not None and self.status >= 400 else None

    def skip(self, result: ImportResult, why: str) -> None:
        """List the interaction in `result` as skipped, and why."""
        result.skipped.append(f"{self.where} {self.method} {self.uri}: {why}")


def _interaction(request: dict[str, Any], response: dict[str, Any], forced: Dialect | None, shown: str,
                 where: str, result: ImportResult) -> ImportedTurn | None:
    """The turn of one interaction's model call, or None when it is not one (listed as skipped)."""
    uri = text_of(request.get("uri")) or ""
    method = text_of(request.get("method")) or "?"
    known = dialect_of_uri(uri)
    code = obj_of(response.get("status")).get("code")
    call = _Call(shown, where, method, uri, code if isinstance(code, int) else None)
    if known is None and (why := _not_supported(uri)) is not None:
        call.skip(result, why)
        return None
    request_body = _request_body(request, shown, where)
    if known is None and not _is_model_request(request_body) and (call.error_status or forced is not None):
        what = f"HTTP {call.status} from" if call.error_status else "forced format not applied to"
        call.skip(result, f"{what} a request that is not a model call")
        return None
    turn = _answer(call, response, forced or known, request_body, result)
    if turn is not None:
        _annotate(call, turn, request_body, response.get("headers"))
    return turn


def _not_supported(uri: str) -> str | None:
    """Why a request to `uri` (of no known endpoint) is not a model call (:data:`_NOT_SUPPORTED`), or None."""
    path = uri.split("?", 1)[0]
    return next((why for marker, why in _NOT_SUPPORTED if marker in path), None)


def _answer(call: _Call, response: dict[str, Any], dialect: Dialect | None, request_body: Any,
            result: ImportResult) -> ImportedTurn | None:
    """The turn the response's body makes (``parsed_body``, else the body as text), an HTTP error's
    turn an error whatever the body says; None when no importer reads the body (skipped, counted)."""
    bwhere = f"{call.where}.response.body"
    parsed = response.get("parsed_body")
    body = response.get("body")
    text = _text(body.get("string") if isinstance(body, dict) else body, call.shown, bwhere)
    error = call.error_status
    turn: ImportedTurn | None
    try:
        if parsed is not None and not isinstance(parsed, str):
            turn = _read.whole(parsed, dialect, call.shown, f"{call.where}.response.parsed_body", result.unknown,
                               error)
        elif text is not None or isinstance(parsed, str):
            content = text if text is not None else str(parsed)
            turn = _text_answer(call, content, dialect, request_body, response, result)
        else:
            raise CaptureError(call.shown, bwhere, "the response has no body")
    except UnknownFormat as exc:
        result.unknown[UNKNOWN_BODY] += 1
        inside = exc.where.removeprefix(f"{call.where}.")
        call.skip(result, f"{inside}: {exc.problem.removesuffix(' (use --format)')}")
        return None
    if turn is not None and error is not None and turn.turn.error is None:
        turn.turn = Turn("error", None, error=provider_error(error, None, None))
    return turn


def _text_answer(call: _Call, content: str, dialect: Dialect | None, request_body: Any, response: dict[str, Any],
                 result: ImportResult) -> ImportedTurn | None:
    """The turn of a body read as text: an HTTP error's body that is not JSON is the error's message;
    a body of no known format (no dialect known or forced) is skipped, counted as unknown when its
    request is a model call (Ollama's /api/chat)."""
    error = call.error_status
    if error is not None and not content.lstrip().startswith(("{", "[")):
        message = f"{obj_of(response.get('status')).get('message') or ''} {content.strip()[:200]}".strip()
        return ImportedTurn(Turn("error", None, error=provider_error(error, None, message)), dialect or "openai-chat")
    if dialect is None and not _looks_like_model_body(content):
        if _is_model_request(request_body):
            result.unknown[UNKNOWN_BODY] += 1
        call.skip(result, "not a response of a known format")
        return None
    return _read.body(content, dialect, call.shown, f"{call.where}.response.body", result.unknown, error)


def _annotate(call: _Call, turn: ImportedTurn, request_body: Any, headers: Any) -> None:
    """Give `turn` its endpoint, date and server (from the response's headers), its request's
    conversation length and output limit, and notes that name the interaction."""
    hwhere = f"{call.where}.response.headers"
    for name, value in (("endpoint", call.uri), ("date", _header(headers, "date", call.shown, hwhere)),
                        ("server", _header(headers, "server", call.shown, hwhere))):
        if value:
            turn.meta.setdefault(name, value)
    turn.conversation = _conversation(request_body)
    turn.max_tokens = _max_tokens(request_body, turn.dialect)
    turn.notes = [f"{call.where}: {n}" for n in turn.notes]


def _looks_like_model_body(text: str) -> bool:
    head = text.lstrip()
    if head.startswith(("data:", "event:")):
        return True
    first = head.split("\n", 1)[0]
    try:
        obj = orjson.loads(first if first.rstrip().endswith("}") and "\n" in head else head)
    except orjson.JSONDecodeError:
        return False
    return _read.detect(obj) is not None or _read.is_stream_event(obj)

