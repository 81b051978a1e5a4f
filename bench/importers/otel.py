"""OpenTelemetry GenAI spans (OTLP JSON) as sequences: one per conversation, or per trace.

Two file forms, both the OTLP/JSON encoding of an ``ExportTraceServiceRequest`` (or of an
``ExportLogsServiceRequest``, for the GenAI events below)
(``{"resourceSpans": [{"resource", "scopeSpans": [{"scope", "spans": [...]}]}]}``):

- JSON lines, one request per line: what the collector's file exporter writes, and what a receiver
  that keeps each OTLP/HTTP JSON body writes. Read one line at a time.
- one JSON document (an exporter's single request, pretty-printed or not). It is read whole, so its
  memory is one export batch (the SDK's BatchSpanProcessor sends at most 512 spans by default).

**Which spans are turns.** Inference spans only: ``gen_ai.operation.name`` ``chat``,
``text_completion`` or ``generate_content`` (semantic conventions 1.37+), or the older
``llm.request.type`` ``chat``/``completion`` (OpenLLMetry). Agent, tool and HTTP spans are skipped.
Two spans for one call (an instrumentation's span around the client library's own, as
``opentelemetry-instrumentation-anthropic`` and the anthropic SDK both write) are merged: spans with
the same ``gen_ai.response.id``, or one lying within the other's time span, are one turn.

**What a turn reads**, first found wins:

- finish (raw): ``anthropic.message.stop_reason`` (the anthropic SDK's own span: the provider's
  string), ``gen_ai.completion.0.finish_reason`` (OpenLLMetry's indexed attributes: the provider's
  string), ``gen_ai.response.finish_reasons[0]``, the first ``gen_ai.output.messages`` entry's
  ``finish_reason``, a ``gen_ai.choice`` span event's ``finish_reason``. Instrumentations that follow
  the semantic conventions' own vocabulary (``stop``, ``length``, ``content_filter``, ``tool_call``,
  ``error``) instead of the provider's write strings the dialect table may not have (Anthropic's
  ``tool_call``); such a string is read as that vocabulary says, the turn's ``finish_raw`` is the
  dialect's own string for it, and the source says so.
- content and calls: ``gen_ai.output.messages`` (``text``, ``reasoning`` and ``tool_call`` parts),
  else the indexed ``gen_ai.completion.0.content`` and ``gen_ai.completion.0.tool_calls.N.*``, else
  ``gen_ai.choice`` span events (``message.content``, ``message.tool_calls``). Arguments recorded as
  a string are kept verbatim; an object is written as compact JSON.
- log records (a ``resourceLogs`` request in the same file, as a collector's file exporter writes
  traces and logs): a ``gen_ai.client.inference.operation.details`` event (the conventions' one event
  per call, which instrumentations emit instead of span attributes when told to keep content out of
  spans) gives its span the attributes it lacks, output messages and finish reasons included; a
  ``gen_ai.choice`` event (semantic conventions 1.28) is read as the span event of that name. They
  join their span by ``traceId`` and ``spanId``, whether they come before it or within LAG requests after it.
- usage: ``gen_ai.usage.input_tokens``/``output_tokens`` (or ``prompt_tokens``/``completion_tokens``).
- the sequence's ``max_tokens``: the first call's ``gen_ai.request.max_tokens`` (every value seen is in
  the source: a loop that raises it after a cut-off reply shows there).
- an error: span status ``ERROR``. The HTTP status from ``http.response.status_code``, else from the
  status message the openai and anthropic SDKs give their status errors ("Error code: 429 - ..."),
  else from ``error.type`` when it is one of those SDKs' exception classes; the kind from the status
  (SPEC section 1), the status message as the error's message.

**Grouping and streaming.** A span with ``gen_ai.conversation.id`` belongs to that conversation's
sequence (id: the conversation id); one without belongs to its trace's (id: ``trace-<trace id>``).
Turns are ordered by start time. Spans arrive as they end, so a trace's sequence is complete when
its root span (no parent) has arrived; it is yielded :data:`LAG` requests (lines) after that one, so
that what another batch processor exported a little later still joins it. A conversation has no such
end: its sequence is yielded when no span of it has ended for :data:`GAP_NS` of span time (the
latest end time the file has shown so far), or at the end of the file. Memory is the open groups,
not the file. A span that arrives for a group already yielded starts a new sequence with the same
id (the source says it continues an earlier one, when it was among the last :data:`RECENT` yielded).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus.record import Traced
from bench.engine.model import Dialect, ErrorKind, Finish, Sequence, ToolCall, Turn, TurnError, Usage
from bench.importers._jsonl import head_objects
from bench.wires import dialects
from bench.wires.capture import CaptureError, dumps_args, error_kind, loads, obj_of

FORMAT = "otel"
GAP_NS = 30 * 60 * 10**9
"""A conversation with no span ending for this long (of span time) is taken as finished."""

LAG = 16
"""A trace's sequence is yielded this many requests (lines) after the one that brought its root span, so
spans and log records exported a little later (by another batch processor) still join it."""
_EVENTS = frozenset({"gen_ai.client.inference.operation.details", "gen_ai.choice"})
"""GenAI events read from log records: the current conventions' one event per call (its attributes
are the call's, output messages included) and the older per-choice event (semantic conventions 1.28)."""
RECENT = 256
"""How many yielded group keys are remembered to note a sequence that continues an earlier one (a
bounded memory: a group reappearing after more than this many others is not noted)."""

