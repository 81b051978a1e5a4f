"""The properties of termination predicates checked on generated examples.

Two kinds of property:

* for every predicate (``scope="every"``): the replay ends, the predicate never crashes, every
  decision is well formed with a declared rule, every stop reason is declared, no tool call is run
  or failed that the turn did not carry, the same sequence gives the same cell, and turns appended
  after the one where the loop stopped change nothing;
* for the reference loop (``scope="reference"``, the predicate named :data:`REFERENCE`): it never
  reports success on a truncated, filtered, errored or dropped-call turn, it never throws away a
  tool call a turn carries, it stops within its own cap, and it stops only with reasons it
  enumerates.

A check takes a predicate, an example (a sequence, plus turns to append for the append property)
and the safety cap, and returns None when the property holds or a one-paragraph explanation when
not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from bench.engine.judge import first_dropped_calls
from bench.engine.model import Cell, Requirement, Sequence, Turn
from bench.engine.predicate import Predicate
from bench.engine.replay import DEFAULT_SAFETY_CAP, following
from bench.fuzz._trace import label as _label
from bench.fuzz._trace import trace

REFERENCE = "reference"
"""The column name of the bench's reference loop (predicates/reference.py): the one predicate the
reference properties are asserted for."""

Scope = Literal["every", "reference"]
Example = tuple[Sequence, tuple[Turn, ...]]
"""A generated sequence and the turns the append property adds after the loop's stop."""

_BAD_FINISHES = frozenset({"length", "content_filter", "error"})



Check = Callable[[Predicate, Example, int], str | None]


@dataclass(frozen=True, slots=True)
class Property:
    """A statement about a predicate's cells, checked on generated examples."""

    name: str
    statement: str
    scope: Scope
    check: Check
    require: Callable[[Sequence], Requirement] = lambda seq: Requirement()
    """The `require:` block a saved counterexample gets (empty when no requirement follows)."""
    declared: Callable[[Predicate], str | None] = lambda pred: None
    """The part of the property that the predicate's declarations alone break (no sequence needed)."""

    def holds_for(self, pred_name: str) -> bool:
        """Whether this property is meant to hold for that predicate (asserted by the tests)."""
        return self.scope == "every" or pred_name == REFERENCE


def _problems(prop: str) -> Check:
    def check(pred: Predicate, ex: Example, cap: int) -> str | None:
        t = trace(ex[0], pred, cap)
        found = t.problems.get(prop)
        return "; ".join(found[:3]) if found else None
    return check


def _never_crashes(pred: Predicate, ex: Example, cap: int) -> str | None:
    t = trace(ex[0], pred, cap)
    return f"the predicate raised at {t.raised}" if t.raised else None


