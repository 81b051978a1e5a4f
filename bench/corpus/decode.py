"""The corpus formats: one sequence per JSON line (the catalogue's format), or per Parquet row.

A corpus line is a catalogue sequence document (:func:`bench.sequence_io.sequence_data`) as one
JSON object, plus its ``id`` and, optionally, the ``provider`` and ``model`` that produced it::

    {"id": "s1", "dialect": "openai-chat", "provider": "openai", "model": "gpt-4o", "turns": [...]}

``title``, ``kind`` and ``source`` may be left out of a corpus line (a production trace has no
title; ``kind`` is then ``recorded``). Everything else follows the catalogue: unknown keys are
refused, a ``finish_raw`` that maps to another finish in the dialect's table is refused, an absent
``finish_raw`` is the dialect's own string for the finish.

Decoding is msgspec into typed structs (:class:`SequenceLine`, validated by msgspec in C while it
parses), then a thin conversion into the bench's frozen dataclasses. The decoder reads a block of
lines at a time with ``decode_lines``; only a block that fails is decoded again line by line, to
name the line. Every problem is one :class:`~bench.errors.UnusableInput` line naming the file,
the line (or Parquet row) and the field path.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from bench import dialects
from bench.corpus.record import Traced
from bench.errors import UnusableInput
from bench.model import (
    ERROR_KINDS,
    FINISHES,
    Dialect,
    ErrorKind,
    Finish,
    Kind,
    Requirement,
    Sequence,
    Then,
    ToolCall,
    Turn,
)
from bench.replay import fast_constructor
from bench.yaml_read import paused_gc

__all__ = ["BLOCK_BYTES", "CorpusError", "SequenceLine", "iter_json_lines", "iter_parquet", "line_records"]

BLOCK_BYTES = 1 << 22
"""Bytes read per block of a JSON-lines file (whole lines; a longer line is read whole)."""


class CorpusError(UnusableInput):
    """A corpus file the bench cannot use; ``str()`` is one line: file, line or row, field, problem."""


# ---------------------------------------------------------------- the typed structs msgspec decodes into


class _Rec(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    pass


_Count = Annotated[int, msgspec.Meta(ge=0)]
_Status = Annotated[int, msgspec.Meta(ge=100, le=599)]
_Window = Annotated[int, msgspec.Meta(ge=1)]
_FollowUp = Literal["continue", "resend", "remind"]


_TURN_FIELDS = frozenset(f.name for f in fields(Turn))
_CALL_FIELDS = frozenset(f.name for f in fields(ToolCall))
_SEQ_FIELDS = frozenset(f.name for f in fields(Sequence))
_REQ_FIELDS = frozenset(f.name for f in fields(Requirement))


class CallLine(_Rec):
    id: str
    name: str
    arguments: str = "{}"
    if "result" in _CALL_FIELDS:  # the fields the model of this version has (SPEC 4 adds these)
        result: str | None = None


class ErrorLine(_Rec):
    kind: ErrorKind
    message: str = ""
    status: _Status | None = None
    code: str | None = None
    context_window: _Window | None = None


class UsageLine(_Rec):
    input_tokens: _Count = 0
    output_tokens: _Count = 0


class TurnLine(_Rec):
    finish: Finish
    finish_raw: str | msgspec.UnsetType | None = msgspec.UNSET
    finish_detail: str | None = None
    content: str | None = None
    tool_calls: list[CallLine] = []
    reasoning: str | None = None
    error: ErrorLine | None = None
    usage: UsageLine | None = None
    end_turn: bool | None = None
    steer: str | None = None
    if "refusal" in _TURN_FIELDS:
        refusal: str | None = None
    if "after" in _TURN_FIELDS:
        after: dict[_FollowUp, int] | tuple[()] = ()


class RequireLine(_Rec):
    ok: bool | None = None
    stops_within: Annotated[int, msgspec.Meta(ge=1)] | None = None
    no_dropped_calls: bool = False
    no_truncated_runs: bool = False
    answer_after_tools: bool = False
    answer_on: list[int] | None = None
    no_malformed_runs: bool = False
    if "progress" in _REQ_FIELDS:
        progress: Annotated[int, msgspec.Meta(ge=1)] | None = None


class SequenceLine(_Rec):
    """One corpus line as msgspec decodes it (the catalogue's sequence document plus id, provider, model)."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    dialect: Dialect
    turns: Annotated[list[TurnLine], msgspec.Meta(min_length=1)]
    title: str = ""
    kind: Kind = "recorded"
    source: str = ""
    tags: list[str] = []
    then: Then = "end"
    require: RequireLine | None = None
    if "max_tokens" in _SEQ_FIELDS:
        max_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    provider: str = ""
    model: str = ""


DECODER = msgspec.json.Decoder(SequenceLine)
"""The one typed decoder of corpus lines (also the floor ``make perf`` measures against)."""

# ---------------------------------------------------------------- into the bench's model

_PROVIDER: dict[str, str] = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic",
                             "gemini": "google"}