_INFERENCE_OPS = frozenset({"chat", "text_completion", "generate_content"})
_SEMCONV_FINISH: dict[str, Finish] = {"stop": "stop", "length": "length", "content_filter": "content_filter",
                                      "tool_call": "tool_calls", "tool_calls": "tool_calls", "error": "error"}
"""The semantic conventions' own finish-reason vocabulary (gen_ai.output.messages finish_reason)."""
_SDK_ERRORS: dict[str, tuple[int | None, ErrorKind]] = {
    "BadRequestError": (400, "invalid_request"), "AuthenticationError": (401, "authentication"),
    "PermissionDeniedError": (403, "permission"), "NotFoundError": (404, "not_found"),
    "ConflictError": (409, "http_status"), "UnprocessableEntityError": (422, "invalid_request"),
    "RateLimitError": (429, "rate_limit"), "InternalServerError": (500, "server_error"),
    "OverloadedError": (529, "overloaded"), "APITimeoutError": (None, "timeout"),
    "APIConnectionError": (None, "connection_refused"),
}
"""The openai and anthropic SDKs' exception classes (``error.type`` as openai-v2 records it), with the
status each is raised for (openai/_exceptions.py, anthropic/_exceptions.py)."""


def sniff(path: Path, head: bytes) -> bool:
    """An OTLP JSON trace export: one of its first objects has ``resourceSpans`` (the others, if any,
    ``resourceLogs``)."""
    del path
    objs = head_objects(head)
    if objs:
        return (all("resourceSpans" in o or "resourceLogs" in o for o in objs)
                and any("resourceSpans" in o for o in objs))
    start = head.lstrip()[:4096]
    return start.startswith(b"{") and b'"resourceSpans"' in start


def iter_records(path: Path, shown: str) -> Iterator[Traced]:
    """The sequences of one OTLP JSON file, one :class:`Traced` at a time (see the module's docstring)."""
    groups = _Groups(shown)
    try:
        with path.open("rb") as fh:
            first: bytes | None = None
            for n, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                if first is None:
                    first = raw
                    try:
                        obj = loads(raw, shown, f"line {n}")
                    except CaptureError:
                        if raw.lstrip().startswith(b"{"):  # a document spread over lines
                            yield from _whole(raw + fh.read(), shown, groups)
                            return
                        raise
                else:
                    obj = loads(raw, shown, f"line {n}")
                yield from groups.request(obj, f"line {n}")
    except OSError as exc:
        raise CaptureError(shown, "", f"cannot read: {exc.strerror or exc}") from None
    yield from groups.finish()


def _whole(data: bytes, shown: str, groups: _Groups) -> Iterator[Traced]:
    yield from groups.request(loads(data, shown, "JSON"), "JSON")
    yield from groups.finish()


# ------------------------------------------------------------------------------------------ spans


@dataclass(slots=True)
class _Span:
    trace: str
    span: str
    start: int
    end: int
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    error: bool
    status_message: str
    where: str
    root: bool


@dataclass(slots=True)
class _Group:
    key: str
    spans: list[_Span] = field(default_factory=list)
    last_end: int = 0
    service: str = ""


