"""Hypothesis strategies for turns and sequences, from plain to hostile, in every dialect.

Use them to fuzz your own predicate in your own tests::

    from pathlib import Path

    from hypothesis import given

    from bench import replay
    from bench.engine.discovery import load_file
    from bench.fuzz.strategies import sequences

    my_loop = load_file(Path("predicates/my_loop.py"))  # a Predicate (or Broken, with .error)

    @given(sequences())
    def test_my_loop_never_reports_success_on_a_truncated_turn(seq):
        cell = replay(seq, my_loop)
        if cell.outcome == "stopped" and cell.ok:
            assert seq.turns[cell.steps[-1].turn].finish != "length"

Every turn is consistent with the catalogue format: ``finish`` is
``dialects.canonical(dialect, finish_raw)``, or ``error`` for an error in place of a response, so
a generated sequence can be written with :func:`bench.catalogue.document.sequence_to_yaml` and loaded
back unchanged. ``hostile=True`` (the default) adds what real servers send: ``null`` versus
``""`` content, invalid and cut-off JSON arguments, duplicate and empty call ids, finish reasons
that contradict the body (``stop`` with calls, ``tool_calls`` with none), raw finish strings no
table knows, no finish at all, errors in place of responses. ``hostile=False`` gives well-behaved
turns only. :func:`long_sequences` gives very long ones; ``then=`` fixes ``repeat`` or ``end``.

Every choice lists its plainest option first, so a failing example shrinks to something a
person can read: one turn, ``finish: stop``, content ``""``, one call ``read_file`` with
arguments ``{}``, and only the hostile detail that the failure needs.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

from hypothesis import strategies as st

from bench.engine.model import (
    ERROR_KINDS,
    Action,
    Dialect,
    ErrorKind,
    Finish,
    Sequence,
    Then,
    ToolCall,
    Turn,
    TurnError,
    Usage,
)
from bench.wires.dialects import DIALECTS, TABLES, canonical
from bench.wires.registry import wire

__all__ = [
    "ALPHABET",
    "CONTENTS",
    "TOOL_NAMES",
    "UNKNOWN_RAW",
    "arguments",
    "describe",
    "dialects",
    "error_turns",
    "errors",
    "finish_raws",
    "long_sequences",
    "sequences",
    "tool_calls",
    "turns",
]

TOOL_NAMES: tuple[str, ...] = ("read_file", "write_file", "bash", "search")
"""Tool names used by the strategies (readable in a counterexample)."""

CONTENTS: tuple[str, ...] = ("", "Done.", "I'll read the file first.", "答案是 42。",
                             '<tool_call>{"name": "read_file"}</tool_call>', "   ")
"""Readable contents; plainest first. The last ones mimic a tool call left in the text, and blanks."""

UNKNOWN_RAW: tuple[str, ...] = ("tool_call", "other", "", "insufficient_system_resource", "model_length",
                                "error", "compaction", "guardrail_intervened", "MALFORMED_RESPONSE",
                                "STOP ", "Stop", "null")
"""Raw finish strings real servers sent that are in no dialect's table (or only in another one's):
mlx's singular ``tool_call``, DeepSeek's ``insufficient_system_resource``, Mistral's
``model_length``, Bedrock's ``guardrail_intervened``, and near-misses of real values."""

ALPHABET = ("ab z09 \n\t'\"\\#:{}[]-&*!|>%@`,?" "\r\x00\x85\u2028\u2029\ufeff\u00e9\u0301\u05d0"
            "\u4e2d\u6587\U0001f600")
"""Characters of generated free text: ASCII, YAML's indicators, every line break YAML 1.1 knows
(CR, NEL, LS, PS), NUL, a BOM, a combining accent, Hebrew, Chinese and an emoji. A fixed alphabet
is cheap to draw (no Unicode table to build on the first run) and still hostile to writers."""

