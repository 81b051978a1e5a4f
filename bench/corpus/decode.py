"""The corpus formats: one sequence per JSON line (the catalogue's format), or per Parquet row.

A corpus line is a catalogue sequence document (:func:`bench.catalogue.document.sequence_data`) as one
JSON object, plus its ``id`` and, optionally, the ``provider`` and ``model`` that produced it::

    {"id": "s1", "dialect": "<a wire's name>", "provider": "<its provider>", "model": "<a model>", "turns": [...]}

``title``, ``kind`` and ``source`` may be left out of a corpus line (a production trace has no
title; ``kind`` is then ``recorded``), and so may ``require``. Everything else follows the
catalogue, by construction: the typed structs msgspec decodes into are *derived* from the
catalogue's schema (the pydantic models of :mod:`bench.catalogue.load`: the same fields, types, bounds
and defaults), and what a schema cannot say (a ``finish_raw`` that must map to the finish in the
dialect's table, an absent ``finish_raw`` being the dialect's own string, an error only with
finish ``error``, ``after`` and ``answer_on`` naming turns that exist) is checked by the
catalogue's own functions. There is one validator; this module only decodes fast.

Decoding is msgspec into the derived structs (:data:`SequenceLine`, validated by msgspec in C while
it parses), then a thin conversion into the bench's frozen dataclasses. The decoder reads a block of
lines at a time with ``decode_lines``; only a block that fails is decoded again line by line, to
name the line. Every problem is one :class:`~bench.errors.UnusableInput` line naming the file,
the line (or Parquet row) and the field path.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeAlias, Union, get_args, get_origin

import annotated_types
import msgspec
from pydantic import BaseModel

from bench.catalogue import load as catalogue
from bench.catalogue.load import SequenceError, after_pairs, after_targets_exist, answer_turns, finish_raw_of
from bench.catalogue.yaml_read import paused_gc
from bench.corpus.record import Traced
from bench.engine.construct import fast_constructor
from bench.engine.model import (
    ERROR_KINDS,
    FINISHES,
    Dialect,
    Kind,
    Requirement,
    Sequence,
    Turn,
)
from bench.errors import UnusableInput
from bench.wires import dialects
from bench.wires.capture import MAX_RATIO, RATIO_FLOOR
from bench.wires.registry import wires

__all__ = ["BLOCK_BYTES", "CorpusError", "SequenceLine", "iter_json_lines", "iter_parquet", "line_records"]

BLOCK_BYTES = 1 << 22
"""Bytes read per block of a JSON-lines file (whole lines; a longer line is read whole)."""


class CorpusError(UnusableInput):
    """A corpus file the bench cannot use; ``str()`` is one line: file, line or row, field, problem."""


# ---------------------------------------------------------------- the typed structs, derived from the catalogue's


_BOUNDS: dict[type, str] = {annotated_types.Ge: "ge", annotated_types.Le: "le", annotated_types.Gt: "gt",
                             annotated_types.Lt: "lt", annotated_types.MinLen: "min_length",
                             annotated_types.MaxLen: "max_length"}
"""pydantic's field bounds (annotated_types objects in FieldInfo.metadata) and msgspec.Meta's name for each
(the same as the bound's attribute)."""


def _typed(tp: Any, structs: dict[type[BaseModel], Any]) -> Any:
    """A catalogue annotation with every nested model replaced by its struct."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return structs[tp]
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        return Union[tuple(_typed(a, structs) for a in args)]  # noqa: UP007 (built from a tuple)
    if origin is list:
        return list[_typed(args[0], structs)]  # type: ignore[misc]
    if origin is dict:
        return dict[_typed(args[0], structs), _typed(args[1], structs)]  # type: ignore[misc]
    return tp


def _bounded(tp: Any, metadata: list[Any]) -> Any:
    """`tp` with the field's bounds (pydantic's ``Field(ge=..., min_length=...)``) as msgspec Meta,
    put on the non-null member of an optional type (msgspec checks a bound on a value, not on null)."""
    bounds = {_BOUNDS[type(m)]: getattr(m, _BOUNDS[type(m)]) for m in metadata if type(m) in _BOUNDS}
    if not bounds:
        return tp
    args = get_args(tp)
    if get_origin(tp) in (Union, UnionType) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return Annotated[inner, msgspec.Meta(**bounds)] | None
    return Annotated[tp, msgspec.Meta(**bounds)]


def _struct(model: type[BaseModel], name: str, structs: dict[type[BaseModel], Any],
            overrides: dict[str, tuple[Any, Any]] | None = None,
            extra: dict[str, tuple[Any, Any]] | None = None) -> Any:
    """The msgspec struct of one catalogue model: unknown fields refused, no GC tracking (the decoded
    records hold no cycles). `overrides` and `extra` give (type, default) for what the corpus line
    says otherwise or adds (msgspec.NODEFAULT: required)."""
    fields_: list[tuple[str, Any, Any]] = []
    for fname, info in model.model_fields.items():
        if overrides and fname in overrides:
            fields_.append((fname, *overrides[fname]))
            continue
        tp = _bounded(_typed(info.annotation, structs), info.metadata)
        default = msgspec.NODEFAULT if info.is_required() else info.default
        fields_.append((fname, tp, default))
    fields_ += [(k, *v) for k, v in (extra or {}).items()]
    struct = msgspec.defstruct(name, fields_, kw_only=True, forbid_unknown_fields=True, gc=False,
                               module=__name__)
    structs[model] = struct
    return struct


_NO_AFTER: tuple[()] = ()
"""A turn line's ``after`` when the line has none: what the model holds, so such a turn needs no completing."""


