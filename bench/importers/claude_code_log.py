"""Claude Code session transcripts (``~/.claude/projects/<cwd>/<session id>.jsonl``) as sequences.

Claude Code (npm ``@anthropic-ai/claude-code``; read here from 2.1.328's own files, made by driving it
headless against the replay server: tests/importers/fixtures/claude_code/HOW.md) appends one JSON
object per line to a transcript per session. What this importer reads, and why:

- ``type: assistant`` lines are model responses. Claude Code writes **one line per content block**,
  each with the whole ``message`` envelope (same ``message.id``, ``stop_reason``, ``usage``), so
  consecutive assistant lines with one ``message.id`` are one turn: text blocks joined in order as
  the content, ``thinking`` blocks as the reasoning, ``tool_use`` blocks as the calls. A tool input
  Claude Code could not parse (a reply cut off inside the call) is kept as
  ``{"__unparsedToolInput": {"raw": ...}}``; the raw string is the call's arguments, as received.
  Otherwise the input object is written back as compact JSON (the wire's key order).
- ``type: system, subtype: api_error`` is a request that failed and that Claude Code retried: an
  error turn (``error.status``, and the provider's error type from the body it quotes as ``code``).
- an assistant line with ``isApiErrorMessage: true`` (model ``<synthetic>``) is the error Claude Code
  gave up on (``apiErrorStatus``, ``apiErrorType``): an error turn too, not a model response.
- a ``type: user`` line with ``refusedMessageId`` is the note Claude Code adds after a response that
  ended with ``stop_reason: refusal``; 2.1.328 writes no line for the refused message itself (it tells
  the model "Your response above was stopped by a safety classifier" and asks once more), so that note
  stands for it: a turn with ``finish_raw: refusal`` and no content or usage (the source says so).
- a ``type: user`` line with ``retractedMessageUuids`` follows a response Claude Code removed from the
  transcript and asks the model again. When its text is Claude Code's own "failed to produce a valid tool
  call" note the removed response was a ``tool_use`` stop without a usable call (a turn ``tool_use`` with
  no calls, as the server sent it); any other retraction is a turn with no finish. A second refusal in a
  row ends the session with a synthetic message carrying ``refusedMessageId``: a refusal turn too.
- ``isSidechain: true`` lines belong to a sub-agent's own loop; they are skipped and counted in
  the source (a sub-agent is another sequence, in its own file in newer versions).
- a ``type: user`` line whose content is what the user typed (not tool results, not ``isMeta``) after
  a response is the ``steer`` of that turn: the loop receives it before its next request. That is how a
  session continued with ``claude --continue`` (or a prompt queued while Claude Code worked) reads;
  Claude Code 2.1.328 appends a continued session to the same file under the same ``sessionId``.
- everything else (the first prompt, tool results, attachments, request shapes, queue operations,
  cost state, summaries) is not a model response and is skipped without parsing further.

One sequence per session: a new ``sessionId`` starts the next one, so a file holding several
sessions streams them one at a time. The dialect is ``anthropic`` (Claude Code speaks Messages); a
stop reason is kept verbatim as ``finish_raw``. The first ``api-request`` line's ``params.max_tokens``
(the request's cap) is the sequence's ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.corpus.record import Traced
from bench.engine.model import Sequence, ToolCall, Turn, Usage
from bench.importers._jsonl import error_object, head_objects, objects
from bench.importers._jsonl import field as typed_field
from bench.wires import dialects
from bench.wires.capture import CaptureError, dumps_args, int_of, provider_error

FORMAT = "claude-code"
_NO_VALID_CALL = "The previous response failed to produce a valid tool call. Please retry the tool call now."
"""Claude Code's words when it retracts a ``tool_use`` response without a usable call (2.1.328's binary,
byte offset 154,694,780), read verbatim: the retraction is the only trace of that response."""
_SKIPPED_NOTE = "sub-agent (isSidechain) lines skipped"


def sniff(path: Path, head: bytes) -> bool:
    """A ``.jsonl`` whose first lines carry Claude Code's ``sessionId`` with its line types."""
    del path
    for obj in head_objects(head):
        if isinstance(obj.get("sessionId"), str) and obj.get("type") in (
                "user", "assistant", "system", "queue-operation", "attachment", "summary", "last-prompt"):
            return True
    return False


