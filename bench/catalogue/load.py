"""Load the sequence catalogue: one YAML file per sequence, validated into :class:`Sequence`.

Validation is strict (unknown keys and duplicate keys are errors) and every problem is reported
as one line naming the file and the field path, e.g.
``sequences/x.yaml: turns[2].finish: expected one of 'stop', 'tool_calls', ...``.
A bad file does not hide the others: the loader returns the good sequences and the problems.

Files are read by the project's one YAML reader (:mod:`bench.catalogue.yaml_read`: strict, no aliases).
A long sequence is validated turn by turn (the header once, then each turn against
:class:`TurnIn`), with the garbage collector paused, so a 100,000-turn file costs seconds and
never holds a second, validated copy of itself; any error is then described by validating the
whole file at once, so the message is the same whichever way it was found.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from bench.catalogue.files import display_path
from bench.catalogue.yaml_read import YamlError, paused_gc, read_yaml, yaml_error_line
from bench.catalogue.yaml_read import parse_yaml as load_yaml
from bench.engine.model import (
    ACTIONS,
    Action,
    Dialect,
    ErrorKind,
    Finish,
    Kind,
    Requirement,
    Sequence,
    Then,
    ToolCall,
    Turn,
    TurnError,
    Usage,
)
from bench.errors import UnusableInput
from bench.wires import dialects

__all__ = ["Catalogue", "Problem", "SequenceError", "after_pairs", "after_targets_exist", "answer_turns",
           "describe_validation_error", "display_path", "field_path", "finish_raw_of", "load_catalogue",
           "load_sequence", "load_yaml", "parse_sequence", "yaml_error_line"]

# ---------------------------------------------------------------- the file schema
# The one statement of the sequence format's field rules: the corpus reader derives its typed
# msgspec structs from these models (bench/corpus/decode.py), and checks what they cannot say with
# the functions below (finish_raw_of, after_pairs, after_targets_exist, answer_turns).


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ToolCallIn(_Strict):
    id: str
    name: str
    arguments: str = "{}"
    result: str | None = None


class ErrorIn(_Strict):
    kind: ErrorKind
    message: str = ""
    status: int | None = Field(None, ge=100, le=599)
    code: str | None = None
    context_window: int | None = Field(None, ge=1)


class UsageIn(_Strict):
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)


class TurnIn(_Strict):
    finish: Finish
    finish_raw: str | None = None
    finish_detail: str | None = None
    content: str | None = None
    tool_calls: list[ToolCallIn] = []
    reasoning: str | None = None
    error: ErrorIn | None = None
    usage: UsageIn | None = None
    end_turn: bool | None = None
    steer: str | None = None
    after: dict[str, int] | None = None
    refusal: str | None = None


class RequireIn(_Strict):
    ok: bool | None = None
    stops_within: int | None = Field(None, ge=1)
    no_dropped_calls: bool = False
    no_truncated_runs: bool = False
    answer_after_tools: bool = False
    answer_on: list[int] | None = None
    no_malformed_runs: bool = False
    progress: int | None = Field(None, ge=1)


class SequenceIn(_Strict):
    title: str = Field(min_length=1)
    kind: Kind
    dialect: dialects.Known
    source: str = Field(min_length=1)
    tags: list[str] = []
    then: Then = "end"
    max_tokens: int | None = Field(None, ge=1)
    require: RequireIn = RequireIn()
    turns: list[TurnIn] = Field(min_length=1)

    @field_validator("source")
    @classmethod
    def _source_says_something(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must say where the sequence comes from")
        return v


class _HeadIn(SequenceIn):
    """A sequence file with its turns left unchecked: they are validated one at a time."""

    turns: list[Any] = Field(min_length=1)


_TURN_IN: TypeAdapter[TurnIn] = TypeAdapter(TurnIn)


# ---------------------------------------------------------------- loading


@dataclass(frozen=True, slots=True)
class Problem:
    """One unusable input file and its first error, as one printable line."""

    path: str
    message: str

    def __str__(self) -> str:
        shown = self.path if self.path.isprintable() else repr(self.path)[1:-1]  # a newline in a file name
        return f"{shown}: {self.message}"


@dataclass(slots=True)
class Catalogue:
    """The sequences that loaded and the files that did not."""

    sequences: list[Sequence] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def by_id(self, sequence_id: str) -> Sequence | None:
        return next((s for s in self.sequences if s.id == sequence_id), None)


class SequenceError(UnusableInput):
    """A sequence file that cannot be used; the message is one line: field path and problem."""


def load_catalogue(folder: Path) -> Catalogue:
    """Load every ``*.yaml``/``*.yml`` under `folder` (sub-folders too), sorted by id."""
    cat = Catalogue()
    seen: dict[str, str] = {}
    if not folder.is_dir():
        cat.problems.append(Problem(str(folder), "no such folder"))
        return cat
    for path in sorted(_yaml_files(folder)):
        shown = display_path(path)
        try:
            seq = load_sequence(path)
        except SequenceError as exc:
            cat.problems.append(Problem(shown, str(exc)))
            continue
        if seq.id in seen:
            cat.problems.append(Problem(shown, f"id {seq.id!r} is already used by {seen[seq.id]}"))
            continue
        seen[seq.id] = shown
        cat.sequences.append(seq)
    cat.sequences.sort(key=lambda s: s.id)
    return cat


def _yaml_files(folder: Path) -> Iterable[Path]:
    yield from folder.rglob("*.yaml")
    yield from folder.rglob("*.yml")


def load_sequence(path: Path) -> Sequence:
    """Read and validate one sequence file; its id is the file's stem (see :func:`check_id`)."""
    check_id(path.stem)
    with paused_gc():
        try:
            data = read_yaml(path)
        except YamlError as exc:
            raise SequenceError(exc.detail) from None
        return parse_sequence(data, path.stem, display_path(path))