"""The provider a dialect implies when a line does not name one."""

_CANONICAL: dict[tuple[str, str], Finish] = {(d, raw): e.finish for d, table in dialects.TABLES.items()
                                             for raw, e in table.items()}
_DEFAULT_RAW: dict[tuple[str, str], str | None] = {(d, f): dialects.default_raw(d, f) for d in dialects.DIALECTS
                                                   for f in FINISHES}
_PLAIN: dict[str, dict[Any, str]] = {d: {raw: e.finish for raw, e in table.items() if e.finish != "error"}
                                      for d, table in dialects.TABLES.items()}
"""Per dialect, raw finish string -> finish, for the turns that need no completing: a raw string given
that maps to its finish (error turns excepted: they have more to check)."""
_HAS_AFTER = "after" in _TURN_FIELDS
_NO_REQUIREMENT = Requirement()
_new_sequence = fast_constructor(Sequence)
_new_traced = fast_constructor(Traced)
_FOLLOW_UPS: tuple[_FollowUp, ...] = ("continue", "resend", "remind")
"""The order of a turn's ``after`` pairs (the catalogue's)."""
_TURNS: Any = tuple[Turn, ...]
_UNSET = msgspec.UNSET


class _Bad(Exception):
    """A field of a decoded line the model refuses: (field path, problem)."""


def to_traced(line: SequenceLine) -> Traced:
    """The bench's Sequence (with provider and model) of one decoded line; raises _Bad on a field it refuses.

    The line's turns are checked and completed in place (a missing ``finish_raw`` filled in from the
    dialect's table, ``after`` made pairs), then turned into the model's frozen dataclasses by one
    ``msgspec.convert`` call, in C: building them one ``__init__`` at a time costs more than decoding."""
    dialect = line.dialect
    n = len(line.turns)
    finish_of = _PLAIN[dialect].get
    odd = ([i for i, t in enumerate(line.turns) if finish_of(t.finish_raw) != t.finish or t.error is not None
            or t.after] if _HAS_AFTER else
           [i for i, t in enumerate(line.turns) if finish_of(t.finish_raw) != t.finish or t.error is not None])
    for i in odd:
        _complete(line.turns[i], dialect, i, n)
    try:
        turns = msgspec.convert(line.turns, _TURNS, from_attributes=True)
    except msgspec.ValidationError as exc:  # a model field this version's corpus format does not fill
        where, msg = _msgspec_problem(exc)
        raise _Bad(f"turns{where}", msg) from None
    extra: dict[str, Any] = {}
    if getattr(line, "max_tokens", None) is not None:
        extra["max_tokens"] = line.max_tokens
    seq = _new_sequence(id=line.id, title=line.title, kind=line.kind, dialect=dialect, source=line.source,
                   turns=turns, then=line.then, tags=tuple(line.tags),
                   require=_require(line.require, n) if line.require is not None else _NO_REQUIREMENT,
                   path="", **extra)
    return _new_traced(seq, line.provider or _PROVIDER[dialect], line.model)