def iter_records(path: Path, shown: str) -> Iterator[Traced]:
    """The sessions of one transcript, one :class:`Traced` at a time, in file order."""
    session: _Session | None = None
    for n, obj in objects(path, shown):
        where = f"line {n}"
        kind = typed_field(obj, "type", str, shown, where)
        sid = obj.get("sessionId")
        if isinstance(sid, str) and kind in ("user", "assistant", "system") and (session is None or sid != session.id):
            if session is not None:
                yield session.traced(shown)
            session = _Session(sid)
        if session is None:
            continue  # lines before the first message (none of them is a turn)
        if kind == "assistant":
            session.assistant(obj, shown, where)
        elif kind == "user":
            session.user(obj)
        elif kind == "system" and obj.get("subtype") == "api_error":
            session.api_error(obj, shown, where)
        elif kind == "api-request" and session.max_tokens is None:
            params = obj.get("params")
            if isinstance(params, dict) and isinstance(params.get("max_tokens"), int):
                session.max_tokens = params["max_tokens"]
    if session is not None:
        yield session.traced(shown)


@dataclass(slots=True)
class _Open:
    """The assistant message being assembled from its per-block lines."""

    id: str
    stop_reason: str | None
    model: str
    usage: Usage | None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)


@dataclass(slots=True)
class _Session:
    id: str
    turns: list[Turn] = field(default_factory=list)
    models: dict[str, None] = field(default_factory=dict)
    open: _Open | None = None
    max_tokens: int | None = None
    version: str = ""
    cwd: str = ""
    sidechain: int = 0
    withheld: list[str] = field(default_factory=list)
    retracted: int = 0

    def assistant(self, obj: dict[str, Any], shown: str, where: str) -> None:
        if obj.get("isSidechain") is True:
            self.sidechain += 1
            return
        self.version = self.version or _str(obj.get("version"))
        self.cwd = self.cwd or _str(obj.get("cwd"))
        msg = typed_field(obj, "message", dict, shown, where)
        if obj.get("isApiErrorMessage") is True and isinstance(obj.get("refusedMessageId"), str):
            # a second refusal in a row: Claude Code ends the session with a synthetic message naming it
            self._close()
            self.turns.append(Turn(finish=dialects.canonical("anthropic", "refusal"), finish_raw="refusal"))
            self.withheld.append(obj["refusedMessageId"])
            return
        if obj.get("isApiErrorMessage") is True:
            self._close()
            status = obj.get("apiErrorStatus")
            code = obj.get("apiErrorType")
            self.turns.append(Turn(finish="error", error=provider_error(
                status if isinstance(status, int) and not isinstance(status, bool) else None,
                code if isinstance(code, str) else None, _text_of(msg.get("content")))))
            return
        mid = typed_field(msg, "id", str, shown, where, "message.id")
        content = typed_field(msg, "content", list, shown, where, "message.content")
        if self.open is None or self.open.id != mid:
            self._close()
            stop = msg.get("stop_reason")
            if stop is not None and not isinstance(stop, str):
                raise CaptureError(shown, where, "message.stop_reason: expected a string or null")
            usage = msg.get("usage")
            self.open = _Open(mid, stop, _str(msg.get("model")), Usage(
                int_of(usage.get("input_tokens")), int_of(usage.get("output_tokens")))
                if isinstance(usage, dict) else None)
        for i, block in enumerate(content):
            self._block(block, shown, f"{where}: message.content[{i}]")

    def user(self, obj: dict[str, Any]) -> None:
        """A prompt the user typed after a response is that turn's steer (tool results are not prompts);
        Claude Code's note after a refused response stands for that response."""
        msg = obj.get("message")
        if obj.get("isSidechain") is True:
            return
        refused = obj.get("refusedMessageId")
        if isinstance(refused, str):
            self._close()
            if not (self.turns and self.turns[-1].finish_raw == "refusal"):
                # the refused message itself was withheld from the transcript: its text and usage are lost
                self.turns.append(Turn(finish=dialects.canonical("anthropic", "refusal"), finish_raw="refusal"))
                self.withheld.append(refused)
            return
        retracted = obj.get("retractedMessageUuids")
        if isinstance(retracted, list) and retracted:
            self._close()
            text = msg.get("content") if isinstance(msg, dict) else None
            if text == _NO_VALID_CALL:  # a tool_use stop without a usable tool_use block
                self.turns.append(Turn(finish=dialects.canonical("anthropic", "tool_use"), finish_raw="tool_use"))
            else:
                self.turns.append(Turn(finish="unknown", finish_raw=None))
            self.retracted += len(retracted)
            return
        if obj.get("isMeta") is True or not isinstance(msg, dict):
            return
        content = msg.get("content")
        if isinstance(content, list):
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                return
            text = _text_of(content)
        elif isinstance(content, str):
            text = content
        else:
            return
        self._close()
        if self.turns:  # before the first response it is the session's prompt, not kept
            last = self.turns[-1]
            self.turns[-1] = replace(last, steer=f"{last.steer}\n{text}" if last.steer else text)

    def _block(self, block: object, shown: str, where: str) -> None:
        assert self.open is not None
        if not isinstance(block, dict):
            raise CaptureError(shown, where, "expected an object")
        kind = block.get("type")
        if kind == "text":
            self.open.texts.append(typed_field(block, "text", str, shown, where, "text"))
        elif kind == "thinking":
            self.open.thinking.append(_str(block.get("thinking")))
        elif kind == "tool_use":
            call_id = typed_field(block, "id", str, shown, where, "id")
            name = typed_field(block, "name", str, shown, where, "name")
            data = block.get("input")
            unparsed = data.get("__unparsedToolInput") if isinstance(data, dict) else None
            if isinstance(unparsed, dict) and isinstance(unparsed.get("raw"), str):
                args = unparsed["raw"]
            else:
                args = dumps_args(data if data is not None else {})
            self.open.calls.append(ToolCall(call_id, name, args))

    def api_error(self, obj: dict[str, Any], shown: str, where: str) -> None:
        self._close()
        err = typed_field(obj, "error", dict, shown, where)
        status = err.get("status")
        message = _str(err.get("message"))
        self.turns.append(Turn(finish="error", error=provider_error(
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            _quoted_type(message), _str(err.get("formatted")) or message)))

    def _close(self) -> None:
        o, self.open = self.open, None
        if o is None:
            return
        if o.model:
            self.models[o.model] = None
        self.turns.append(Turn(
            finish=dialects.canonical("anthropic", o.stop_reason), finish_raw=o.stop_reason,
            content="".join(o.texts) if o.texts else None, tool_calls=tuple(o.calls),
            reasoning="".join(o.thinking) if o.thinking else None, usage=o.usage))

    def traced(self, shown: str) -> Traced:
        self._close()
        lines = [f"Claude Code session {self.id} (transcript {Path(shown).name})",
                 "format: claude-code transcript (JSON lines)"]
        if self.version:
            lines.append(f"claude code: {self.version}")
        if self.models:
            lines.append(f"model: {'; '.join(self.models)}")
        if self.max_tokens is not None:
            lines.append(f"request max_tokens: {self.max_tokens}")
        for mid in self.withheld:
            lines.append(f"note: message {mid} was a refusal Claude Code withheld from the transcript "
                         "(its turn has no content or usage)")
        if self.retracted:
            lines.append(f"note: {self.retracted} response(s) Claude Code retracted from the transcript "
                         "(each a turn with no content or usage)")
        if self.sidechain:
            lines.append(f"note: {self.sidechain} {_SKIPPED_NOTE}")
        lines.append("converted by: stopbench corpus (bench/importers/claude_code_log.py)")
        seq = Sequence(id=self.id, title=f"Claude Code session {self.id}", kind="recorded", dialect="anthropic",
                       source="\n".join(lines) + "\n", turns=tuple(self.turns), then="end", path=shown,
                       max_tokens=self.max_tokens)
        return Traced(seq, provider="anthropic", model=next(iter(self.models), ""))


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _text_of(content: object) -> str:
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return content if isinstance(content, str) else ""


def _quoted_type(message: str) -> str | None:
    """The provider's error type from the body Claude Code quotes after the status ("429 {...}")."""
    err = error_object(message.partition(" ")[2])
    kind = None if err is None else err.get("type")
    return kind if isinstance(kind, str) else None


__all__ = ["FORMAT", "iter_records", "sniff"]