_VALID_ARGS: tuple[str, ...] = ('{}', '{"path": "main.py"}', '{"cmd": "ls -la", "timeout": 30}',
                                '{"query": "\\\\d+ C:\\\\temp", "n": [1, 2]}', "null", "[]")
_INVALID_ARGS: tuple[str, ...] = ("", "{path: main.py}", "not json", '{"path": "main.py"}}',
                                  "{'path': 'main.py'}", '{"a": NaN}')


_CUTTABLE = st.sampled_from([a for a in _VALID_ARGS if len(a) > 2])
_CUTS = {a: st.integers(min_value=1, max_value=len(a) - 1) for a in _VALID_ARGS if len(a) > 2}
_SHAPES = st.sampled_from(("answer", "calls", "length", "content_filter"))
_ERROR_CONTENT = st.one_of(st.none(), st.sampled_from(CONTENTS))
_CALL_CONTENT = st.one_of(st.just(""), st.none(), st.sampled_from(CONTENTS[:3]))
_REASONING = st.one_of(st.none(), st.sampled_from(("", "Let me think.", "<think>unclosed")))
_USAGE = st.one_of(st.none(), st.builds(Usage, st.integers(0, 5000), st.integers(0, 4096)))
_END_TURN = st.one_of(st.none(), st.booleans())
_STEER = st.one_of(st.none(), st.just("stop, use the other file"))


@cache
def _sampled(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


@cache
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=lo, max_value=hi)


@cache
def _error_raws(dialect: Dialect) -> st.SearchStrategy[str | None]:
    return st.sampled_from((None, *_raws_for(dialect, "error")))


@cache
def dialects() -> st.SearchStrategy[Dialect]:
    """One of the dialects with a finish table (the first wire first)."""
    return st.sampled_from(DIALECTS)


@cache
def finish_raws(dialect: Dialect, *, unknown: bool = True, missing: bool = True) -> st.SearchStrategy[str | None]:
    """A raw finish string of `dialect`: any string of its table, and (hostile) strings from no
    table (``unknown``) and no finish sent at all (None, ``missing``)."""
    options: list[st.SearchStrategy[str | None]] = [st.sampled_from(tuple(TABLES[dialect]))]
    if unknown:
        options.append(st.sampled_from([s for s in UNKNOWN_RAW if s not in TABLES[dialect]]))
    if missing:
        options.append(st.none())
    return st.one_of(*options)


def _raws_for(dialect: Dialect, finish: Finish) -> tuple[str, ...]:
    return tuple(raw for raw, entry in TABLES[dialect].items() if entry.finish == finish)


@st.composite
def _cut_off(draw: st.DrawFn) -> str:
    """Valid JSON arguments cut somewhere inside (a stream that ended mid-call)."""
    full = draw(_CUTTABLE)
    cut = draw(_CUTS[full])
    return full[:cut]


@cache
def arguments(*, valid: bool = True, invalid: bool = True, cut_off: bool = True) -> st.SearchStrategy[str]:
    """A tool call's raw arguments string: valid JSON (``{}`` first), invalid JSON, or valid JSON
    cut off part-way. At least one kind must be allowed."""
    options: list[st.SearchStrategy[str]] = []
    if valid:
        options.append(st.sampled_from(_VALID_ARGS))
        options.append(st.dictionaries(st.sampled_from(("path", "cmd", "n")),
                                       st.one_of(st.integers(-5, 5), st.text(ALPHABET, max_size=8)),
                                       max_size=2).map(lambda d: json.dumps(d, ensure_ascii=False)))
    if invalid:
        options.append(st.sampled_from(_INVALID_ARGS))
    if cut_off:
        options.append(_cut_off())
    if not options:
        raise ValueError("arguments(): allow at least one of valid, invalid, cut_off")
    return st.one_of(*options)


