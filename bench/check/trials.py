"""``check --trials K``: each sequence run K times, pass^k and the cells that flip between trials.

A loop with timing or randomness in it may meet a sequence's requirements on one run and break them
on the next. pass^k (tau-bench, https://arxiv.org/abs/2406.12045, section 5) is the share of
sequences whose requirements hold on *every* one of k trials: the chance that k users in a row all
get a right result, not that one of them does. A cell *flips* when its trials do not all end alike:
the verdict changes (met on some, broken on others), or only the path does (the same verdict by other
steps). With ``--faults`` trial t (from 0) uses the recipe's seed + t, so the probability draws and
the jitter differ from trial to trial and every trial can be run again alone with that seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.check.runner import LiveRun


@dataclass(frozen=True, slots=True)
class Trials:
    """One sequence's K runs by one loop, in trial order."""

    runs: tuple[LiveRun, ...]

    @property
    def sequence(self) -> str:
        return self.runs[0].sequence.id

    @property
    def passed(self) -> int:
        """Trials that met every requirement (and did not crash)."""
        return sum(not r.failed for r in self.runs)

    @property
    def all_passed(self) -> bool:
        return self.passed == len(self.runs)

    @property
    def flips(self) -> bool:
        """Whether the verdict differs between trials."""
        return 0 < self.passed < len(self.runs)

    def paths(self, label: Any) -> tuple[str, ...]:
        """Each trial's cell in words (`label`: a cell's short form, e.g. :func:`bench.check.report.live_label`)."""
        return tuple(label(r.cell) for r in self.runs)


def by_sequence(trials: Sequence[Sequence[LiveRun]]) -> list[Trials]:
    """Trial-major runs (``trials[t][i]``: trial t of sequence i) as one :class:`Trials` per sequence."""
    if not trials:
        return []
    return [Trials(tuple(t[i] for t in trials)) for i in range(len(trials[0]))]


def pass_k(rows: Sequence[Trials]) -> tuple[int, int]:
    """(sequences that passed every trial, sequences)."""
    return sum(r.all_passed for r in rows), len(rows)


def trial_seeds(base: int, k: int) -> tuple[int, ...]:
    """The fault seed of each trial: the base seed + the trial's index (from 0)."""
    return tuple(base + t for t in range(k))


def summary(rows: Sequence[Trials], k: int) -> dict[str, Any]:
    """The record's ``pass_k`` entry: k, each sequence's passed count, the overall pass^k, the flips."""
    good, n = pass_k(rows)
    return {"k": k, "passed": {r.sequence: r.passed for r in rows}, "pass_k": good, "sequences": n,
            "flipping": [r.sequence for r in rows if r.flips]}


def table(names: Sequence[str], rows: Mapping[str, Sequence[Trials]], k: int, label: Any,
          column: Callable[[str], str]) -> str:
    """A Markdown table: one row per sequence, per loop (headed ``column(name)``) the trials that met
    the requirements out of k, then ``flips`` on a cell whose verdict flips and ``paths differ`` on
    one that met them every time by other paths. Words, not the verdict glyphs: those say how a cell
    stopped (:mod:`bench.report.labels`), not how many trials met the requirements."""
    head = ["sequence", *(f"{column(n)} pass^{k}" for n in names)]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for i, first in enumerate(rows[names[0]]):
        cells = []
        for n in names:
            t = rows[n][i]
            mark = " flips" if t.flips else ""
            if t.all_passed and len(set(t.paths(label))) > 1:
                mark += " paths differ"
            cells.append(f"{t.passed}/{k}{mark}")
        lines.append("| " + " | ".join([first.sequence, *cells]) + " |")
    return "\n".join(lines) + "\n"


def flip_lines(name: str, rows: Sequence[Trials], label: Any, column: Callable[[str], str]) -> list[str]:
    """For each cell whose trials differ (verdict or path), its trials in words, the loop named as
    ``column(name)``."""
    out = []
    for r in rows:
        paths = r.paths(label)
        if not r.flips and len(set(paths)) <= 1:
            continue
        how = "verdict flips" if r.flips else "same verdict, other paths"
        each = "; ".join(f"trial {t + 1}: {'met' if not run.failed else 'broken'}, {p}"
                         for t, (run, p) in enumerate(zip(r.runs, paths, strict=True)))
        out.append(f"{column(name)} {r.sequence} ({how}): {each}")
    return out
