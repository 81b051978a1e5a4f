"""Gemini ``generateContent``: a response object, or the chunks of ``streamGenerateContent``.

* Candidate 0 only. ``text`` parts are joined into ``content`` (``thought: true`` parts into
  ``reasoning``); ``content`` is None when no text part came (``MAX_TOKENS`` with no parts,
  ``content: {}`` on ``SAFETY``).
* ``functionCall`` parts become tool calls with ``finishReason: STOP`` (Gemini has no tool
  finish): ``args`` as compact JSON, ``id`` when the part has one, else ``""``.
* Streamed argument pieces (``partialArgs`` with ``jsonPath`` and ``willContinue``) are set
  into the arguments object path by path; a string value with ``willContinue`` is continued by
  the next piece at the same path. A call ends at a ``functionCall`` without ``willContinue``.
* A blocked prompt has no candidates: no finish reason was sent (``finish_raw`` None, finish
  ``unknown``), and ``promptFeedback.blockReason`` with its message goes to ``finish_detail``.
* Usage: ``promptTokenCount`` in, ``candidatesTokenCount + thoughtsTokenCount`` out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Final

from bench.engine.model import Dialect, ToolCall, Turn, TurnError, Usage
from bench.wires.capture import (
    JSON,
    ImportedTurn,
    NoDoneLine,
    dumps_args,
    finish_of,
    int_of,
    obj_of,
    provider_error,
    text_of,
)
from bench.wires.gemini.render import RPC_STATUS

DIALECT: Final[Dialect] = "gemini"

_QUIET_PARTS = ("thoughtSignature", "thought", "inlineData", "fileData", "videoMetadata", "partMetadata")
_PATH_TOKEN = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def looks_like(obj: JSON) -> bool:
    return isinstance(obj, dict) and ("candidates" in obj or "promptFeedback" in obj
                                      or ("usageMetadata" in obj and "modelVersion" in obj))


def _error(obj: JSON, status: int | None, *, in_stream: bool = False) -> TurnError:
    """Google's error body (``google.rpc.Status``) as a turn's error. The kind is read from the HTTP
    status and the status name (``RESOURCE_EXHAUSTED``); the code kept is the ``ErrorInfo`` detail's
    ``reason`` (https://cloud.google.com/apis/design/errors#error_info), the provider's own word for
    the error, else the status name when it is not the one the HTTP status gives (the replay server
    derives the name from the status and echoes the code as that detail: bench/wires/gemini/render.py)."""
    e = obj_of(obj_of(obj).get("error"))
    code = e.get("code")
    if status is None and isinstance(code, int) and 100 <= code < 600:
        status = code
    name = text_of(e.get("status"))
    details = e.get("details")
    reason = next((d["reason"] for d in details if isinstance(d, dict) and isinstance(d.get("reason"), str)
                   and str(d.get("@type", "")).endswith("ErrorInfo")), None) if isinstance(details, list) else None
    err = provider_error(status, name, text_of(e.get("message")), in_stream=in_stream)
    usual = RPC_STATUS.get(status) if status is not None else None
    return replace(err, code=reason or (name if name != usual else None))


def parse_path(path: str) -> list[str | int]:
    """``$.operations[0].action`` as ``["operations", 0, "action"]``; raises ValueError if malformed."""
    if not path.startswith("$"):
        raise ValueError(f"jsonPath {path!r} does not start with '$'")
    out: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            raise ValueError(f"jsonPath {path!r}: cannot read from column {pos + 1}")
        name, index, q1, q2 = m.groups()
        out.append(int(index) if index is not None else (name or q1 or q2 or ""))
        pos = m.end()
    return out


def _set(root: dict[str, Any], path: list[str | int], value: Any, append: bool) -> None:
    node: Any = root
    for key, nxt in zip(path, [*path[1:], None], strict=True):
        if nxt is None:
            break
        child_default: Any = [] if isinstance(nxt, int) else {}
        if isinstance(key, int):
            while len(node) <= key:
                node.append(None)
            if node[key] is None:
                node[key] = child_default
            node = node[key]
        else:
            node = node.setdefault(key, child_default)
    last = path[-1] if path else None
    if last is None:
        return
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = (node[last] + value) if append and isinstance(node[last], str) else value
    else:
        old = node.get(last)
        node[last] = (old + value) if append and isinstance(old, str) else value


@dataclass(slots=True)
class _Call:
    name: str
    id: str
    args: dict[str, Any] | None = None
    raw: str | None = None
    open: bool = False
    open_strings: set[str] = field(default_factory=set)


@dataclass(slots=True)
class StreamAssembler(NoDoneLine):
    """Feed response chunks in order (a whole response is one chunk), then call :meth:`finish`."""

    unknown: Counter[str]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    finish_raw: str | None = None
    finish_message: str | None = None
    block: str | None = None
    usage: Usage | None = None
    error: TurnError | None = None
    status: int | None = None
    streamed: bool = True
    candidates_seen: bool = False

    def feed(self, obj: JSON, event_name: str | None = None) -> None:
        if not isinstance(obj, dict):
            self.unknown["gemini: chunk that is not an object"] += 1
            return
        for key, name in (("modelVersion", "model"), ("responseId", "id"), ("createTime", "created")):
            if isinstance(obj.get(key), str):
                self.meta.setdefault(name, obj[key])
        if isinstance(obj.get("error"), dict):
            self.error = _error(obj, self.status, in_stream=self.streamed and self.status is None)
            return
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict) and ("promptTokenCount" in usage or "candidatesTokenCount" in usage):
            self.usage = Usage(int_of(usage.get("promptTokenCount")),
                               int_of(usage.get("candidatesTokenCount")) + int_of(usage.get("thoughtsTokenCount")))
        feedback = obj.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            msg = text_of(feedback.get("blockReasonMessage"))
            self.block = f"promptFeedback.blockReason {feedback['blockReason']}" + (f": {msg}" if msg else "")
        cands = obj.get("candidates")
        if not isinstance(cands, list):
            return
        for cand in cands:
            if not isinstance(cand, dict):
                continue
            if cand.get("index", 0) != 0:
                self.unknown["gemini: candidates beyond the first"] += 1
                continue
            self.candidates_seen = True
            self._candidate(cand)

    def _candidate(self, cand: dict[str, JSON]) -> None:
        content = cand.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts or []:
            if isinstance(part, dict):
                self._part(part)
        if isinstance(cand.get("finishReason"), str):
            self.finish_raw = cand["finishReason"]
        if isinstance(cand.get("finishMessage"), str):
            self.finish_message = cand["finishMessage"]

    def _part(self, part: dict[str, JSON]) -> None:
        if isinstance(part.get("text"), str):
            (self.thoughts if part.get("thought") is True else self.texts).append(part["text"])
        elif isinstance(part.get("functionCall"), dict):
            self._function_call(part["functionCall"])
        elif not any(k in part for k in _QUIET_PARTS):
            kinds = ",".join(sorted(part)) or "empty"
            self.unknown[f"gemini: part '{kinds}'"] += 1

    def _function_call(self, fc: dict[str, Any]) -> None:
        last = self.calls[-1] if self.calls else None
        name = text_of(fc.get("name"))
        if name or last is None or not last.open:
            last = _Call(name or "", text_of(fc.get("id")) or "")
            self.calls.append(last)
        if "args" in fc:
            if isinstance(fc["args"], dict):
                last.args = dict(fc["args"])
            else:
                last.raw = dumps_args(fc["args"])
        for piece in fc.get("partialArgs") or []:
            self._partial(last, piece)
        last.open = fc.get("willContinue") is True

    def _partial(self, call: _Call, piece: Any) -> None:
        if not isinstance(piece, dict) or not isinstance(piece.get("jsonPath"), str):
            self.unknown["gemini: partialArgs entry without jsonPath"] += 1
            return
        path_text = piece["jsonPath"]
        path = parse_path(path_text)
        if call.args is None:
            call.args = {}
        if "stringValue" in piece:
            value: Any = text_of(piece["stringValue"]) or ""
            _set(call.args, path, value, append=path_text in call.open_strings)
            if piece.get("willContinue") is True:
                call.open_strings.add(path_text)
            else:
                call.open_strings.discard(path_text)
            return
        for key in ("numberValue", "boolValue", "nullValue", "structValue", "listValue"):
            if key in piece:
                _set(call.args, path, None if key == "nullValue" else piece[key], append=False)
                return
        self.unknown[f"gemini: partialArgs value '{','.join(sorted(piece))}'"] += 1

    def finish(self) -> ImportedTurn:
        calls = []
        for c in self.calls:
            if c.open:
                self.notes.append(f"function call {c.name!r} still had willContinue at the end of the stream")
            raw = c.raw if c.raw is not None else dumps_args(c.args if c.args is not None else {})
            calls.append(ToolCall(c.id, c.name, raw))
        detail = self.finish_message
        if not self.candidates_seen:
            detail = self.block or "no candidates"
        content = "".join(self.texts) if self.texts else None
        if self.error is not None:  # what came before the error is kept, as the server sends it before one
            return ImportedTurn(Turn("error", None, content=content, tool_calls=tuple(calls),
                                     reasoning="".join(self.thoughts) if self.thoughts else None, usage=self.usage,
                                     error=self.error), DIALECT, self.meta, notes=self.notes)
        turn = Turn(finish_of(DIALECT, self.finish_raw), self.finish_raw, content=content, tool_calls=tuple(calls),
                    reasoning="".join(self.thoughts) if self.thoughts else None, usage=self.usage,
                    finish_detail=detail)
        return ImportedTurn(turn, DIALECT, self.meta, notes=self.notes)


def from_response(obj: JSON, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
    """One whole ``generateContent`` response (or an ``{"error": ...}`` body) as a turn."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    asm = StreamAssembler(unknown, status=status, streamed=False)
    asm.feed(obj)
    return asm.finish()
