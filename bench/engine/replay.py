"""The replay: request i is answered by turn i, whatever the loop sent, unless a turn reacts.

Open loop is the default: a resend, a reminder and a continue each consume one turn. A turn with
``after`` (the reactive form) names the turn that answers each kind of follow-up
(:func:`following`, shared with the replay server). Past the last turn, ``then: repeat``
answers with the last turn again and ``then: end`` ends the replay as ``running``. The loop's own
cap turns a non-stop decision at step ``max_steps`` into the cap's stop (tools of that step are
still run); the bench's safety cap ends the replay as ``capped``. A replay costs time linear in
its steps: the state grows by appending, never by copying the history, and past :data:`SHARE_AFTER`
steps a step like the previous one shares its records.
"""

from __future__ import annotations

from bench.engine.construct import fast_constructor
from bench.engine.contain import GUARD, WATCH, DecisionTimeout, Escape, user_interrupted
from bench.engine.judge import judge
from bench.engine.model import Action, Cell, Decision, Outcome, Sequence, Step, next_turn
from bench.engine.predicate import Predicate, State
from bench.engine.validate import InvalidDecision, check_decision

__all__ = ["DEFAULT_SAFETY_CAP", "InvalidDecision", "crashed_cell", "following", "replay"]

DEFAULT_SAFETY_CAP = 200
"""Requests after which the bench ends a replay as `capped` (far above any loop's own cap here)."""

SHARE_AFTER = 1000
"""Steps after which a step equal to the previous one (its decision, its tool lists) shares the previous
step's objects instead of keeping its own: a cell run to a high ``--safety-cap`` then keeps about 140
bytes a step (its Step and step number, and a slot in each history list) instead of 280 (tracemalloc,
finish_only on a repeating tool call, 50,000 steps). Cells shorter than this pay nothing for it."""


def replay(sequence: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP, *,
           judged: bool = True) -> Cell:
    """Replay one sequence through one predicate and return the cell, judged against the
    sequence's requirements unless `judged` is false.

    Whatever the predicate does wrong (raises, calls ``sys.exit`` or ``os._exit``, forks, changes
    the working folder or the SIGALRM handler, returns a decision that
    :func:`bench.engine.validate.check_decision` refuses, or takes longer than the time limit of an
    enclosing :func:`bench.engine.contain.decision_time_limit`) ends the cell as ``crashed`` with a
    one-line error; only the user's Ctrl-C propagates."""
    cell = _run(sequence, pred, safety_cap)
    if not judged:
        return cell
    violations = judge(sequence, cell)
    return cell.with_violations(violations) if violations else cell


def crashed_cell(sequence: str, predicate: str, error: str) -> Cell:
    """The cell of a predicate that could not even be loaded (or broke the bench's rules)."""
    return Cell(sequence=sequence, predicate=predicate, outcome="crashed", steps=(), error=error)


def following(sequence: Sequence, index: int, action: Action) -> int | None:
    """The turn that answers the request a loop sends after turn `index` of `sequence` with
    `action`, or None when the script has ended (``then: end``).

    :func:`bench.engine.model.next_turn` picks the turn (the turn's ``after`` entry, else the next
    one); past the last turn ``then: repeat`` answers with the last turn. The replay and the
    replay server both call this, so a reactive sequence is served as it is replayed."""
    turns = sequence.turns
    nxt = next_turn(turns[index], index, action)
    if nxt < len(turns):
        return nxt
    return len(turns) - 1 if sequence.then == "repeat" and turns else None


_new_step = fast_constructor(Step)
"""``Step(...)``, made once per decision (see :mod:`bench.engine.construct`)."""
_new_cell = fast_constructor(Cell)
"""``Cell(...)``, made once per replay."""


def _run(sequence: Sequence, pred: Predicate, safety_cap: int) -> Cell:
    """Replay `sequence` through `pred` until the loop stops, the script ends or the safety cap is
    reached; the cell, not yet judged. What the steps add up to is kept here, so that a time limit
    that strikes between two decisions keeps it too."""
    state = State(dialect=sequence.dialect, max_tokens=sequence.max_tokens)
    steps: list[Step] = []
    tools_run: list[str] = []
    tools_failed: list[str] = []
    tokens = [0]  # the input and output tokens of the turns decided on (Turn.usage), added up by the loop
    outer_steps, WATCH.steps = WATCH.steps, steps  # the time limit's watchdog sees this list grow
    GUARD.enter()  # print to stderr, no os._exit/fork/kill of the bench (bench.engine.contain)
    try:
        outcome, error = _decide_until_end(sequence, pred, safety_cap, state, steps, tools_run, tools_failed, tokens)
    except DecisionTimeout as exc:  # between two decisions: still the predicate's step that hung
        outcome, error = "crashed", str(exc)
    finally:
        WATCH.steps = outer_steps  # None, unless this replay runs inside another one's decide
        problem = GUARD.leave()
    if problem is not None and outcome != "crashed":  # it caught the Escape, or chdir'd, or took SIGALRM
        outcome, error = "crashed", f"step {state.step}: {problem}"
    final = steps[-1].decision if outcome == "stopped" else None
    return _new_cell(
        sequence=sequence.id,
        predicate=pred.name,
        outcome=outcome,
        steps=tuple(steps),
        reason=final.reason if final else None,
        ok=final.ok if final else None,
        tools_run=tuple(tools_run),
        tools_failed=tuple(tools_failed),
        reminders=state.reminders,
        resends=state.resends,
        tokens=tokens[0],
        error=error,
    )