def check_id(sequence_id: str) -> None:
    """Refuse an id (a file name) holding ``|`` or a character that is not printable (a newline, a tab).

    Ids are written as they are into the reports' Markdown tables, CSV rows, JUnit names and the
    commands a report suggests; escaping them there would make the id a report shows differ from the
    file name it stands for, so such a name is refused here, once, and the file is renamed."""
    bad = sorted({c for c in sequence_id if c == "|" or not c.isprintable()})
    if bad:
        raise SequenceError(f"the file name gives the id {sequence_id!r}, which holds {', '.join(map(repr, bad))}: "
                            "a report's table cannot hold it (rename the file)")


def parse_sequence(data: Any, sequence_id: str, path: str = "") -> Sequence:
    """Validate already-parsed YAML data into a Sequence."""
    if not isinstance(data, dict):
        got = "nothing (an empty file)" if data is None else f"{type(data).__name__} {data!r:.60}"
        raise SequenceError(f"expected a mapping (key: value) at the top level, got {got}")
    try:
        raw = _HeadIn.model_validate(data)
        turns = tuple(_turn(_TURN_IN.validate_python(t), raw.dialect, i) for i, t in enumerate(raw.turns))
        _check_after(turns)
    except (ValidationError, SequenceError):
        try:  # the schema's problems come first and are counted over the whole file, as they always were
            SequenceIn.model_validate(data)
        except ValidationError as exc:
            raise SequenceError(describe_validation_error(exc)) from None
        raise  # the schema holds: a turn's finish and error disagree (SequenceError from _turn)
    req = Requirement(ok=raw.require.ok, stops_within=raw.require.stops_within,
                      no_dropped_calls=raw.require.no_dropped_calls,
                      no_truncated_runs=raw.require.no_truncated_runs,
                      answer_after_tools=raw.require.answer_after_tools,
                      answer_on=answer_turns(raw.require.answer_on, len(turns)),
                      no_malformed_runs=raw.require.no_malformed_runs, progress=raw.require.progress)
    return Sequence(id=sequence_id, title=raw.title, kind=raw.kind, dialect=raw.dialect,
                    source=raw.source.strip(), turns=turns, then=raw.then, tags=tuple(raw.tags),
                    require=req, path=path, max_tokens=raw.max_tokens)


def answer_turns(indices: list[int] | None, n_turns: int) -> tuple[int, ...] | None:
    """A requirement's ``answer_on``: turns that exist, none named twice (SequenceError otherwise)."""
    if indices is None:
        return None
    for i in indices:
        if not 0 <= i < n_turns:
            raise SequenceError(f"require.answer_on: turn {i} does not exist (the sequence has "
                                f"{n_turns} turn{'s' if n_turns != 1 else ''}, numbered from 0)")
    if len(set(indices)) != len(indices):
        raise SequenceError("require.answer_on: a turn is named twice")
    return tuple(indices)


_FOLLOW_UPS: tuple[Action, ...] = tuple(a for a in ACTIONS if a != "stop")
"""The actions that send a request, so the ones a turn's ``after`` may name (in this order)."""