class _Groups:
    """The open groups of one file, the log records waiting for their span, and the rules that close groups."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.open: dict[str, _Group] = {}
        self.done: dict[str, None] = {}  # the last RECENT keys yielded (insertion-ordered), for the note
        self.latest = 0
        self.line = 0
        self.rooted: dict[str, int] = {}  # trace group -> the request number its root span came in
        self.spans: dict[str, _Span] = {}  # "trace/span id" -> span of an open group (log records join it)
        self.waiting: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}  # "trace/span id" -> early records

    def request(self, obj: object, where: str) -> Iterator[Traced]:
        if not isinstance(obj, dict):
            raise CaptureError(self.shown, where, "not a JSON object")
        self.line += 1
        ended: list[Traced] = []
        if "resourceLogs" in obj and "resourceSpans" not in obj:
            self._logs(obj["resourceLogs"], where)
        else:
            ended = self._spans(obj, where)
        closing = sorted({k for k, n in self.rooted.items() if self.line - n >= LAG}
                         | {k for k, g in self.open.items() if self.latest - g.last_end > GAP_NS})
        yield from ended
        for key in closing:
            yield self._close(key)
        if self.waiting:  # records whose span never came within LAG requests
            for sid in [sid for sid, recs in self.waiting.items() if self.line - recs[0][0] >= LAG]:
                del self.waiting[sid]

    def _spans(self, obj: dict[str, Any], where: str) -> list[Traced]:
        resource_spans = obj.get("resourceSpans")
        if not isinstance(resource_spans, list):
            raise CaptureError(self.shown, where, "resourceSpans: " + ("missing" if "resourceSpans" not in obj
                                                                       else "expected an array"))
        ended: list[Traced] = []
        for i, rs in enumerate(resource_spans):
            path = f"resourceSpans[{i}]"
            if not isinstance(rs, dict):
                raise CaptureError(self.shown, where, f"{path}: expected an object")
            resource = rs.get("resource")
            service = _attrs(resource.get("attributes"), self.shown, where, f"{path}.resource.attributes").get(
                "service.name", "") if isinstance(resource, dict) else ""
            scope_spans = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
            if not isinstance(scope_spans, list):
                raise CaptureError(self.shown, where, f"{path}.scopeSpans: expected an array")
            for j, ss in enumerate(scope_spans):
                spans = ss.get("spans", []) if isinstance(ss, dict) else None
                if not isinstance(spans, list):
                    raise CaptureError(self.shown, where, f"{path}.scopeSpans[{j}].spans: expected an array")
                for k, raw in enumerate(spans):
                    span = self._span(raw, where, f"{path}.scopeSpans[{j}].spans[{k}]")
                    self.latest = max(self.latest, span.end)
                    if span.root and f"trace-{span.trace}" in self.open:
                        self.rooted.setdefault(f"trace-{span.trace}", self.line)
                    if not _is_inference(span.attrs):
                        continue
                    conv = span.attrs.get("gen_ai.conversation.id")
                    key = conv if isinstance(conv, str) and conv else f"trace-{span.trace}"
                    group = self.open.get(key)
                    if group is not None and span.start - group.last_end > GAP_NS:
                        ended.append(self._close(key))  # the conversation went quiet, then came back
                        group = None
                    if group is None:
                        group = self.open[key] = _Group(key, service=str(service))
                    group.spans.append(span)
                    group.last_end = max(group.last_end, span.end)
                    if span.span:
                        sid = f"{span.trace}/{span.span}"
                        self.spans[sid] = span
                        for _, name, record in self.waiting.pop(sid, ()):
                            _join(span, name, record)
        return ended

    def _logs(self, resource_logs: object, where: str) -> None:
        """Log records that are GenAI events join their span (now, or when it comes within LAG requests)."""
        if not isinstance(resource_logs, list):
            raise CaptureError(self.shown, where, "resourceLogs: expected an array")
        for i, rl in enumerate(resource_logs):
            scope_logs = rl.get("scopeLogs", []) if isinstance(rl, dict) else None
            if not isinstance(scope_logs, list):
                raise CaptureError(self.shown, where, f"resourceLogs[{i}].scopeLogs: expected an array")
            for j, sl in enumerate(scope_logs):
                records = sl.get("logRecords", []) if isinstance(sl, dict) else None
                if not isinstance(records, list):
                    raise CaptureError(self.shown, where,
                                       f"resourceLogs[{i}].scopeLogs[{j}].logRecords: expected an array")
                for k, rec in enumerate(records):
                    path = f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]"
                    if not isinstance(rec, dict):
                        raise CaptureError(self.shown, where, f"{path}: expected an object")
                    attrs = _attrs(rec.get("attributes"), self.shown, where, f"{path}.attributes")
                    name = rec.get("eventName") or attrs.get("event.name")
                    span_id, trace_id = rec.get("spanId"), rec.get("traceId")
                    if name not in _EVENTS or not (isinstance(span_id, str) and span_id and isinstance(trace_id, str)):
                        continue
                    sid = f"{trace_id}/{span_id}"
                    body = _any(rec.get("body"), self.shown, where, f"{path}.body")
                    record = {**body, **attrs} if isinstance(body, dict) else attrs
                    span = self.spans.get(sid)
                    if span is not None:
                        _join(span, str(name), record)
                    else:
                        self.waiting.setdefault(sid, []).append((self.line, str(name), record))

    def finish(self) -> Iterator[Traced]:
        for key in sorted(self.open):
            yield self._close(key)

    def _close(self, key: str) -> Traced:
        group = self.open.pop(key)
        self.rooted.pop(key, None)
        for span in group.spans:
            self.spans.pop(f"{span.trace}/{span.span}", None)
        again = key in self.done
        self.done[key] = None
        if len(self.done) > RECENT:
            del self.done[next(iter(self.done))]
        return _sequence(group, self.shown, again)

    def _span(self, raw: object, where: str, path: str) -> _Span:
        shown = self.shown
        if not isinstance(raw, dict):
            raise CaptureError(shown, where, f"{path}: expected an object")
        trace = raw.get("traceId")
        if not isinstance(trace, str) or not trace:
            raise CaptureError(shown, where, f"{path}.traceId: " + ("missing" if "traceId" not in raw
                                                                   else "expected a hex string"))
        start, end = (_nanos(raw.get(k), shown, where, f"{path}.{k}") for k in ("startTimeUnixNano",
                                                                             "endTimeUnixNano"))
        attrs = _attrs(raw.get("attributes"), shown, where, f"{path}.attributes")
        events: list[tuple[str, dict[str, Any]]] = []
        for e, ev in enumerate(raw.get("events") or ()):
            if isinstance(ev, dict) and isinstance(ev.get("name"), str):
                events.append((ev["name"], _attrs(ev.get("attributes"), shown, where,
                                                  f"{path}.events[{e}].attributes")))
        status = obj_of(raw.get("status"))
        code = status.get("code")
        error = code in (2, "STATUS_CODE_ERROR")
        return _Span(trace, str(raw.get("spanId", "")), start, end, attrs, events, error,
                     str(status.get("message") or ""), where, not raw.get("parentSpanId"))


def _join(span: _Span, name: str, record: dict[str, Any]) -> None:
    """A GenAI event log record joins its span: the call's attributes fill what the span lacks, a
    choice becomes a ``gen_ai.choice`` event of the span."""
    if name == "gen_ai.choice":
        span.events.append((name, record))
        return
    for k, v in record.items():
        span.attrs.setdefault(k, v)


def _nanos(value: object, shown: str, where: str, path: str) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CaptureError(shown, where, f"{path}: " + ("missing" if value is None else "expected nanoseconds"))


def _attrs(raw: object, shown: str, where: str, path: str) -> dict[str, Any]:
    """OTLP ``[{"key", "value": AnyValue}]`` as a plain dict."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise CaptureError(shown, where, f"{path}: expected an array")
    out: dict[str, Any] = {}
    for i, kv in enumerate(raw):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise CaptureError(shown, where, f"{path}[{i}].key: missing")
        out[kv["key"]] = _any(kv.get("value"), shown, where, f"{path}[{i}].value")
    return out


