"""Codex rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as sequences.

Codex (npm ``@openai/codex``; read here from 0.169.0's own files, made by driving it with the
conformance driver against the replay server: tests/importers/fixtures/codex_rollout/HOW.md) writes
one JSON object per line, ``{"timestamp", "type", "payload"}``. What this importer reads, and why:

- ``session_meta`` opens a session (``payload.id``); a second one in the same file starts the next
  sequence, so a file holding several sessions streams them one at a time.
- ``turn_context`` gives the model asked for (``payload.model``).
- ``response_item`` lines are the items of the conversation. Those the model produced are kept
  until its response ends: assistant ``message`` (its ``output_text`` parts are the content; a
  Responses ``refusal`` part does not reach the rollout: served one, Codex 0.169.0 wrote a message-less
  response, so a rollout cannot show a refusal),
  ``reasoning`` (summary texts: the reasoning), ``function_call`` and ``custom_tool_call`` (the calls,
  arguments verbatim, ``call_id`` as the id). User and developer messages and tool outputs are the
  requests' side and are skipped.
- ``token_usage_record`` (``payload.response_id``, ``payload.usage``) ends one model response: Codex
  records it when the response completed, so the items since the previous one are one turn with
  ``finish_raw: completed`` and that usage. (The rollout keeps no response status of its own; a
  completed response is the only one Codex records usage for, as the fixtures show.)
- ``event_msg`` of type ``item_completed`` with a ``UserMessage`` item is what the user typed (Codex's
  own context messages, the environment and instructions, are not such items): after the first
  response it is the ``steer`` of the turn before it (the loop receives it before its next request,
  mid-task through ``turn/steer`` or as the next task's prompt; the rollout tells the two apart by
  ``task_started``, the sequence does not). Before any response it is the prompt, not kept.
- ``event_msg`` of type ``task_complete`` with an ``error`` ends a task in failure. Codex reports a
  response that came back ``incomplete`` as "Incomplete response returned, reason: R" with
  ``codex_error_info: "other"``; that turn's ``finish_raw`` becomes ``incomplete/R`` (the Responses
  dialect's form), the only place the rollout says why the response ended. Any other error is an
  error turn in place of a response: the status from ``codex_error_info`` (``http_status_code``,
  wherever Codex nests it) and its variant name as ``code``; a provider error body Codex quotes as its
  message gives the provider's type as ``code`` and the kind from it (``context_length_exceeded``); a
  stream that broke or failed after Codex's stream retries ("stream disconnected before completion: ...")
  is ``connection_reset`` for a transport error, else ``stream_error`` (a ``response.failed`` too: the
  rollout does not keep the status). Codex's retries themselves (up to 5 for a stream, 4 for a request)
  are not in the rollout: a task that failed after them is one error turn.

The dialect is ``openai-responses`` (Codex speaks only the Responses API). Items of a response that
never completed (no usage record before Codex's next ``token_count`` event, as when Codex retried a
broken or incomplete stream) are a turn with no finish (``finish_raw: null``); if the task then failed
on an incomplete response, the last such turn gets ``incomplete/R``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.corpus.record import Traced
from bench.engine.model import ErrorKind, Sequence, ToolCall, Turn, TurnError, Usage
from bench.importers._jsonl import error_object, head_objects, objects
from bench.importers._jsonl import field as typed_field
from bench.wires import dialects
from bench.wires.capture import CaptureError, error_kind, int_of

FORMAT = "codex"
_INCOMPLETE = "Incomplete response returned, reason: "
"""Codex's own words for an incomplete response (the message of its error for one; the string at byte
offset 380,429 of the 0.169.0 linux-x64 binary), read verbatim: the only place a rollout says why a
response ended."""

_RETRIES_SPENT = "stream disconnected before completion: "
"""Codex's prefix for a response stream that failed or broke after its stream retries were spent (byte
offset 188,375 of the 0.169.0 binary); what follows is the cause: Codex's incomplete-response words, a
transport error ("Transport error: ..."), or the failed response's own error message."""
_TRANSPORT = "Transport error"