def _complete(t: TurnLine, dialect: str, i: int, n_turns: int) -> None:
    """Check one turn against the catalogue's rules and fill in what the model needs."""
    finish = t.finish
    raw = t.finish_raw
    if raw is _UNSET:
        raw = t.finish_raw = _DEFAULT_RAW[dialect, finish]
        if raw is None and finish == "unknown":
            raise _Bad(f"turns[{i}].finish_raw", "required when finish is 'unknown' (give the raw string, or "
                       "null for none sent)")
    elif raw is not None:
        if _CANONICAL.get((dialect, raw), "unknown") != finish:
            mapped = _CANONICAL.get((dialect, raw), "unknown")
            raise _Bad(f"turns[{i}].finish_raw", f"{raw!r} maps to {mapped!r} in {dialect}, but finish says "
                       f"{finish!r}")
    elif finish != "unknown" and finish != "error":
        raise _Bad(f"turns[{i}].finish_raw", f"null (no finish sent) maps to 'unknown', but finish says {finish!r}")
    if t.error is not None:
        if finish != "error":
            raise _Bad(f"turns[{i}].finish", "a turn with an error must have finish 'error'")
    elif finish == "error" and raw is None:
        raise _Bad(f"turns[{i}].error", "required when finish is 'error' and no finish_raw is given")
    after = getattr(t, "after", ())
    if after:
        assert isinstance(after, dict)
        for name, target in after.items():
            if not 0 <= target < n_turns:
                raise _Bad(f"turns[{i}].after.{name}", f"turn {target} does not exist (the sequence has {n_turns} "
                           "turns, numbered from 0)")
        t.after = tuple((a, after[a]) for a in _FOLLOW_UPS if a in after)  # type: ignore[assignment]
    elif after == {}:
        t.after = ()


def _require(r: RequireLine, n_turns: int) -> Requirement:
    if r.answer_on is not None:
        for k in r.answer_on:
            if not 0 <= k < n_turns:
                raise _Bad("require.answer_on", f"turn {k} does not exist (the sequence has {n_turns} turns)")
        if len(set(r.answer_on)) != len(r.answer_on):
            raise _Bad("require.answer_on", "a turn is named twice")
    req: Requirement = msgspec.convert(r, Requirement, from_attributes=True)  # every field, by name
    return req


# ---------------------------------------------------------------- reading files

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


_VOCABULARIES: dict[str, tuple[str, ...]] = {
    "finish": FINISHES, "dialect": dialects.DIALECTS, "error.kind": ERROR_KINDS, "kind": ("recorded", "constructed"),
    "then": ("repeat", "end")}
"""The allowed values a refused enum value is told of, by field (as the catalogue's messages say them)."""


def _msgspec_problem(exc: msgspec.MsgspecError) -> tuple[str, str]:
    """(field path, problem) of a msgspec error: ``Expected `str`, got `int` - at `$.turns[0].finish```."""
    m = _AT.match(str(exc).replace("\n", " "))
    assert m is not None
    path = (m.group("path") or "").lstrip(".") or "(top level)"
    msg = m.group("msg")
    if msg.startswith("Object contains unknown field"):
        key = msg.split("`")[1] if "`" in msg else "?"
        path = f"{path}.{key}" if path != "(top level)" else key
        msg = "unknown key (not part of the corpus format)"
    elif msg.startswith("Invalid enum value"):
        field = path.rsplit(".", 1)[-1]
        allowed = _VOCABULARIES.get("error.kind" if path.endswith("error.kind") else field)
        got = msg.removeprefix("Invalid enum value").strip()
        if allowed:
            msg = f"expected one of {', '.join(map(repr, allowed))}, got {got}"
    elif msg.startswith("Object missing required field"):
        key = msg.split("`")[1] if "`" in msg else "?"
        path = f"{path}.{key}" if path != "(top level)" else key
        msg = "required, but missing"
    return path, msg


def line_records(data: bytes, shown: str, first_line: int) -> list[Traced]:
    """The records of a block of whole JSON lines whose first line is line `first_line` of the file."""
    with paused_gc():  # millions of new objects, none of them garbage: the collector's passes are waste
        try:
            lines = DECODER.decode_lines(data)
        except msgspec.MsgspecError:
            lines = None
        if lines is not None:
            try:
                return [to_traced(line) for line in lines]
            except _Bad:
                pass
    return list(_one_by_one(data, shown, first_line))