@cache
def tool_calls(*, min_size: int = 0, max_size: int = 3,
               hostile: bool = True) -> st.SearchStrategy[tuple[ToolCall, ...]]:
    """A turn's tool calls, `min_size` to `max_size` of them. Ids are ``call_1``, ``call_2``, ...;
    hostile adds duplicate ids (the previous call's) and empty ids (Gemini's OpenAI endpoint), and
    invalid or cut-off arguments."""
    return _tool_calls(min_size, max_size, hostile)


_CALL_IDS = st.sampled_from(("fresh", "duplicate", "empty"))
_NAMES = st.sampled_from(TOOL_NAMES)


@st.composite
def _tool_calls(draw: st.DrawFn, min_size: int, max_size: int, hostile: bool) -> tuple[ToolCall, ...]:
    """A turn's tool calls. Ids are ``call_1``, ``call_2``, ...; hostile adds duplicate ids (the
    previous call's) and empty ids (Gemini's OpenAI endpoint), and invalid or cut-off arguments."""
    n = draw(_ints(min_size, max_size))
    calls: list[ToolCall] = []
    for i in range(n):
        kind = draw(_CALL_IDS) if hostile else "fresh"
        if kind == "duplicate" and calls:
            call_id = calls[-1].id
        elif kind == "empty":
            call_id = ""
        else:
            call_id = f"call_{i + 1}"
        name = draw(_NAMES)
        args = draw(arguments(invalid=hostile, cut_off=hostile))
        calls.append(ToolCall(call_id, name, args))
    return tuple(calls)


_ERROR_SHAPES: dict[ErrorKind, tuple[tuple[int | None, ...], tuple[str | None, ...], str]] = {
    "rate_limit": ((429, None), ("rate_limit_exceeded", "rate_limit_error", None), "Rate limit reached"),
    "quota": ((429, 402), ("insufficient_quota", "billing_error"), "You exceeded your current quota"),
    "overloaded": ((529, 503, 409, None), ("overloaded_error", None), "Overloaded"),
    "server_error": ((500, 502, 503, None), ("server_error", "api_error", None), "Internal server error"),
    "timeout": ((None, 408, 504), (None, "timeout_error"), "Request timed out."),
    "connection_refused": ((None,), (None,), "Connection error: [Errno 111] Connection refused"),
    "connection_reset": ((None,), (None,), "peer closed connection without sending complete message body"),
    "stream_cut": ((None,), (None,), ""),
    "stream_error": ((None, 400, 500), (None, "server_error"), "stream error"),
    "context_overflow": ((400, 413), ("context_length_exceeded", "request_too_large", None),
                         "maximum context length exceeded"),
    "invalid_request": ((400, 422), ("invalid_request_error", None), "Invalid request"),
    "authentication": ((401,), ("authentication_error", "invalid_api_key"), "Invalid API key"),
    "permission": ((403,), ("permission_error",), "Forbidden"),
    "not_found": ((404,), ("not_found_error", "model_not_found"), "The model does not exist"),
    "content_filter": ((400,), ("content_filter",), "ResponsibleAIPolicyViolation"),
    "http_status": ((418, 451), (None,), "Unexpected status"),
}
"""For each error kind: the statuses it arrives with (None: no HTTP status, e.g. inside a stream or a
broken connection), the provider codes it is recorded with, and a message (data only)."""


@st.composite
def _error(draw: st.DrawFn, kind: ErrorKind) -> TurnError:
    statuses, codes, message = _ERROR_SHAPES[kind]
    return TurnError(kind, message, draw(st.sampled_from(statuses)), draw(st.sampled_from(codes)))


@cache
def errors() -> st.SearchStrategy[TurnError]:
    """A transport or provider error in place of a response: every kind of
    :data:`~bench.engine.model.ERROR_KINDS` (shrinking towards a rate limit, the first), with a status and
    a provider code it plausibly arrives with."""
    return st.sampled_from(ERROR_KINDS).flatmap(lambda kind: _error(kind))


