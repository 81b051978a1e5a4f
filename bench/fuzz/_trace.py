"""One replay under fuzzing, with what the bench saw of each decision before the replay validated
it: exceptions, hangs and malformed decisions, filed under the property they break.

A decision is checked by the bench's one validator (:func:`bench.engine.validate.check_decision`, the
replay's own), so a decision the replay accepts never breaks a fuzz property and the other way
round. A hang is the replay's per-decision time limit (:mod:`bench.engine.contain`) firing."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bench.engine.contain import DEFAULT_DECISION_TIMEOUT, DecisionTimeout, decision_time_limit
from bench.engine.model import Cell, Decision, Sequence, Turn
from bench.engine.predicate import Predicate, State
from bench.engine.replay import DEFAULT_SAFETY_CAP, replay
from bench.engine.validate import InvalidDecision, check_decision


@dataclass(slots=True)
class Trace:
    """One replay with what the bench saw of each decision before the replay validated it."""

    cell: Cell | None
    raised: str | None = None
    hung: str | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)

    def note(self, prop: str, text: str) -> None:
        self.problems.setdefault(prop, []).append(text)


def trace(seq: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP,
          decision_timeout: float | None = DEFAULT_DECISION_TIMEOUT) -> Trace:
    """Replay `seq` through `pred`, recording exceptions, hangs and invalid decisions by property.

    Each decision gets `decision_timeout` seconds, unless a limit is already in force from an
    enclosing :func:`bench.engine.contain.decision_time_limit` (``stopbench fuzz`` sets one for the run),
    which then applies."""
    t = Trace(cell=None)
    original = pred.decide
    rules = pred.rules or None

    def decide(turn: Turn, state: State) -> Decision:
        try:
            decision = original(turn, state)
        except DecisionTimeout as exc:
            t.hung = str(exc)
            raise
        except (Exception, SystemExit) as exc:
            t.raised = f"step {state.step}: {type(exc).__name__}: {exc}"
            raise
        try:
            check_decision(decision, len(turn.tool_calls), rules, pred.reason_set)
        except InvalidDecision as exc:
            t.note(exc.kind, f"step {state.step}: {exc}")
        return decision

    probe = replace(pred, decide=decide)
    with decision_time_limit(decision_timeout):
        t.cell = replay(seq, probe, safety_cap)
    return t


def label(cell: Cell | None) -> str:
    """A cell in a few words, for a property's explanation."""
    if cell is None:
        return "(no cell)"
    if cell.outcome == "stopped":
        return f"stopped {cell.reason} ok={cell.ok} after {cell.n_steps} step(s)"
    return f"{cell.outcome} after {cell.n_steps} step(s)" + (f" ({cell.error})" if cell.error else "")
