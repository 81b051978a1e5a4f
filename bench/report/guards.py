"""The loop-guard score: how often a column's loop stops work that would have finished, against how
often it lets a stuck loop run past its bound, and what stopping costs.

The sequences scored are those tagged ``repeat`` (:data:`GUARD_TAG`): rounds that repeat a tool, a
call or a cycle of calls. Their requirements say which is which (:func:`guard_cases`):

- **finite work**: ``require: ok: true`` (with ``answer_on``): the repetition ends and the answer
  comes; a correct loop reports success on it. A cell that *stopped* without that success is a
  **false halt** (a guard, a cap or any other rule ended work that would have finished).
- **a stuck loop**: ``then: repeat`` and ``require: ok: false``: nothing new comes back, for ever. A
  cell that never stopped, or broke ``stops_within`` or ``progress``, is a **miss** (let run past
  the bound). A cell that stopped reporting success, in time or not, is counted too (**stopped as
  success**: a detected loop is not a result). The **requests** a column spent on the stuck
  sequences are summed (a loop that never stops spends the bench's safety cap).

Each counted cell carries the rules that decided it (:class:`GuardCell`), and the section prints each
such rule with the text (and citation) its predicate declares, so every figure is explained by the
port's own cited rules. A crashed cell is not scored. Everything here is a pure function of the
results, the sequences and the predicates, in their given order: the same run gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jinja2
from tabulate import tabulate

from bench.engine.discovery import Loaded
from bench.engine.judge import served_turn
from bench.engine.model import Cell
from bench.engine.model import Sequence as SequenceModel
from bench.golden.run import Result

GUARD_TAG = "repeat"
"""The tag of the sequences the loop-guard score is computed on."""

Kind = Literal["finite", "stuck"]
Verdict = Literal["finished", "false halt", "not finished", "stopped in bound", "miss"]

_ASSETS = Path(__file__).parent / "page" / "assets"


@dataclass(frozen=True, slots=True)
class GuardCase:
    """A sequence the score is computed on: finite work, or a stuck loop with its bound in requests
    (``stops_within``; None when only ``progress`` bounds it)."""

    sequence: str
    kind: Kind
    bound: int | None


@dataclass(frozen=True, slots=True)
class GuardCell:
    """One column's cell on a guard sequence, as the score reads it: its verdict, the requests it
    made, whether it stopped and with success, and the rules that decided it (the rules of the steps
    that left calls of their turn unrun, then the last step's rule; each once, in order)."""

    sequence: str
    kind: Kind
    verdict: Verdict
    requests: int
    stopped: bool
    ok: bool | None
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GuardScore:
    """One column's loop-guard score."""

    predicate: str
    cells: tuple[GuardCell, ...]

    @property
    def finite(self) -> int:
        return sum(c.kind == "finite" for c in self.cells)

    @property
    def finished(self) -> int:
        return sum(c.verdict == "finished" for c in self.cells)

    @property
    def false_halts(self) -> tuple[GuardCell, ...]:
        return tuple(c for c in self.cells if c.verdict == "false halt")

    @property
    def stuck(self) -> int:
        return sum(c.kind == "stuck" for c in self.cells)

    @property
    def misses(self) -> tuple[GuardCell, ...]:
        return tuple(c for c in self.cells if c.verdict == "miss")

    @property
    def ended_as_success(self) -> tuple[GuardCell, ...]:
        return tuple(c for c in self.cells if c.kind == "stuck" and c.stopped and c.ok is True)

    @property
    def requests(self) -> int:
        """The requests spent on the stuck sequences, summed."""
        return sum(c.requests for c in self.cells if c.kind == "stuck")

    def explained(self) -> tuple[GuardCell, ...]:
        """The cells the score counts against the column: false halts, misses, stops as success."""
        return tuple(c for c in self.cells
                     if c.verdict in ("false halt", "miss") or (c.kind == "stuck" and c.stopped and c.ok is True))


def guard_cases(sequences: Iterable[SequenceModel]) -> list[GuardCase]:
    """The sequences tagged :data:`GUARD_TAG` that their requirements classify, sorted by id: finite
    work (``ok: true``) or a stuck loop (``then: repeat`` and ``ok: false``)."""
    out = []
    for s in sequences:
        if GUARD_TAG not in s.tags:
            continue
        if s.require.ok is True:
            out.append(GuardCase(s.id, "finite", None))
        elif s.require.ok is False and s.then == "repeat":
            out.append(GuardCase(s.id, "stuck", s.require.stops_within))
    return sorted(out, key=lambda c: c.sequence)


def guard_scores(results: Iterable[Result], sequences: Sequence[SequenceModel],
                 predicates: Sequence[str]) -> list[GuardScore]:
    """The score of each column in `predicates`, in that order, from the (judged) cells of
    `results` on the guard sequences of `sequences`."""
    cases = {c.sequence: c for c in guard_cases(sequences)}
    by_id = {s.id: s for s in sequences}
    cells: dict[str, list[GuardCell]] = {p: [] for p in predicates}
    for r in results:
        case = cases.get(r.cell.sequence)
        if case is None or r.cell.predicate not in cells or r.cell.outcome == "crashed":
            continue
        cells[r.cell.predicate].append(guard_cell(case, by_id[case.sequence], r.cell))
    return [GuardScore(p, tuple(sorted(cells[p], key=lambda c: c.sequence))) for p in predicates]


def guard_cell(case: GuardCase, sequence: SequenceModel, cell: Cell) -> GuardCell:
    """How the score reads `cell` on the guard sequence `case` (see the module docstring)."""
    broken = {v.requirement.split(":", 1)[0] for v in cell.violations}
    stopped = cell.outcome == "stopped"
    verdict: Verdict
    if case.kind == "finite":
        if stopped and cell.ok is True and not broken & {"ok", "answer_on"}:
            verdict = "finished"
        else:
            verdict = "false halt" if stopped else "not finished"
    else:
        verdict = "miss" if not stopped or broken & {"stops_within", "progress"} else "stopped in bound"
    return GuardCell(case.sequence, case.kind, verdict, cell.n_steps, stopped, cell.ok, _deciding_rules(sequence, cell))


def _deciding_rules(sequence: SequenceModel, cell: Cell) -> tuple[str, ...]:
    rules = [s.decision.rule for s in cell.steps if len(s.tools_run) < len(served_turn(sequence, s).tool_calls)]
    if cell.steps:
        rules.append(cell.steps[-1].decision.rule)
    return tuple(dict.fromkeys(rules))


def _rule_texts(loaded: Sequence[Loaded]) -> dict[str, dict[str, str]]:
    return {p.name: dict(getattr(p, "rules", {}) or {}) for p in loaded}


def _row(s: GuardScore) -> list[str | int]:
    return [s.predicate, f"{s.finished} of {s.finite}", len(s.false_halts), f"{len(s.misses)} of {s.stuck}",
            len(s.ended_as_success), s.requests]


HEADERS = ["predicate", "finite work finished", "false halts", "stuck loops missed", "stuck stopped as success",
           "requests on stuck loops"]


def _what(c: GuardCell) -> str:
    as_success = c.kind == "stuck" and c.stopped and c.ok is True
    if c.verdict in ("false halt", "miss"):
        return f"{c.verdict}, as success" if as_success else c.verdict
    return "stopped as success"


def _ending(c: GuardCell) -> str:
    if c.stopped:
        return f"stopped at request {c.requests}"
    return f"still going at request {c.requests}"


def markdown_section(scores: Sequence[GuardScore], loaded: Sequence[Loaded] = ()) -> str:
    """The ``## Loop-guard score`` section of the decision table: the score per column, then, per
    column, each counted cell with the rules that decided it and each rule's declared text."""
    out = ["## Loop-guard score", ""]
    cases = sorted({(c.sequence, c.kind) for s in scores for c in s.cells})
    if not cases:
        return "\n".join([*out, f"No sequence tagged `{GUARD_TAG}` was replayed.", ""])
    finite = [sid for sid, kind in cases if kind == "finite"]
    stuck = [sid for sid, kind in cases if kind == "stuck"]
    out += [f"The sequences tagged `{GUARD_TAG}`: finite work that repeats but finishes (`ok: true`, "
            f"{len(finite)}: {', '.join(finite) or 'none'}) and stuck loops (`then: repeat`, `ok: false`, "
            f"{len(stuck)}: {', '.join(stuck) or 'none'}). A false halt is finite work the loop stopped before "
            "its answer; a miss is a stuck loop it never stopped or stopped past `stops_within` or `progress`; "
            "a stuck loop stopped as a success (in time or not) is counted too; the requests are those made on "
            "the stuck loops, summed (the bench's safety cap for a loop that never stops). Each counted cell "
            "below names the rules that decided it (`stopbench show SEQUENCE -p PREDICATE` prints their "
            "source lines).", ""]
    out.append(tabulate([_row(s) for s in scores], headers=HEADERS, tablefmt="github"))
    texts = _rule_texts(loaded)
    for s in scores:
        counted = s.explained()
        if not counted:
            continue
        out += ["", f"`{s.predicate}`:"]
        for c in counted:
            out.append(f"- {c.sequence}: {_what(c)}, {_ending(c)} ({', '.join(f'`{r}`' for r in c.rules)})")
        rules = dict.fromkeys(r for c in counted for r in c.rules)
        known = texts.get(s.predicate, {})
        for r in rules:
            if r in known:
                out.append(f"- `{r}`: {known[r]}")
    return "\n".join(out) + "\n"


def html_section(scores: Sequence[GuardScore], loaded: Sequence[Loaded] = ()) -> str:
    """The page's ``<section id="loop-guards">``: the same score and explanations as
    :func:`markdown_section`, as static HTML escaped by the template engine; empty without guard cells."""
    if not any(s.cells for s in scores):
        return ""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_ASSETS), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    texts = _rule_texts(loaded)
    rows = []
    for s in scores:
        counted = s.explained()
        known = texts.get(s.predicate, {})
        rules = dict.fromkeys(r for c in counted for r in c.rules)
        rows.append({"cells": _row(s), "name": s.predicate,
                     "counted": [{"sequence": c.sequence, "what": _what(c), "ending": _ending(c),
                                  "rules": list(c.rules)} for c in counted],
                     "rules": [{"rule": r, "text": known[r]} for r in rules if r in known]})
    return env.get_template("guards.html.j2").render(headers=HEADERS, rows=rows, tag=GUARD_TAG)
