"""One replay under fuzzing, with what the bench saw of each decision before the replay validated
it: exceptions, hangs and malformed decisions, sorted by the property they break."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bench.fuzz import _timer
from bench.model import ACTIONS, Cell, Decision, Sequence, Turn
from bench.predicate import Predicate, State
from bench.replay import DEFAULT_SAFETY_CAP, replay


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
          time_limit: float | None = None) -> Trace:
    """Replay `seq` through `pred`, recording exceptions and malformed decisions by property.
    The replay is given `time_limit` seconds (default :data:`bench.fuzz.TIME_LIMIT`) where a timer
    can be set."""
    t = Trace(cell=None)
    original = pred.decide

    def decide(turn: Turn, state: State) -> Decision:
        try:
            decision = original(turn, state)
        except Exception as exc:
            t.raised = f"step {state.step}: {type(exc).__name__}: {exc}"
            raise
        inspect_decision(decision, turn, pred, state.step, t)
        return decision

    probe = replace(pred, decide=decide)
    try:
        with _timer.time_limit(_timer.TIME_LIMIT if time_limit is None else time_limit):
            t.cell = replay(seq, probe, safety_cap)
    except _timer.Hang as exc:
        t.hung = str(exc)
    return t


def inspect_decision(d: object, turn: Turn, pred: Predicate, step: int, t: Trace) -> None:
    """Note on `t` everything wrong with decision `d` at `step`, under the property it breaks."""
    where = f"step {step}"
    if not isinstance(d, Decision):
        t.note("well-formed", f"{where}: returned {type(d).__name__} {d!r:.60}, not a Decision")
        return
    if d.action not in ACTIONS:
        t.note("well-formed", f"{where}: action {d.action!r} is not one of {', '.join(ACTIONS)}")
    if not isinstance(d.rule, str) or not d.rule:
        t.note("well-formed", f"{where}: rule {d.rule!r} is not a rule id")
    elif pred.rules and d.rule not in pred.rules:
        t.note("well-formed", f"{where}: rule {d.rule!r} is not declared (declared: {', '.join(sorted(pred.rules))})")
    if d.action == "stop":
        if not isinstance(d.ok, bool):
            t.note("well-formed", f"{where}: stop with ok={d.ok!r}, not True or False")
        if not isinstance(d.reason, str) or not d.reason:
            t.note("declared-reasons", f"{where}: stop without a reason ({d.reason!r})")
        elif pred.reasons and d.reason not in pred.reasons:
            t.note("declared-reasons", f"{where}: stop reason {d.reason!r} is not declared "
                                       f"(declared: {', '.join(pred.reasons)})")
    n = len(turn.tool_calls)
    chosen: dict[str, tuple[int, ...]] = {}
    for what in ("run", "failed"):
        sel = getattr(d, what)
        if sel == "all":
            chosen[what] = tuple(range(n))
            continue
        if not isinstance(sel, tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in sel):
            t.note("well-formed", f"{where}: {what}={sel!r:.40} is neither 'all' nor a tuple of call indices")
            chosen[what] = ()
            continue
        outside = [i for i in sel if not 0 <= i < n]
        if outside:
            t.note("no-phantom-tools", f"{where}: {what} names call(s) {outside} but the turn carries {n} "
                                       f"tool call(s)")
        if len(set(sel)) != len(sel):
            t.note("well-formed", f"{where}: {what} names a call twice: {sel}")
        chosen[what] = sel
    both = set(chosen["run"]) & set(chosen["failed"])
    if both:
        t.note("well-formed", f"{where}: call(s) {sorted(both)} both run and failed")


def label(cell: Cell | None) -> str:
    """A cell in a few words, for a property's explanation."""
    if cell is None:
        return "(no cell)"
    if cell.outcome == "stopped":
        return f"stopped {cell.reason} ok={cell.ok} after {cell.n_steps} step(s)"
    return f"{cell.outcome} after {cell.n_steps} step(s)" + (f" ({cell.error})" if cell.error else "")