def _derive() -> Any:
    """The corpus line's struct and those it nests, from the catalogue's models (see the module's docstring).

    What the corpus line says otherwise: ``finish_raw`` absent is told from null by msgspec's UNSET
    (pydantic's ``model_fields_set``); ``after`` absent is the empty tuple the model holds; title,
    kind, source and require may be left out; id, provider and model are added."""
    structs: dict[type[BaseModel], Any] = {}
    _struct(catalogue.ToolCallIn, "CallLine", structs)
    _struct(catalogue.ErrorIn, "ErrorLine", structs)
    _struct(catalogue.UsageIn, "UsageLine", structs)
    _struct(catalogue.TurnIn, "TurnLine", structs, overrides={
        "finish_raw": (str | msgspec.UnsetType | None, msgspec.UNSET),
        "after": (dict[str, int] | tuple[()] | None, _NO_AFTER)})
    _struct(catalogue.RequireIn, "RequireLine", structs)
    return _struct(catalogue.SequenceIn, "SequenceLine", structs, overrides={
        "title": (str, ""), "kind": (Kind, "recorded"), "source": (str, ""),
        "require": (structs[catalogue.RequireIn] | None, None)},
        extra={"id": (Annotated[str, msgspec.Meta(min_length=1)], msgspec.NODEFAULT), "provider": (str, ""),
               "model": (str, "")})


SequenceLine = _derive()
"""One corpus line as msgspec decodes it (the catalogue's sequence document plus id, provider, model)."""
TurnLine: TypeAlias = Any
"""A turn line (a struct made at import: its attributes are the catalogue's TurnIn fields)."""
RequireLine: TypeAlias = Any

DECODER = msgspec.json.Decoder(SequenceLine)
"""The one typed decoder of corpus lines (also the floor ``make perf`` measures against)."""

# ---------------------------------------------------------------- into the bench's model

_PROVIDER: dict[str, str] = {w.name: w.provider or w.name for w in wires()}
"""The provider a dialect implies when a line does not name one (:attr:`bench.wires.base.Wire.provider`)."""

_PLAIN: dict[str, dict[Any, str]] = {d: {raw: e.finish for raw, e in table.items() if e.finish != "error"}
                                      for d, table in dialects.TABLES.items()}
"""Per dialect, raw finish string -> finish, for the turns that need no completing: a raw string given
that maps to its finish (error turns excepted: they have more to check)."""
_NO_REQUIREMENT = Requirement()
_new_sequence = fast_constructor(Sequence)
_new_traced = fast_constructor(Traced)
_TURNS: Any = tuple[Turn, ...]
_UNSET = msgspec.UNSET


def to_traced(line: Any) -> Traced:
    """The bench's Sequence (with provider and model) of one decoded line; raises SequenceError (field
    path and problem, as the catalogue says them) on a field it refuses.

    The line's turns are checked and completed in place (a missing ``finish_raw`` filled in from the
    dialect's table, ``after`` made pairs), then turned into the model's frozen dataclasses by one
    ``msgspec.convert`` call, in C: building them one ``__init__`` at a time costs more than decoding."""
    dialect = line.dialect
    n = len(line.turns)
    finish_of = _PLAIN[dialect].get
    # a turn whose raw string is given and maps to its finish, with no error and no after, passes
    # every check of finish_raw_of and needs nothing filled in: the rest are checked and completed
    odd = [i for i, t in enumerate(line.turns)
           if finish_of(t.finish_raw) != t.finish or t.error is not None or t.after is not _NO_AFTER]
    for i in odd:
        _complete(line.turns[i], dialect, i, n)
    try:
        turns = msgspec.convert(line.turns, _TURNS, from_attributes=True)
    except msgspec.ValidationError as exc:  # a model field this version's corpus format does not fill
        where, msg = _msgspec_problem(exc)
        raise SequenceError(f"turns{where}: {msg}") from None
    extra: dict[str, Any] = {}
    if getattr(line, "max_tokens", None) is not None:
        extra["max_tokens"] = line.max_tokens
    seq = _new_sequence(id=line.id, title=line.title, kind=line.kind, dialect=dialect, source=line.source,
                   turns=turns, then=line.then, tags=tuple(line.tags),
                   require=_require(line.require, n) if line.require is not None else _NO_REQUIREMENT,
                   path="", **extra)
    return _new_traced(seq, line.provider or _PROVIDER[dialect], line.model)