def _ends(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    t = trace(seq, pred, cap)
    if t.hung:
        return f"the replay did not end: {t.hung}"
    cell = t.cell
    assert cell is not None
    n = cell.n_steps
    if cell.outcome == "crashed":
        if t.raised or t.problems:
            return None  # never-crashes, well-formed, declared-reasons or no-phantom-tools says why
        return f"the cell crashed for no reason the bench could see: {cell.error}"
    if cell.outcome == "stopped" and (not cell.steps or cell.steps[-1].decision.action != "stop"):
        return "outcome stopped, but the last step is not a stop"
    if cell.outcome == "capped" and n != cap:
        return f"outcome capped after {n} steps, but the safety cap is {cap}"
    if cell.outcome == "running" and (seq.then != "end" or not cell.steps or following(
            seq, cell.steps[-1].turn, cell.steps[-1].decision.action) is not None):
        return (f"outcome running after {n} steps with then: {seq.then} and {len(seq.turns)} turn(s), "
                "though a turn was left to answer the last request")
    return None


def _deterministic(pred: Predicate, ex: Example, cap: int) -> str | None:
    first = trace(ex[0], pred, cap).cell
    again = trace(replace(ex[0], turns=tuple(ex[0].turns)), pred, cap).cell
    if first != again:
        return f"two replays of the same sequence differ: {_label(first)} then {_label(again)}"
    return None


def _no_phantom_tools(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    t = trace(seq, pred, cap)
    if "no-phantom-tools" in t.problems:
        return "; ".join(t.problems["no-phantom-tools"][:3])
    for s in t.cell.steps if t.cell else ():
        carried = Counter(c.name for c in seq.turns[s.turn].tool_calls)
        used = Counter(s.tools_run) + Counter(s.tools_failed)
        extra = used - carried
        if extra:
            return f"step {s.step}: ran or failed {sorted(extra.elements())}, which turn {s.turn} did not carry"
    return None


def _append_invariance(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq, extra = ex
    cell = trace(seq, pred, cap).cell
    if cell is None or cell.outcome != "stopped" or not cell.steps:
        return None  # nothing to say: it did not stop
    if any(t.after for t in seq.turns):
        # reactive: the turns it saw are not the first n; everything past the last one it saw is unseen
        # (the next turn of each step was one it saw), unless `then: repeat` may have answered with the last
        k = max(s.turn for s in cell.steps) + 1
        if seq.then == "repeat" and k == len(seq.turns):
            return None
    elif cell.n_steps > len(seq.turns):
        return None  # stopped on a repeated turn
    else:
        k = cell.n_steps
    longer = replace(seq, turns=seq.turns[:k] + extra)
    other = trace(longer, pred, cap).cell
    if other != cell:
        return (f"the loop stops at step {k} on the first {k} turn(s) ({_label(cell)}); with {len(extra)} "
                f"turn(s) appended after them it ends {_label(other)}")
    return None


def _stop_turn(seq: Sequence, cell: Cell) -> tuple[Turn, int, int] | None:
    """The turn of a successful stop, with the number of its calls the stop step handled."""
    if cell.outcome != "stopped" or not cell.ok or not cell.steps:
        return None
    s = cell.steps[-1]
    return seq.turns[s.turn], s.turn, len(s.tools_run) + len(s.tools_failed)


def _no_false_ok(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    cell = trace(seq, pred, cap).cell
    found = _stop_turn(seq, cell) if cell else None
    if found is None:
        return None
    turn, index, handled = found
    why = ""
    if turn.error is not None:
        why = f"an errored turn ({turn.error.kind})"
    elif turn.finish in _BAD_FINISHES:
        why = {"length": "a truncated turn", "content_filter": "a filtered turn"}.get(turn.finish, "an errored turn")
        why += f" (finish {turn.finish}, raw {turn.finish_raw!r})"
    elif handled < len(turn.tool_calls):
        why = f"a turn whose {len(turn.tool_calls)} tool call(s) it ran or failed only {handled} of"
    if not why:
        return None
    assert cell is not None
    return f"reported success ({cell.reason}) at step {cell.n_steps} on turn {index}, {why}"


def _keeps_calls(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    cell = trace(seq, pred, cap).cell
    if cell is None:
        return None
    dropped = first_dropped_calls(seq, cell)
    return dropped[1] if dropped is not None else None


def _declares_cap(pred: Predicate) -> str | None:
    return "declares no cap (max_steps is None)" if pred.max_steps is None else None


def _declares_reasons(pred: Predicate) -> str | None:
    return None if pred.reasons else "enumerates no stop reasons"


def _within_cap(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    if pred.max_steps is None:
        return _declares_cap(pred)
    cell = trace(seq, pred, cap).cell
    if cell is None or cell.outcome == "crashed":
        return None
    if cell.n_steps > pred.max_steps:
        return f"made {cell.n_steps} requests; its cap is {pred.max_steps}"
    if cell.outcome == "capped" or (seq.then == "repeat" and cell.outcome != "stopped"):
        return f"did not stop ({cell.outcome}) within its cap of {pred.max_steps}"
    return None


def _enumerated_reasons(pred: Predicate, ex: Example, cap: int) -> str | None:
    if not pred.reasons:
        return _declares_reasons(pred)
    cell = trace(ex[0], pred, cap).cell
    if cell is not None and cell.outcome == "stopped" and cell.reason not in pred.all_reasons:
        return f"stopped with reason {cell.reason!r}, not one of {', '.join(sorted(pred.all_reasons))}"
    return None


def _require_ok_false(seq: Sequence) -> Requirement:
    """ok: false when no turn of the sequence is an answer (all truncated, filtered or errored)."""
    if all(t.finish in _BAD_FINISHES or t.error is not None for t in seq.turns):
        return Requirement(ok=False)
    return Requirement()


PROPERTIES: tuple[Property, ...] = (
    Property("ends", "every replay ends: stopped, running or capped, never hung", "every", _ends),
    Property("never-crashes", "the predicate never raises", "every", _never_crashes),
    Property("well-formed", "each decision is a well-formed Decision whose rule the predicate declares", "every",
             _problems("well-formed")),
    Property("declared-reasons", "a stop's reason is one the predicate declares", "every",
             _problems("declared-reasons")),
    Property("no-phantom-tools", "no tool call is run or failed that the turn did not carry", "every",
             _no_phantom_tools),
    Property("deterministic", "the same sequence gives the same cell", "every", _deterministic),
    Property("append-invariance", "appending turns after the turn where the loop stopped changes nothing",
             "every", _append_invariance),
    Property("no-false-ok", "never reports success on a truncated, filtered, errored or dropped-call turn",
             "reference", _no_false_ok, require=_require_ok_false),
    Property("keeps-calls", "never throws away a tool call a turn carries, whatever the finish reason says",
             "reference", _keeps_calls, require=lambda seq: Requirement(no_dropped_calls=True)),
    Property("within-cap", "stops within its own cap (max_steps)", "reference", _within_cap,
             declared=_declares_cap),
    Property("enumerated-reasons", "its stop reason is always one of the reasons it enumerates", "reference",
             _enumerated_reasons, declared=_declares_reasons),
)

BY_NAME: dict[str, Property] = {p.name: p for p in PROPERTIES}


def properties(scope: Scope | None = None) -> tuple[Property, ...]:
    """The properties of one scope (all of them when None)."""
    return tuple(p for p in PROPERTIES if scope is None or p.scope == scope)



def failures(pred: Predicate, ex: Example, props: tuple[Property, ...] = PROPERTIES,
             safety_cap: int = DEFAULT_SAFETY_CAP) -> dict[str, str]:
    """Every property of `props` that `pred` breaks on `ex`, with why."""
    out: dict[str, str] = {}
    for p in props:
        why = p.check(pred, ex, safety_cap)
        if why is not None:
            out[p.name] = why
    return out