def after_pairs(after: dict[str, int] | None, where: str) -> tuple[tuple[Action, int], ...]:
    """A turn's ``after`` mapping as (action, index) pairs in :data:`_FOLLOW_UPS` order."""
    if not after:
        return ()
    for name, target in after.items():
        if name == "stop":
            raise SequenceError(f"{where}.after.stop: a stop sends no request, so no turn answers it "
                                f"(expected one of {', '.join(_FOLLOW_UPS)})")
        if name not in _FOLLOW_UPS:
            raise SequenceError(f"{where}.after.{name}: not an action (expected one of {', '.join(_FOLLOW_UPS)})")
        if target < 0:
            raise SequenceError(f"{where}.after.{name}: turn {target} does not exist (turns are numbered from 0)")
    return tuple((a, after[a]) for a in _FOLLOW_UPS if a in after)


def _check_after(turns: tuple[Turn, ...]) -> None:
    """Every turn named in an ``after`` exists (known only once all turns are read)."""
    for i, t in enumerate(turns):
        after_targets_exist(t.after, i, len(turns))


def after_targets_exist(pairs: tuple[tuple[Action, int], ...], i: int, n: int) -> None:
    """Turn `i`'s ``after`` pairs name turns of a sequence of `n` turns (SequenceError otherwise)."""
    for name, target in pairs:
        if target >= n:
            raise SequenceError(f"turns[{i}].after.{name}: turn {target} does not exist (the sequence has "
                                f"{n} turn{'s' if n != 1 else ''}, numbered from 0)")


def finish_raw_of(dialect: Dialect, finish: Finish, raw: str | None, given: bool, has_error: bool,
                  where: str) -> str | None:
    """A turn's raw finish string: `raw` when `given` (it must map to `finish` in the dialect's
    table; null means none sent), else the dialect's own string for `finish`. Also checks that an
    error goes with finish ``error`` and that an ``error`` finish has an error or a raw string."""
    if given:
        if raw is not None:
            mapped = dialects.canonical(dialect, raw)
            if mapped != finish:
                raise SequenceError(f"{where}.finish_raw: {raw!r} maps to {mapped!r} in {dialect}, "
                                    f"but finish says {finish!r}")
        elif finish not in ("unknown", "error"):
            raise SequenceError(f"{where}.finish_raw: null (no finish sent) maps to 'unknown', "
                                f"but finish says {finish!r}")
    else:
        raw = dialects.default_raw(dialect, finish)
        if raw is None and finish == "unknown":
            raise SequenceError(f"{where}.finish_raw: required when finish is 'unknown' "
                                "(give the raw string, or null for none sent)")
    if has_error and finish != "error":
        raise SequenceError(f"{where}.finish: a turn with an error must have finish 'error'")
    if finish == "error" and not has_error and raw is None:
        raise SequenceError(f"{where}.error: required when finish is 'error' and no finish_raw is given")
    return raw


def _turn(t: TurnIn, dialect: Dialect, i: int) -> Turn:
    where = f"turns[{i}]"
    raw = finish_raw_of(dialect, t.finish, t.finish_raw, "finish_raw" in t.model_fields_set, t.error is not None,
                        where)
    calls = tuple(ToolCall(c.id, c.name, c.arguments, c.result) for c in t.tool_calls)
    error = (TurnError(t.error.kind, t.error.message, t.error.status, t.error.code, t.error.context_window)
             if t.error else None)
    usage = Usage(t.usage.input_tokens, t.usage.output_tokens) if t.usage else None
    return Turn(finish=t.finish, finish_raw=raw, content=t.content, tool_calls=calls,
                reasoning=t.reasoning, error=error, usage=usage, end_turn=t.end_turn,
                finish_detail=t.finish_detail, steer=t.steer, after=after_pairs(t.after, where), refusal=t.refusal)


def describe_validation_error(exc: ValidationError) -> str:
    """The first error of a pydantic ValidationError as ``field.path: problem``, plus a count."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    text = f"{field_path(first['loc'])}: {_problem(first)}"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return text


def field_path(loc: tuple[int | str, ...]) -> str:
    """``('turns', 2, 'finish')`` as ``turns[2].finish``; union branch tags are dropped."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "int", "bool", "none", "list", "dict") or "[" in part:
            continue
        else:
            out += f".{part}" if out else part
    return out or "(top level)"


def _problem(err: Any) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {err['input']!r}"
    if kind == "extra_forbidden":
        return "unknown key (not part of the sequence format)"
    if kind == "missing":
        return "required, but missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):  # pydantic's words name the model class
        got = "nothing" if err["input"] is None else f"{type(err['input']).__name__} {err['input']!r:.60}"
        return f"expected a mapping (key: value), got {got}"
    return f"{err['msg']}, got {err['input']!r:.60}"

