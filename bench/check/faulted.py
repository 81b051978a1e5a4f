"""The verdict on a run the server injected faults into (``check --faults``): the sequence's own
requirements, judged on what the loop really received, and the two a fault adds.

What a recipe did to each answer is kept with the request's record on the server
(``Record.injected``, :class:`bench.faults.Injected`) and travels with the run as :class:`StepFault`
(:func:`step_faults`). The judge is the one :func:`bench.engine.judge.judge`, given a view of the
sequence in which a step whose answer did not reach the loop whole reads as the error the loop got
instead (a turn appended to the view: ``stream_cut`` for a stream that ended without a finish,
``connection_reset`` for a broken connection, ``rate_limit`` for a 429, ...), exactly as an error a
sequence records is judged; its ``stops_within`` grows by one request per such step (the retry a
provider's error costs). On top of that:

- ``no_success_on_fault``: the loop must not report success on an answer the recipe broke (a cut,
  broken or garbled stream, an error status): that is the truncation reported as an answer;
- ``retry_after``: after an answer that asked the loop to wait (``Retry-After``), its next request
  comes no sooner (a loop that gives up instead breaks nothing here).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Sequence as Seq
from dataclasses import replace
from typing import Any

from bench.engine.judge import judge
from bench.engine.model import Cell, Sequence, Turn, TurnError, Violation
from bench.faults import StepFault, step_faults

__all__ = ["EARLY_SLACK", "NO_SUCCESS_ON_FAULT", "RETRY_AFTER", "WORDS", "StepFault", "fault_lines", "judge_faulted",
           "received", "step_faults"]

NO_SUCCESS_ON_FAULT = "no_success_on_fault"
RETRY_AFTER = "retry_after"

WORDS = {NO_SUCCESS_ON_FAULT: "reported success on an answer a fault broke",
         RETRY_AFTER: "asked again before Retry-After was over"}
"""What a cell that breaks each fault requirement did, in plain words (as
:data:`bench.check.explain.REQUIREMENTS` says it for the sequence format's requirements)."""

EARLY_SLACK = 0.01
"""Seconds a retry may come before ``Retry-After`` is over and still count as waiting (clock
granularity: the server times the answer before it is written and the retry after it is read, so
the gap it measures is never shorter than the loop's own wait)."""


def received(sequence: Sequence, cell: Cell, faults: Seq[StepFault]) -> tuple[Sequence, Cell]:
    """The sequence and cell as the loop received them: each step whose answer a fault replaced
    points at an error turn of the fault's kind (appended to the sequence's turns), and
    ``stops_within`` allows one more request per such step."""
    replaced = {f.step: f.injected for f in faults if f.injected.replaced}
    if not replaced:
        return sequence, cell
    turns = list(sequence.turns)
    steps = []
    for s in cell.steps:
        inj = replaced.get(s.step)
        if inj is not None and inj.kind is not None:
            turns.append(Turn("error", error=TurnError(inj.kind, inj.describe(), status=inj.status)))
            s = replace(s, turn=len(turns) - 1)
        steps.append(s)
    req = sequence.require
    if req.stops_within is not None:
        req = replace(req, stops_within=req.stops_within + len(replaced))
    return replace(sequence, turns=tuple(turns), require=req), replace(cell, steps=tuple(steps))


def judge_faulted(sequence: Sequence, cell: Cell, faults: Seq[StepFault]) -> tuple[Violation, ...]:
    """Every requirement `cell` breaks, knowing what was injected (the module docstring); the plain
    :func:`~bench.engine.judge.judge` when nothing was."""
    if not faults or cell.outcome == "crashed":
        return judge(sequence, cell)
    seen_seq, seen_cell = received(sequence, cell, faults)
    stood_for = {v.turn: s.turn for s, v in zip(cell.steps, seen_cell.steps, strict=True) if v.turn != s.turn}
    found = [_in_sequence_words(v, stood_for) for v in judge(seen_seq, seen_cell)]
    by_step = {f.step: f for f in faults}
    for s in cell.steps:
        f = by_step.get(s.step)
        d = s.decision
        if f is not None and f.injected.replaced and d.action == "stop" and d.ok is True:
            found.append(Violation(NO_SUCCESS_ON_FAULT, s.step,
                                   f"reported success ({d.reason}) on an answer the fault recipe broke: "
                                   f"{f.injected.describe()}"))
            break
    for f in faults:
        wait = f.injected.retry_after
        if wait is not None and f.waited is not None and f.waited + EARLY_SLACK < wait:
            found.append(Violation(RETRY_AFTER, f.step + 1,
                                   f"asked again {f.waited:.2f} s after step {f.step}'s HTTP {f.injected.status}, "
                                   f"which said Retry-After: {wait}"))
    return tuple(found)


def _in_sequence_words(violation: Violation, stood_for: dict[int, int]) -> Violation:
    """`violation` with each error turn of the received view (:func:`received`) named as the
    sequence's turn it stood for, so a detail never names a turn the sequence does not have."""
    detail = violation.detail
    for seen, turn in stood_for.items():
        detail = re.sub(rf"\bturn {seen}\b", f"turn {turn} (as a fault broke it)", detail)
    return replace(violation, detail=detail)


def fault_lines(name: str, runs: Iterable[Any]) -> list[str]:
    """One line per step a fault was injected into: what was done and how long the loop took to ask
    again (``runs``: :class:`bench.check.runner.LiveRun`)."""
    out = []
    for r in runs:
        for f in r.faults:
            after = "" if f.waited is None else f"; asked again after {f.waited:.2f} s"
            out.append(f"{name} {r.sequence.id}: step {f.step}: {f.injected.describe()}{after}")
    return out
