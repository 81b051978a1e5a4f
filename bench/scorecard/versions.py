"""What changed between two records of one framework: the sequences whose verdict moved, in words.

A verdict is what the cell did in its classes' words, or "met every requirement"
(:attr:`bench.scorecard.rows.ScorecardRow.verdicts`). Used twice: between the versions of a
framework recorded side by side (the scorecard's "Versions side by side"), and between a record
and the same record updated (``stopbench scorecard record --changed`` says which verdicts moved).
Only the sequences both records ran are compared; the others are counted apart.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.scorecard.rows import ScorecardRow, row_of


@dataclass(frozen=True, slots=True)
class Change:
    sequence: str
    before: str
    after: str


def changes(older: ScorecardRow, newer: ScorecardRow) -> list[Change]:
    """The sequences both rows ran whose verdicts differ, by sequence."""
    before = dict(older.verdicts)
    return [Change(sid, before[sid], now) for sid, now in sorted(newer.verdicts)
            if sid in before and before[sid] != now]


def verdict_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """:func:`changes` between two records of one framework."""
    return changes(row_of(before), row_of(after))


def version_order(version: str) -> tuple[tuple[int, str], ...]:
    """A sort key that puts ``2.9.0`` before ``2.10.0`` (numbers as numbers, the rest as text)."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"[.\-+]", version))


@dataclass(frozen=True, slots=True)
class Step:
    """One framework from one recorded version to the next."""

    older: ScorecardRow
    newer: ScorecardRow
    moved: tuple[Change, ...]
    only_one: int
    """Sequences that one of the two records ran and the other did not."""


def version_steps(rows: Iterable[ScorecardRow]) -> dict[str, list[Step]]:
    """``{framework: [each recorded version to the next, oldest first]}`` for the frameworks recorded
    at more than one version, by name."""
    by_name: dict[str, list[ScorecardRow]] = {}
    for row in rows:
        by_name.setdefault(row.name, []).append(row)
    out: dict[str, list[Step]] = {}
    for name in sorted(by_name):
        ordered = sorted(by_name[name], key=lambda r: version_order(r.version))
        steps = []
        for older, newer in itertools.pairwise(ordered):
            ran_older, ran_newer = {s for s, _ in older.verdicts}, {s for s, _ in newer.verdicts}
            steps.append(Step(older, newer, tuple(changes(older, newer)), len(ran_older ^ ran_newer)))
        if steps:
            out[name] = steps
    return out