def _any(value: object, shown: str, where: str, path: str) -> Any:
    """An OTLP AnyValue (int64 comes as a decimal string in OTLP JSON)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        iv = value["intValue"]
        try:
            return int(iv)
        except (TypeError, ValueError):
            raise CaptureError(shown, where, f"{path}.intValue: not an integer") from None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        arr = value["arrayValue"].get("values") or [] if isinstance(value["arrayValue"], dict) else []
        return [_any(v, shown, where, f"{path}.arrayValue.values[{i}]") for i, v in enumerate(arr)]
    if "kvlistValue" in value:
        kv = value["kvlistValue"].get("values") if isinstance(value["kvlistValue"], dict) else None
        return _attrs(kv or [], shown, where, f"{path}.kvlistValue.values")
    return None


def _is_inference(attrs: dict[str, Any]) -> bool:
    return attrs.get("gen_ai.operation.name") in _INFERENCE_OPS or attrs.get("llm.request.type") in (
        "chat", "completion")


# ------------------------------------------------------------------------------------------ turns


def _provider(attrs: dict[str, Any]) -> str:
    name = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or ""
    return str(name).lower()


def _dialect(provider: str, attrs: dict[str, Any]) -> Dialect:
    if provider == "anthropic" or (provider.startswith("aws.bedrock") and "claude" in str(
            attrs.get("gen_ai.request.model", ""))):
        return "anthropic"
    if provider in ("gcp.gemini", "gcp.vertex_ai", "gcp.gen_ai", "gemini", "vertex_ai", "google"):
        return "gemini"
    if str(attrs.get("url.path", "")).endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


def _merge(spans: list[_Span]) -> list[_Span]:
    """One span per call: a span with the same response id as an earlier one, or lying within it, is
    folded into it (its attributes fill what the earlier one lacks)."""
    out: list[_Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end, s.span)):
        rid = s.attrs.get("gen_ai.response.id")
        host = next((o for o in reversed(out)
                     if (rid and o.attrs.get("gen_ai.response.id") == rid)
                     or (o.start <= s.start and s.end <= o.end and _provider(o.attrs) == _provider(s.attrs))),
                    None)
        if host is None:
            out.append(s)
            continue
        for k, v in s.attrs.items():
            host.attrs.setdefault(k, v)
        host.events.extend(s.events)
        host.error = host.error or s.error
        host.status_message = host.status_message or s.status_message
    return out


def _sequence(group: _Group, shown: str, again: bool) -> Traced:
    spans = _merge(group.spans)
    provider = _provider(spans[0].attrs)
    dialect = _dialect(provider, spans[0].attrs)
    notes: list[str] = []
    turns = tuple(_turn(s, dialect, notes) for s in spans)
    models = list(dict.fromkeys(str(s.attrs.get("gen_ai.response.model") or s.attrs.get("gen_ai.request.model"))
                                for s in spans if s.attrs.get("gen_ai.response.model")
                                or s.attrs.get("gen_ai.request.model")))
    max_tokens = list(dict.fromkeys(s.attrs["gen_ai.request.max_tokens"] for s in spans
                                    if isinstance(s.attrs.get("gen_ai.request.max_tokens"), int)))
    what = "conversation" if not group.key.startswith("trace-") else "trace"
    lines = [f"OpenTelemetry GenAI spans, {what} {group.key.removeprefix('trace-')} ({Path(shown).name})",
             "format: otel (OTLP JSON)", f"provider: {provider or 'not recorded'}"]
    if group.service:
        lines.append(f"service: {group.service}")
    if models:
        lines.append(f"model: {'; '.join(models)}")
    if max_tokens:
        lines.append(f"request max_tokens: {'; '.join(str(m) for m in max_tokens)}")
    for i, s in enumerate(spans):
        rid = s.attrs.get("gen_ai.response.id")
        lines.append(f"turns[{i}] span: {s.span}" + (f", response id: {rid}" if rid else "") + f" ({s.where})")
    lines.extend(f"note: {n}" for n in dict.fromkeys(notes))
    if again:
        lines.append(f"note: continues an earlier sequence {group.key} of this file (a gap of more than "
                     f"{GAP_NS // 10**9} s between its spans)")
    lines.append("converted by: stopbench corpus (bench/importers/otel.py)")
    seq = Sequence(id=group.key, title=f"OpenTelemetry {provider or 'GenAI'} {what} {group.key}", kind="recorded",
                   dialect=dialect, source="\n".join(lines) + "\n", turns=turns, then="end", path=shown,
                   max_tokens=max_tokens[0] if max_tokens else None)
    return Traced(seq, provider=provider, model=models[0] if models else "")


def _turn(span: _Span, dialect: Dialect, notes: list[str]) -> Turn:
    a = span.attrs
    if span.error:
        return Turn(finish="error", error=_error(span))
    message = _output_message(a)
    choice = next((ev for name, ev in span.events if name == "gen_ai.choice"), None)
    raw = _first_str(a.get("anthropic.message.stop_reason"), a.get("gen_ai.completion.0.finish_reason"),
                     (a.get("gen_ai.response.finish_reasons") or [None])[0]
                     if isinstance(a.get("gen_ai.response.finish_reasons"), list) else None,
                     message.get("finish_reason") if message else None,
                     choice.get("finish_reason") if choice else None)
    finish = dialects.canonical(dialect, raw)
    if raw is not None and raw not in dialects.TABLES[dialect] and raw in _SEMCONV_FINISH:
        finish = _SEMCONV_FINISH[raw]
        mapped = dialects.default_raw(dialect, finish)
        notes.append(f"finish '{raw}' is the semantic conventions' word; written as {dialect}'s '{mapped}'")
        raw = mapped
    content, reasoning, calls = _body(a, message, choice)
    usage = None
    inp = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))
    out = a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))
    if isinstance(inp, int) or isinstance(out, int):
        usage = Usage(inp if isinstance(inp, int) and inp >= 0 else 0, out if isinstance(out, int) and out >= 0 else 0)
    return Turn(finish=finish, finish_raw=raw, content=content, tool_calls=calls, reasoning=reasoning, usage=usage)


def _output_message(a: dict[str, Any]) -> dict[str, Any] | None:
    value = a.get("gen_ai.output.messages")
    if isinstance(value, str):
        try:
            value = loads(value, "", "")
        except CaptureError:
            return None
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return value[0]
    return None


def _body(a: dict[str, Any], message: dict[str, Any] | None,
          choice: dict[str, Any] | None) -> tuple[str | None, str | None, tuple[ToolCall, ...]]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    if message is not None:
        for part in message.get("parts") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif kind == "reasoning" and isinstance(part.get("content"), str):
                thoughts.append(part["content"])
            elif kind == "tool_call":
                calls.append(ToolCall(str(part.get("id") or ""), str(part.get("name") or ""),
                                      dumps_args(part.get("arguments") if part.get("arguments") is not None else "")))
        return "".join(texts) if texts else None, "".join(thoughts) if thoughts else None, tuple(calls)
    if "gen_ai.completion.0.finish_reason" in a or "gen_ai.completion.0.role" in a:
        content = a.get("gen_ai.completion.0.content")
        n = 0
        while f"gen_ai.completion.0.tool_calls.{n}.name" in a:
            p = f"gen_ai.completion.0.tool_calls.{n}."
            calls.append(ToolCall(str(a.get(p + "id") or ""), str(a.get(p + "name") or ""),
                                  dumps_args(a.get(p + "arguments") if a.get(p + "arguments") is not None else "")))
            n += 1
        return (content if isinstance(content, str) else None), None, tuple(calls)
    if choice is not None:
        msg = choice.get("message")
        if isinstance(msg, str):
            try:
                msg = loads(msg, "", "")
            except CaptureError:
                msg = None
        if isinstance(msg, dict):
            for c in msg.get("tool_calls") or ():
                if isinstance(c, dict):
                    fn = obj_of(c.get("function"))
                    args = fn.get("arguments")
                    calls.append(ToolCall(str(c.get("id") or ""), str(fn.get("name") or ""),
                                          dumps_args(args if args is not None else "")))
            content = msg.get("content")
            return (content if isinstance(content, str) else None), None, tuple(calls)
    return None, None, ()


def _error(span: _Span) -> TurnError:
    a = span.attrs
    status = a.get("http.response.status_code")
    status = status if isinstance(status, int) and status >= 400 else None
    message = span.status_message
    if status is None and message.startswith("Error code: "):
        # openai/_client.py and anthropic/_client.py _make_status_error: f"Error code: {status} - {body}"
        digits = message[len("Error code: "):].split(" ", 1)[0]
        status = int(digits) if digits.isdigit() else None
    etype = a.get("error.type")
    known = _SDK_ERRORS.get(etype) if isinstance(etype, str) else None
    if status is None and known is not None:
        status, kind = known
    else:
        kind = error_kind(status, None) if status is not None else "http_status"
    return TurnError(kind, message, status, None)


def _first_str(*values: object) -> str | None:
    return next((v for v in values if isinstance(v, str) and v), None)


__all__ = ["FORMAT", "GAP_NS", "iter_records", "sniff"]