def _decide_until_end(sequence: Sequence, pred: Predicate, safety_cap: int, state: State, steps: list[Step],
                      tools_run: list[str], tools_failed: list[str], tokens: list[int]) -> tuple[Outcome, str | None]:
    """Ask `pred` to decide on each turn that answers a request, adding each step to `steps` and what it
    adds up to (to `state`, and to the lists after it) until the loop stops, the script ends, the safety
    cap is reached or the predicate crashes; the outcome, and the crash's one-line error."""
    turns, rules, reasons, max_steps = sequence.turns, pred.rules or None, pred.reason_set, pred.max_steps
    index = step = 0  # index: the turn that answers the next request
    action: Action | None = None  # the previous decision's
    while action != "stop":
        step += 1
        if step > safety_cap:
            return "capped", None
        if action is not None:
            nxt = following(sequence, index, action)
            if nxt is None:
                return "running", None
            index = nxt
        elif not turns:
            return "running", None
        turn = turns[index]
        calls = turn.tool_calls
        state.step = step
        try:
            decision = pred.decide(turn, state)
            run, failed = check_decision(decision, len(calls), rules, reasons)
        except BaseException as exc:  # a predicate's bug, even sys.exit(), ends its cell, not the bench
            if isinstance(exc, KeyboardInterrupt) and user_interrupted():
                raise
            return "crashed", _crash_error(exc, step)
        action = decision.action
        if step == max_steps and action != "stop":
            decision, action = _capped(pred, decision), "stop"
        run_names = tuple([calls[i].name for i in run]) if run else ()
        failed_names = tuple([calls[i].name for i in failed]) if failed else ()
        if step > SHARE_AFTER:
            decision, run_names, failed_names = _shared(steps[-1], decision, run_names, failed_names)
        steps.append(_new_step(step, index, decision, run_names, failed_names))
        tools_run += run_names
        tools_failed += failed_names
        state.tools_run += len(run_names)
        state.tools_failed += len(failed_names)
        if turn.usage is not None:
            tokens[0] += turn.usage.input_tokens + turn.usage.output_tokens
        if action == "remind":
            state.reminders += 1
        elif action == "resend":
            state.resends += 1
        state.turns.append(turn)
        state.decisions.append(decision)
    return "stopped", None


def _capped(pred: Predicate, decision: Decision) -> Decision:
    """The loop's own cap in place of a decision that goes on at its last step: the cap's stop, with
    the tools of the step still run (and failed) as decided."""
    cap = pred.cap
    return Decision("stop", cap.rule, reason=cap.reason, ok=cap.ok, run=decision.run, failed=decision.failed)


def _shared(prev: Step, decision: Decision, run_names: tuple[str, ...],
            failed_names: tuple[str, ...]) -> tuple[Decision, tuple[str, ...], tuple[str, ...]]:
    """A long cell's step records (see :data:`SHARE_AFTER`): the previous step's objects where equal."""
    return (prev.decision if decision == prev.decision else decision,
            prev.tools_run if run_names == prev.tools_run else run_names,
            prev.tools_failed if failed_names == prev.tools_failed else failed_names)


def _crash_error(exc: BaseException, step: int) -> str:
    """The cell's one-line error for what a decide call raised, or for the decision the validator
    refused."""
    if isinstance(exc, KeyboardInterrupt):  # the predicate's own, not the user's Ctrl-C
        return f"step {step}: raised KeyboardInterrupt"
    if isinstance(exc, DecisionTimeout):
        return str(exc)
    if isinstance(exc, (InvalidDecision, Escape)):
        return f"step {step}: {exc}"
    return f"step {step}: {_describe(exc)}"


def _describe(exc: BaseException) -> str:
    """One line for an exception a predicate raised (``sys.exit`` said as such)."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) (a predicate cannot end the bench)"
    text = str(exc).replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
