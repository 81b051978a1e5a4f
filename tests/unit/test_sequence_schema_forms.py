"""The sequence format is stated three times: the file schema (pydantic models in bench.catalogue.load),
the in-memory model (frozen dataclasses in bench.engine.model) and the corpus line (msgspec structs,
derived from the file schema in bench.corpus.decode). These tests fail when the forms disagree on a
field's name, type or default, except where a difference is the point (listed with why)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
import pytest
from pydantic import BaseModel

from bench.catalogue import load
from bench.corpus import decode
from bench.engine import model

PAIRS: tuple[tuple[type[BaseModel], type], ...] = (
    (load.ToolCallIn, model.ToolCall), (load.ErrorIn, model.TurnError), (load.UsageIn, model.Usage),
    (load.TurnIn, model.Turn), (load.RequireIn, model.Requirement), (load.SequenceIn, model.Sequence))
"""Each file-schema model and the model type it is validated into."""

STRUCTS = {"CallLine": "ToolCall", "ErrorLine": "TurnError", "UsageLine": "Usage", "TurnLine": "Turn",
           "RequireLine": "Requirement", "SequenceLine": "Sequence"}
"""The corpus line's structs (bench.corpus.decode) by the model type each stands for."""

ONLY_IN_MEMORY = {("Sequence", "id"): "the file's name (its stem), not a key in it",
                  ("Sequence", "path"): "where the file was read from"}
"""Model fields the file does not hold, and why."""

DIFFERENT_TYPE = {("Turn", "after"): "the file writes a mapping of action to turn; the model keeps (action, turn) "
                                     "pairs in the order actions are tried (bench.catalogue.load.after_pairs)"}
"""Fields whose file type is not the model type, and why."""


def shape(tp: Any) -> Any:
    """A type as a comparable shape: a file model as the model type it becomes, a list as a tuple of any
    length, a union as the set of its members, bounds (Annotated) and msgspec's UNSET left out."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return dict(PAIRS)[tp].__name__
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return STRUCTS[tp.__name__]
    origin, args = get_origin(tp), get_args(tp)
    if origin is typing.Annotated:
        return shape(args[0])
    if origin in (Union, types.UnionType):
        return frozenset(shape(a) for a in args if a is not msgspec.UnsetType)
    if origin is list or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return ("sequence of", shape(args[0]))
    if origin is Literal:
        return ("one of", frozenset(args))
    if dataclasses.is_dataclass(tp):
        return tp.__name__
    return tp


def plain(value: Any) -> Any:
    """A default as comparable data (a list as a tuple, a model or dataclass as its fields)."""
    if isinstance(value, BaseModel):
        return {k: plain(v) for k, v in value.model_dump().items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return tuple(plain(v) for v in value)
    return value


def file_fields(schema: type[BaseModel]) -> dict[str, tuple[Any, Any]]:
    """name -> (shape, default or REQUIRED) of a file-schema model."""
    return {name: (shape(info.annotation), "REQUIRED" if info.is_required() else plain(info.default))
            for name, info in schema.model_fields.items()}


def model_fields(cls: type) -> dict[str, tuple[Any, Any]]:
    """name -> (shape, default or REQUIRED) of a model dataclass."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[Any, Any]] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default: Any = plain(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = plain(f.default_factory())
        else:
            default = "REQUIRED"
        out[f.name] = (shape(hints[f.name]), default)
    return out


def disagreements(schema: type[BaseModel], cls: type) -> list[str]:
    """Each field on which a file-schema model and its model type disagree, in words."""
    mine, theirs = file_fields(schema), model_fields(cls)
    out = [f"{cls.__name__}.{n}: not in the file schema {schema.__name__}" for n in theirs
           if n not in mine and (cls.__name__, n) not in ONLY_IN_MEMORY]
    out += [f"{schema.__name__}.{n}: not a field of {cls.__name__}" for n in mine if n not in theirs]
    for name in mine.keys() & theirs.keys():
        (ftype, fdefault), (mtype, mdefault) = mine[name], theirs[name]
        if ftype != mtype and (cls.__name__, name) not in DIFFERENT_TYPE:
            out.append(f"{cls.__name__}.{name}: {ftype} in the file, {mtype} in the model")
        if fdefault != mdefault and (cls.__name__, name) not in DIFFERENT_TYPE:
            out.append(f"{cls.__name__}.{name}: default {fdefault!r} in the file, {mdefault!r} in the model")
    return sorted(out)


@pytest.mark.parametrize(("schema", "cls"), PAIRS, ids=[c.__name__ for _, c in PAIRS])
def test_the_file_schema_and_the_model_agree_on_every_field(schema: type[BaseModel], cls: type) -> None:
    assert disagreements(schema, cls) == []


def test_a_field_the_model_gains_or_a_changed_default_is_a_disagreement() -> None:
    @dataclasses.dataclass(frozen=True)
    class ToolCall:  # the model's ToolCall with `arguments` defaulting otherwise and a field the file lacks
        id: str
        name: str
        arguments: str = "[]"
        result: str | None = None
        index: int = 0

    class Wider(load.ToolCallIn):
        id: int  # type: ignore[assignment]

    assert disagreements(load.ToolCallIn, ToolCall) == [
        "ToolCall.arguments: default '{}' in the file, '[]' in the model",
        "ToolCall.index: not in the file schema ToolCallIn"]
    assert disagreements(Wider, model.ToolCall) == [f"ToolCall.id: {int} in the file, {str} in the model"]


def test_the_corpus_line_is_the_file_schema_plus_what_a_corpus_line_adds() -> None:
    line = {f.name: f for f in msgspec.structs.fields(decode.SequenceLine)}
    assert line.keys() == load.SequenceIn.model_fields.keys() | {"id", "provider", "model"}
    turns = line["turns"].type
    turn_struct = get_args(get_args(turns)[0] if get_origin(turns) is typing.Annotated else turns)[0]
    turn = {f.name: shape(f.type) for f in msgspec.structs.fields(turn_struct)}
    assert turn.keys() == load.TurnIn.model_fields.keys()
    for name, info in load.TurnIn.model_fields.items():
        if name != "after":  # absent is the model's empty tuple (bench.corpus.decode._NO_AFTER)
            assert turn[name] == shape(info.annotation), name
