"""One bench run: every sequence through every predicate, each cell judged and compared.

The run is a generator of :class:`Result` so that reports and JSON lines can be streamed; the
memory a run holds does not grow with the number of cells unless the caller keeps them.

Every predicate sees the sequence as the catalogue loaded it. The turns are frozen dataclasses,
but ``object.__setattr__`` gets through, so after each sequence the runner checks that no field
of any turn, tool call, usage or error changed (a comparison of the fields' values, by identity
first, at C speed: a few per cent of a replay). When one did, it puts the fields back and replays
that sequence again one predicate at a time, checking after each: the predicate that changed
something gets a crashed cell naming what it changed, and every other cell is the one it would
have been on the untouched sequence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

from bench.engine.discovery import Broken, Loaded
from bench.engine.model import Cell, Sequence, ToolCall, Turn, TurnError, Usage
from bench.engine.replay import DEFAULT_SAFETY_CAP, crashed_cell, replay
from bench.golden.expected import Golden, Mismatch, compare

Status = Literal["match", "mismatch", "unreviewed", "live"]


@dataclass(frozen=True, slots=True)
class Result:
    """A cell with its golden status (and the first difference when it mismatches).

    ``live`` is the status of a cell observed from a program by ``stopbench check`` (a
    ``<name>@live`` column, :func:`bench.report.live.live_columns`): never replayed, never compared with
    a golden file."""

    cell: Cell
    status: Status
    mismatch: Mismatch | None = None


def run(sequences: list[Sequence], predicates: list[Loaded], golden: Golden | None = None,
        safety_cap: int = DEFAULT_SAFETY_CAP) -> Iterator[Result]:
    """Replay each sequence through each predicate, sequence-major, in the given orders."""
    for row in cells(sequences, predicates, safety_cap):
        for cell in row:
            yield judge_against_golden(cell, golden)


def cells(sequences: list[Sequence], predicates: list[Loaded],
          safety_cap: int = DEFAULT_SAFETY_CAP) -> Iterator[list[Cell]]:
    """For each sequence in order, the judged cells of every predicate in order, each predicate
    seeing the sequence untouched by the others (see the module's docstring)."""
    for seq in sequences:
        before = _fields(seq)
        row = [_cell(seq, pred, safety_cap) for pred in predicates]
        if _fields(seq) != before:
            row = _isolated(seq, predicates, before, safety_cap)
        yield row


def _cell(seq: Sequence, pred: Loaded, safety_cap: int) -> Cell:
    if isinstance(pred, Broken):
        return crashed_cell(seq.id, pred.name, f"predicate did not load: {pred.error}")
    return replay(seq, pred, safety_cap)


def _isolated(seq: Sequence, predicates: list[Loaded], before: list[Any], safety_cap: int) -> list[Cell]:
    """Replay `seq` one predicate at a time, restoring its fields after each; crash the cells of
    the predicates that changed them."""
    _restore(before)
    row = []
    for pred in predicates:
        cell = _cell(seq, pred, safety_cap)
        after = _fields(seq)
        if after != before:
            what = _first_change(seq, before, after)
            _restore(before)
            cell = Cell(seq.id, cell.predicate, "crashed", cell.steps,
                        error=f"changed what the bench handed it: {what}; a predicate must not modify "
                              "the turns (other predicates would see the change)")
        row.append(cell)
    return row


def _getter(cls: type) -> attrgetter[Any]:
    return attrgetter(*(f.name for f in fields(cls)))


_TURN, _CALL, _USAGE, _ERROR = _getter(Turn), _getter(ToolCall), _getter(Usage), _getter(TurnError)
_CALLS, _USAGES, _ERRORS = attrgetter("tool_calls"), attrgetter("usage"), attrgetter("error")
_FIELD_NAMES = {cls: [f.name for f in fields(cls)] for cls in (Turn, ToolCall, Usage, TurnError)}


def _fields(seq: Sequence) -> list[Any]:
    """The field values of every object of `seq` (turns, calls, usages, errors) with the objects.

    Built and compared by C loops (map, attrgetter, list and tuple equality, which tries identity
    first), so checking a sequence costs far less than replaying it through one predicate."""
    turns = seq.turns
    calls = list(chain.from_iterable(map(_CALLS, turns)))
    usages = list(filter(None, map(_USAGES, turns)))
    errors = list(filter(None, map(_ERRORS, turns)))
    return [turns, list(map(_TURN, turns)), calls, list(map(_CALL, calls)), usages, list(map(_USAGE, usages)),
            errors, list(map(_ERROR, errors))]


def _restore(before: list[Any]) -> None:
    """Put back every field value recorded by :func:`_fields` (on the objects it recorded)."""
    for i in range(0, len(before), 2):
        for obj, values in zip(before[i], before[i + 1], strict=True):
            for name, value in zip(_FIELD_NAMES[type(obj)], values, strict=True):
                if getattr(obj, name) is not value:
                    object.__setattr__(obj, name, value)


def _first_change(seq: Sequence, before: list[Any], after: list[Any]) -> str:
    """Say which field of which turn changed, e.g. ``turn 2 finish: 'stop' -> 'length'``."""
    where: dict[int, str] = {}
    for i, turn in enumerate(seq.turns):
        where.setdefault(id(turn), f"turn {i}")
        for j, call in enumerate(turn.tool_calls):
            where.setdefault(id(call), f"turn {i} tool call {j}")
        if turn.usage is not None:
            where.setdefault(id(turn.usage), f"turn {i} usage")
        if turn.error is not None:
            where.setdefault(id(turn.error), f"turn {i} error")
    for i in range(0, len(before), 2):
        for obj, old, new in zip(before[i], before[i + 1], after[i + 1], strict=False):
            if old != new:
                for name, a, b in zip(_FIELD_NAMES[type(obj)], old, new, strict=True):
                    if a != b:
                        return f"{where.get(id(obj), type(obj).__name__)} {name}: {a!r:.40} -> {b!r:.40}"
    return "the turns"


def judge_against_golden(cell: Cell, golden: Golden | None) -> Result:
    exp = golden.expectation(cell.predicate, cell.sequence) if golden else None
    if exp is None:
        return Result(cell, "unreviewed")
    mismatch = compare(cell, exp)
    return Result(cell, "mismatch" if mismatch else "match", mismatch)