_CODEX_KINDS: dict[str, ErrorKind] = {
    "context_window_exceeded": "context_overflow",
    "usage_limit_exceeded": "quota",
    "server_overloaded": "overloaded",
    "internal_server_error": "server_error",
    "unauthorized": "authentication",
    "bad_request": "invalid_request",
    "response_stream_connection_failed": "connection_refused",
    "http_connection_failed": "connection_refused",
    "response_stream_disconnected": "connection_reset",
}
"""Codex's own error variants (``codex_error_info``, serialised in snake case) whose kind is fixed by the
variant; the others (``response_too_many_failed_attempts``...) take their kind from the HTTP status they
carry. The names are the strings of the 0.169.0 linux-x64 binary (the serde variant table near byte
offsets 1,912,164 and 2,274,917: ``context_window_exceeded``, ``usage_limit_exceeded``,
``http_connection_failed``, ``response_stream_connection_failed``, ``bad_request``,
``response_stream_disconnected``, ``response_too_many_failed_attempts``, ``server_overloaded``,
``internal_server_error``); what each means is read from its name, not from source (ambiguity said:
``http_connection_failed`` may also carry a status, which then is kept but does not change the kind)."""


def sniff(path: Path, head: bytes) -> bool:
    """A file whose first line is Codex's ``session_meta`` record."""
    del path
    objs = head_objects(head)
    return bool(objs) and objs[0].get("type") == "session_meta" and isinstance(objs[0].get("payload"), dict)


def iter_records(path: Path, shown: str) -> Iterator[Traced]:
    """The sessions of one rollout file, one :class:`Traced` at a time, in file order."""
    session: _Session | None = None
    for n, obj in objects(path, shown):
        where = f"line {n}"
        kind = typed_field(obj, "type", str, shown, where)
        if kind == "session_meta":
            payload = typed_field(obj, "payload", dict, shown, where)
            if session is not None:
                yield session.traced(shown)
            session = _Session(typed_field(payload, "id", str, shown, where, "payload.id"),
                               _str(payload.get("cli_version")), _str(payload.get("model_provider")))
            continue
        if session is None:
            raise CaptureError(shown, where, "type: a rollout starts with a session_meta line")
        if kind == "response_item":
            session.item(typed_field(obj, "payload", dict, shown, where), shown, where)
        elif kind == "token_usage_record":
            session.completed(typed_field(obj, "payload", dict, shown, where))
        elif kind == "turn_context":
            model = obj.get("payload", {}).get("model") if isinstance(obj.get("payload"), dict) else None
            if isinstance(model, str) and model:
                session.models[model] = None
        elif kind == "event_msg":
            payload = typed_field(obj, "payload", dict, shown, where)
            if payload.get("type") == "task_complete" and isinstance(payload.get("error"), dict):
                session.failed(payload["error"])
            elif payload.get("type") == "token_count" and session.pending:
                session.unfinished()
            elif payload.get("type") == "item_completed":
                item = payload.get("item")
                if isinstance(item, dict) and item.get("type") == "UserMessage":
                    session.user(item)
    if session is not None:
        yield session.traced(shown)