@st.composite
def error_turns(draw: st.DrawFn, dialect: Dialect = DIALECTS[0]) -> Turn:
    """An error received in place of a response: finish ``error``, no tool calls, maybe some text
    that arrived before the error. Its raw finish is None or one of the dialect's error strings."""
    raw = draw(_error_raws(dialect))
    content = draw(_ERROR_CONTENT)
    return Turn(finish="error", finish_raw=raw, content=content, error=draw(errors()))


@cache
def _contents(hostile: bool) -> st.SearchStrategy[str | None]:
    if not hostile:
        return st.sampled_from(CONTENTS[:4])
    return st.one_of(st.sampled_from(CONTENTS), st.none(), st.text(ALPHABET, max_size=20))


@st.composite
def _plain_turn(draw: st.DrawFn, dialect: Dialect) -> Turn:
    """A well-behaved turn: an answer (stop), tool calls with the dialect's tool finish, or an
    honest truncation or filter."""
    shape = draw(_SHAPES)
    if shape == "calls":
        calls = draw(tool_calls(min_size=1, hostile=False))
        tool_raws = _raws_for(dialect, "tool_calls") or _raws_for(dialect, "stop")
        raw = draw(_sampled(tool_raws))
        content = draw(_CALL_CONTENT)
    else:
        calls = ()
        finish: Finish = "stop" if shape == "answer" else shape  # type: ignore[assignment]
        # a wire with no string for a truncation or a filter ends the answer normally
        raw = draw(_sampled(_raws_for(dialect, finish) or _raws_for(dialect, "stop")))
        content = draw(_contents(hostile=False))
    return Turn(finish=canonical(dialect, raw), finish_raw=raw, content=content, tool_calls=calls)


@st.composite
def _hostile_turn(draw: st.DrawFn, dialect: Dialect) -> Turn:
    """Any raw finish with any body: the finish may contradict the calls, be unknown or missing."""
    raw = draw(finish_raws(dialect))
    calls = draw(tool_calls())
    content = draw(_contents(hostile=True))
    reasoning = draw(_REASONING)
    usage = draw(_USAGE)
    end_turn = draw(_END_TURN) if wire(dialect).end_turn else None
    steer = draw(_STEER) if len(calls) < 2 else None
    return Turn(finish=canonical(dialect, raw), finish_raw=raw, content=content, tool_calls=calls,
                reasoning=reasoning, usage=usage, end_turn=end_turn, steer=steer)


@cache
def turns(dialect: Dialect = DIALECTS[0], *, hostile: bool = True) -> st.SearchStrategy[Turn]:
    """One turn of `dialect`. Plain turns come first (so shrinking prefers them); hostile adds
    contradicting, unknown and missing finishes, odd calls and errors in place of responses."""
    if dialect not in TABLES:
        raise ValueError(f"unknown dialect {dialect!r}; have {', '.join(DIALECTS)}")
    if not hostile:
        return _plain_turn(dialect)
    return st.one_of(_plain_turn(dialect), _hostile_turn(dialect), error_turns(dialect))


@cache
def _then(then: Then | None) -> st.SearchStrategy[Then]:
    return st.just(then) if then is not None else st.sampled_from(("end", "repeat"))


@cache
def sequences(dialect: Dialect | None = None, *, hostile: bool = True, min_turns: int = 1,
              max_turns: int = 6, then: Then | None = None, reactive: bool = True) -> st.SearchStrategy[Sequence]:
    """A constructed sequence of `min_turns` to `max_turns` turns in one dialect (drawn when None),
    ending ``then: end`` or ``then: repeat`` (drawn when None). Its id is ``generated``.

    With `reactive` (the default) a sequence may be reactive: some turns say which turn answers a
    continue, a resend or a reminder (``Turn.after``, any index, earlier turns included). It
    shrinks to the open loop (no ``after`` at all) when the failure does not need it."""
    return _sequences(dialect, hostile, min_turns, max_turns, then, reactive)


_FOLLOW_UPS: tuple[Action, ...] = ("continue", "resend", "remind")
"""The actions a turn's ``after`` may name, in the order the catalogue stores them."""