def _complete(t: TurnLine, dialect: Dialect, i: int, n_turns: int) -> None:
    """Check one turn with the catalogue's rules and fill in what the model needs."""
    where = f"turns[{i}]"
    given = t.finish_raw is not _UNSET
    t.finish_raw = finish_raw_of(dialect, t.finish, t.finish_raw if given else None, given, t.error is not None,
                                 where)
    if t.after is not _NO_AFTER:
        t.after = after_pairs(t.after, where)
        after_targets_exist(t.after, i, n_turns)


def _require(r: RequireLine, n_turns: int) -> Requirement:
    answer_turns(r.answer_on, n_turns)
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
        except (msgspec.MsgspecError, RecursionError):
            lines = None
        if lines is not None:
            try:
                return [to_traced(line) for line in lines]
            except SequenceError:
                pass
    return list(_one_by_one(data, shown, first_line))


def _one_by_one(data: bytes, shown: str, first_line: int) -> Iterator[Traced]:
    """Decode line by line, to name the first line that fails (the slow path, taken only on an error)."""
    for n, raw in enumerate(data.split(b"\n"), start=first_line):
        if not raw.strip():
            continue
        try:
            line = DECODER.decode(raw)
        except RecursionError:
            raise CorpusError(f"{shown}: line {n}: not valid JSON: nested too deeply") from None
        except msgspec.MsgspecError as exc:
            path, msg = _msgspec_problem(exc)
            if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
                raise CorpusError(f"{shown}: line {n}: not valid JSON: {msg}") from None
            raise CorpusError(f"{shown}: line {n}: {path}: {msg}") from None
        try:
            yield to_traced(line)
        except SequenceError as bad:
            raise CorpusError(f"{shown}: line {n}: {bad}") from None


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


PARQUET_BATCH = 256
"""Rows decoded at a time (each a sequence)."""


def _decoded_bytes(array: Any) -> int:
    """Bytes `array` holds once every value is written out: a dictionary array's values counted once per
    row that uses them (computed on the lengths, without making the strings), other arrays as they are."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        if pa.types.is_string(values.type) or pa.types.is_binary(values.type) \
                or pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type):
            lengths = pc.take(pc.binary_length(values), array.indices)
            return int(pc.sum(lengths).as_py() or 0) + int(array.indices.nbytes)
        return int(values.nbytes * max(len(array), 1) // max(len(values), 1)) + int(array.indices.nbytes)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return int(array.offsets.nbytes) + _decoded_bytes(array.flatten())
    if pa.types.is_struct(kind):
        return sum(_decoded_bytes(child) for child in array.flatten())
    return int(array.nbytes)


def iter_parquet(path: Path, shown: str, row_groups: list[int] | None = None) -> Iterator[Traced]:
    """The records of a Parquet corpus (one row per sequence, columns as the JSON line's keys, turns a
    list of structs), a batch at a time; `row_groups` restricts it to those row groups (a shard)."""
    import pyarrow as pa
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
        meta = pf.metadata.row_group(g)
        packed = sum(meta.column(c).total_compressed_size for c in range(meta.num_columns))
        bound = max(RATIO_FLOOR, MAX_RATIO * packed)
        unpacked = sum(meta.column(c).total_uncompressed_size for c in range(meta.num_columns))
        if unpacked > bound:
            raise CorpusError(f"{shown}: row group {g + 1}: its pages inflate to {unpacked:,} bytes, past {MAX_RATIO} "
                              f"times their {packed:,} compressed bytes, the bound on what stopbench unpacks")
        decoded = 0
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH, row_groups=[g]):
            decoded += sum(_decoded_bytes(column) for column in batch.columns)
            if decoded > bound:  # a dictionary column's rows repeat its values: counted before they are made
                raise CorpusError(f"{shown}: row group {g + 1}: its rows inflate past {bound:,} bytes, {MAX_RATIO} "
                                  f"times their {packed:,} compressed bytes, the bound on what stopbench unpacks")
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
                except SequenceError as bad:
                    raise CorpusError(f"{shown}: row {row}: {bad}") from None