@dataclass(slots=True)
class _Session:
    id: str
    version: str
    provider_id: str
    turns: list[Turn] = field(default_factory=list)
    models: dict[str, None] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    pending: bool = False
    unfinished_turns: int = 0
    response_ids: list[str] = field(default_factory=list)

    def item(self, payload: dict[str, Any], shown: str, where: str) -> None:
        kind = payload.get("type")
        if kind == "message" and payload.get("role") == "assistant":
            parts = typed_field(payload, "content", list, shown, where, "payload.content")
            for part in parts:
                if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    self.texts.append(part["text"])
            self.pending = True
        elif kind == "reasoning":
            for part in payload.get("summary") or ():
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self.reasoning.append(part["text"])
            self.pending = True
        elif kind in ("function_call", "custom_tool_call"):
            call_id = typed_field(payload, "call_id", str, shown, where, "payload.call_id")
            name = typed_field(payload, "name", str, shown, where, "payload.name")
            args = payload.get("arguments" if kind == "function_call" else "input")
            if not isinstance(args, str):
                raise CaptureError(shown, where, f"payload.{'arguments' if kind == 'function_call' else 'input'}: "
                                                 "expected a string")
            self.calls.append(ToolCall(call_id, name, args))
            self.pending = True

    def user(self, item: dict[str, Any]) -> None:
        """A user's message after a response is that turn's steer (the loop gets it before its next request)."""
        text = "".join(p["text"] for p in item.get("content") or () if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
        if not self.turns or self.pending:
            return  # the task's prompt, or a message mid-response (kept for the response's turn: not modelled)
        last = self.turns[-1]
        self.turns[-1] = replace(last, steer=f"{last.steer}\n{text}" if last.steer else text)

    def completed(self, payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        rid = payload.get("response_id")
        if isinstance(rid, str):
            self.response_ids.append(rid)
        self._close("completed", Usage(int_of(usage.get("input_tokens")), int_of(usage.get("output_tokens")))
                    if isinstance(usage, dict) else None, force=True)

    def unfinished(self) -> None:
        """Items of a response that never completed (no usage record) before Codex's token count: a
        turn with no finish; Codex retried it, or a task error below says why it ended."""
        self._close(None, None)
        self.unfinished_turns += 1

    def failed(self, error: dict[str, Any]) -> None:
        message = _str(error.get("message"))
        info = error.get("codex_error_info")
        retried = message.startswith(_RETRIES_SPENT)
        detail = message[len(_RETRIES_SPENT):] if retried else message
        if detail.startswith(_INCOMPLETE):
            raw = "incomplete/" + detail[len(_INCOMPLETE):].strip()
            if self.pending:
                self._close(raw, None)
            elif self.turns and self.turns[-1].finish_raw in ("completed", None) and self.turns[-1].error is None:
                self.turns[-1] = replace(self.turns[-1], finish=dialects.canonical("openai-responses", raw),
                                         finish_raw=raw)
            return
        self._close(None, None)
        variant, status = _variant(info)
        code = variant
        kind: ErrorKind = _CODEX_KINDS.get(variant or "", error_kind(status, None))
        body = _quoted_body(detail)
        if body is not None:  # the provider's error body, quoted as Codex received it
            code = body[0] or variant
            kind = error_kind(status, body[0])
            detail = body[1] or detail
        elif retried:  # the stream broke or failed mid-response, Codex's retries were spent
            kind = "connection_reset" if detail.startswith(_TRANSPORT) else "stream_error"
        self.turns.append(Turn(finish="error", error=TurnError(kind, detail, status, code)))

    def _close(self, raw: str | None, usage: Usage | None, *, force: bool = False) -> None:
        if not (self.pending or force):
            return
        self.turns.append(Turn(
            finish=dialects.canonical("openai-responses", raw), finish_raw=raw,
            content="".join(self.texts) if self.texts else None, tool_calls=tuple(self.calls),
            reasoning="\n".join(self.reasoning) if self.reasoning else None, usage=usage))
        self.texts, self.reasoning, self.calls, self.pending = [], [], [], False

    def traced(self, shown: str) -> Traced:
        self._close(None, None)
        lines = [f"Codex session {self.id} (rollout {Path(shown).name})", "format: codex rollout (JSON lines)"]
        if self.version:
            lines.append(f"codex: {self.version}")
        if self.provider_id:
            lines.append(f"model provider: {self.provider_id}")
        if self.models:
            lines.append(f"model: {'; '.join(self.models)}")
        if self.unfinished_turns:
            lines.append(f"note: {self.unfinished_turns} response(s) ended without completing (no usage record); "
                         "the last one's cause is the task's error, the others' the rollout does not say")
        for i, rid in enumerate(self.response_ids):
            lines.append(f"response {i + 1} id: {rid}")
        lines.append("converted by: stopbench corpus (bench/importers/codex_rollout.py)")
        seq = Sequence(id=self.id, title=f"Codex session {self.id}", kind="recorded", dialect="openai-responses",
                       source="\n".join(lines) + "\n", turns=tuple(self.turns), then="end", path=shown)
        return Traced(seq, provider="openai", model=next(iter(self.models), ""))


def _variant(info: object) -> tuple[str | None, int | None]:
    """Codex's error variant name and the HTTP status nested in it, if any."""
    if isinstance(info, str):
        return info, None
    if isinstance(info, dict) and len(info) == 1:
        name, body = next(iter(info.items()))
        status = body.get("http_status_code") if isinstance(body, dict) else None
        return name, status if isinstance(status, int) and not isinstance(status, bool) else None
    return None, None


def _quoted_body(message: str) -> tuple[str | None, str] | None:
    """(the provider's error type or code, its message) when Codex's error message is the provider's JSON
    error body (``{"error": {"message", "type", "code"}}``), else None."""
    err = error_object(message)
    if err is None:
        return None
    code = next((c for c in (err.get("type"), err.get("code")) if isinstance(c, str) and c), None)
    return code, _str(err.get("message"))


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


__all__ = ["FORMAT", "iter_records", "sniff"]
