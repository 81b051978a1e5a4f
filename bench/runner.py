"""One bench run: every sequence through every predicate, each cell judged and compared.

The run is a generator of :class:`Result` so that reports and JSON lines can be streamed; the
memory a run holds does not grow with the number of cells unless the caller keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from bench.discovery import Broken, Loaded
from bench.golden import Golden, Mismatch, compare
from bench.model import Cell, Sequence
from bench.replay import DEFAULT_SAFETY_CAP, crashed_cell, replay

Status = Literal["match", "mismatch", "unreviewed"]


@dataclass(frozen=True, slots=True)
class Result:
    """A cell with its golden status (and the first difference when it mismatches)."""

    cell: Cell
    status: Status
    mismatch: Mismatch | None = None


def run(sequences: list[Sequence], predicates: list[Loaded], golden: Golden | None = None,
        safety_cap: int = DEFAULT_SAFETY_CAP) -> Iterator[Result]:
    """Replay each sequence through each predicate, sequence-major, in the given orders."""
    for seq in sequences:
        for pred in predicates:
            if isinstance(pred, Broken):
                cell = crashed_cell(seq.id, pred.name, f"predicate did not load: {pred.error}")
            else:
                cell = replay(seq, pred, safety_cap)
            yield judge_against_golden(cell, golden)


def judge_against_golden(cell: Cell, golden: Golden | None) -> Result:
    exp = golden.expectation(cell.predicate, cell.sequence) if golden else None
    if exp is None:
        return Result(cell, "unreviewed")
    mismatch = compare(cell, exp)
    return Result(cell, "mismatch" if mismatch else "match", mismatch)