def _one_by_one(data: bytes, shown: str, first_line: int) -> Iterator[Traced]:
    """Decode line by line, to name the first line that fails (the slow path, taken only on an error)."""
    for n, raw in enumerate(data.split(b"\n"), start=first_line):
        if not raw.strip():
            continue
        try:
            line = DECODER.decode(raw)
        except msgspec.MsgspecError as exc:
            path, msg = _msgspec_problem(exc)
            if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
                raise CorpusError(f"{shown}: line {n}: not valid JSON: {msg}") from None
            raise CorpusError(f"{shown}: line {n}: {path}: {msg}") from None
        try:
            yield to_traced(line)
        except _Bad as bad:
            where, msg = bad.args
            raise CorpusError(f"{shown}: line {n}: {where}: {msg}") from None


def iter_json_lines(path: Path, shown: str, start: int = 0, end: int | None = None) -> Iterator[Traced]:
    """The records of the JSON lines that start in bytes [`start`, `end`) of `path`, a block at a time.

    A line belongs to the shard its first byte is in, so shards cut at any offsets cover every line
    exactly once. Memory is one block, whatever the file's size."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise CorpusError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    with fh:
        line_no = 1
        if start > 0:
            line_no += _newlines_before(fh, start - 1)
            fh.seek(start - 1)
            if fh.read(1) != b"\n":  # inside a line: it belongs to the previous shard
                rest = fh.readline()
                line_no += 1 if rest.endswith(b"\n") else 0
        pos = fh.tell()
        while end is None or pos < end:
            want = BLOCK_BYTES if end is None else min(BLOCK_BYTES, end - pos)
            block = fh.read(want)
            if not block:
                break
            if not block.endswith(b"\n"):
                block += fh.readline()  # finish the last line, even past `end`: it started before it
            pos += len(block)
            with paused_gc():  # until the block's records are used and dropped (freed by reference counts,
                # so the collector, when it runs again, finds few live objects to look at); garbage cycles a
                # predicate makes meanwhile wait for the next block
                yield from line_records(block, shown, line_no)
            gc.collect()  # the block's garbage cycles and the free lists it filled: memory stays flat
            line_no += block.count(b"\n")


def _newlines_before(fh: Any, offset: int) -> int:
    """Newlines in the first `offset` bytes (to number lines in a shard that starts inside the file)."""
    fh.seek(0)
    count, left = 0, offset
    while left > 0:
        chunk = fh.read(min(left, 1 << 22))
        if not chunk:
            break
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count


# ---------------------------------------------------------------- Parquet

_KEEP_NULL = frozenset({"finish_raw", "content"})
"""Turn fields whose null means something (no finish sent; null content): kept when a Parquet cell is null."""


def _drop_nulls(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """A Parquet row as the JSON line it stands for: null fields are fields left out."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None or k in keep}
    if isinstance(value, list):
        return [_drop_nulls(v, _KEEP_NULL) for v in value]
    return value


def iter_parquet(path: Path, shown: str, row_groups: list[int] | None = None) -> Iterator[Traced]:
    """The records of a Parquet corpus (one row per sequence, columns as the JSON line's keys, turns a
    list of structs), a batch at a time; `row_groups` restricts it to those row groups (a shard)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{shown}: not a readable Parquet file: {exc}") from None
    groups = range(pf.num_row_groups) if row_groups is None else row_groups
    row = 0
    offsets = [0]
    for g in range(pf.num_row_groups):
        offsets.append(offsets[-1] + pf.metadata.row_group(g).num_rows)
    for g in groups:
        row = offsets[g]
        for batch in pf.iter_batches(batch_size=4096, row_groups=[g]):
            for data in batch.to_pylist():
                row += 1
                cleaned = {k: (_drop_nulls(v) if k != "turns" else [_drop_nulls(t, _KEEP_NULL) for t in v or []])
                           for k, v in data.items() if v is not None}
                try:
                    line = msgspec.convert(cleaned, SequenceLine)
                    yield to_traced(line)
                except msgspec.ValidationError as exc:
                    where, msg = _msgspec_problem(exc)
                    raise CorpusError(f"{shown}: row {row}: {where}: {msg}") from None
                except _Bad as bad:
                    where, msg = bad.args
                    raise CorpusError(f"{shown}: row {row}: {where}: {msg}") from None