@st.composite
def _after(draw: st.DrawFn, n_turns: int) -> tuple[tuple[Action, int], ...]:
    """One turn's ``after``: a few follow-ups, each answered by some turn of the sequence."""
    named = draw(st.dictionaries(st.sampled_from(_FOLLOW_UPS), _ints(0, n_turns - 1), max_size=3))
    return tuple((a, named[a]) for a in _FOLLOW_UPS if a in named)


@st.composite
def _sequences(draw: st.DrawFn, dialect: Dialect | None, hostile: bool, min_turns: int, max_turns: int,
               then: Then | None, reactive: bool = True) -> Sequence:
    d = draw(dialects()) if dialect is None else dialect
    ts = draw(_turn_lists(d, hostile, max(1, min_turns), max_turns))
    ending = draw(_then(then))
    if reactive and draw(st.booleans()):  # drawn last, so the open-loop part shrinks as it always did
        ts = [replace(t, after=draw(_after(len(ts)))) for t in ts]
    return _sequence(d, tuple(ts), ending)


@cache
def long_sequences(dialect: Dialect | None = None, *, hostile: bool = True, min_turns: int = 50,
                   max_turns: int = 400, then: Then | None = None) -> st.SearchStrategy[Sequence]:
    """A very long sequence: a short drawn pattern of turns repeated to a drawn length (cheap to
    draw and to shrink; past the bench's default safety cap of 200 when it is long enough)."""
    return _long_sequences(dialect, hostile, min_turns, max_turns, then)


@st.composite
def _long_sequences(draw: st.DrawFn, dialect: Dialect | None, hostile: bool, min_turns: int, max_turns: int,
                    then: Then | None) -> Sequence:
    d = draw(dialects()) if dialect is None else dialect
    pattern = draw(_turn_lists(d, hostile, 1, 3))
    n = draw(_ints(min_turns, max_turns))
    ts = tuple(pattern[i % len(pattern)] for i in range(n))
    return _sequence(d, ts, draw(_then(then)))


@cache
def _turn_lists(dialect: Dialect, hostile: bool, lo: int, hi: int) -> st.SearchStrategy[list[Turn]]:
    return st.lists(turns(dialect, hostile=hostile), min_size=lo, max_size=hi)


def _sequence(dialect: Dialect, ts: tuple[Turn, ...], then: Then) -> Sequence:
    return Sequence(id="generated", title=f"generated {dialect} sequence of {len(ts)} turn(s)",
                    kind="constructed", dialect=dialect, source="generated by bench.fuzz.strategies",
                    turns=ts, then=then)


def describe(value: Any) -> str:
    """A short readable rendering of a generated sequence (used in failure messages)."""
    if isinstance(value, Sequence):
        lines = [f"{value.dialect}, then: {value.then}, {len(value.turns)} turn(s):"]
        for i, t in enumerate(value.turns[:12]):
            lines.append(f"  turn {i}: {describe(t)}")
        if len(value.turns) > 12:
            lines.append(f"  ... {len(value.turns) - 12} more")
        return "\n".join(lines)
    if isinstance(value, Turn):
        raw = "none sent" if value.finish_raw is None else repr(value.finish_raw)
        parts = [f"finish={value.finish} (raw {raw})", f"content={value.content!r:.50}"]
        if value.tool_calls:
            parts.append("calls=[" + ", ".join(f"{c.id or '<no id>'}:{c.name}({c.arguments:.30})"
                                               for c in value.tool_calls) + "]")
        if value.error is not None:
            parts.append(f"error={value.error.kind}/{value.error.status}")
        if value.end_turn is not None:
            parts.append(f"end_turn={value.end_turn}")
        if value.steer:
            parts.append(f"steer={value.steer!r}")
        if value.after:
            parts.append("after={" + ", ".join(f"{a}: {i}" for a, i in value.after) + "}")
        return " ".join(parts)
    return repr(value)
