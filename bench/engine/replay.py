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


def _run(sequence: Sequence, pred: Predicate, safety_cap: int) -> Cell:
    """Replay `sequence` through `pred` until the loop stops, the script ends or the safety cap is
    reached; the cell, not yet judged."""
    turns = sequence.turns
    rules = pred.rules or None
    reasons = pred.reason_set
    state = State(dialect=sequence.dialect, max_tokens=sequence.max_tokens)
    steps: list[Step] = []
    tools_run: list[str] = []
    tools_failed: list[str] = []
    tokens = 0
    index = 0  # the turn that answers the next request
    decision: Decision | None = None
    outcome: Outcome = "running"
    error: str | None = None

    outer_steps, WATCH.steps = WATCH.steps, steps  # the time limit's watchdog sees this list grow
    GUARD.enter()  # print to stderr, no os._exit/fork/kill of the bench (bench.engine.contain)
    try:
        while True:
            step = len(steps) + 1
            if step > safety_cap:
                outcome = "capped"
                break
            if decision is not None:
                nxt = following(sequence, index, decision.action)
                if nxt is None:
                    break
                index = nxt
            elif not turns:
                break
            turn = turns[index]
            calls = turn.tool_calls
            state.step = step
            try:
                decision = pred.decide(turn, state)
                run, failed = check_decision(decision, len(calls), rules, reasons)
            except KeyboardInterrupt:
                if user_interrupted():
                    raise
                outcome, error = "crashed", f"step {step}: raised KeyboardInterrupt"
                break
            except BaseException as exc:  # a predicate's bug, even sys.exit(), ends its cell, not the bench
                outcome, error = "crashed", _crash_error(exc, step)
                break
            if step == pred.max_steps and decision.action != "stop":
                cap = pred.cap  # the loop's own cap: this step's tools still run, then the cap's stop
                decision = Decision("stop", cap.rule, reason=cap.reason, ok=cap.ok,
                                    run=decision.run, failed=decision.failed)
            run_names = tuple([calls[i].name for i in run]) if run else ()
            failed_names = tuple([calls[i].name for i in failed]) if failed else ()
            if step > SHARE_AFTER and steps:  # a long cell: a step like the previous one shares its records
                prev = steps[-1]
                if decision == prev.decision:
                    decision = prev.decision
                if run_names == prev.tools_run:
                    run_names = prev.tools_run
                if failed_names == prev.tools_failed:
                    failed_names = prev.tools_failed
            steps.append(_new_step(step, index, decision, run_names, failed_names))
            tools_run += run_names
            tools_failed += failed_names
            state.tools_run += len(run_names)
            state.tools_failed += len(failed_names)
            if turn.usage is not None:
                tokens += turn.usage.input_tokens + turn.usage.output_tokens
            if decision.action == "remind":
                state.reminders += 1
            elif decision.action == "resend":
                state.resends += 1
            state.turns.append(turn)
            state.decisions.append(decision)
            if decision.action == "stop":
                outcome = "stopped"
                break
    except DecisionTimeout as exc:  # between two decisions: still the predicate's step that hung
        outcome, error = "crashed", str(exc)
    finally:
        WATCH.steps = outer_steps  # None, unless this replay runs inside another one's decide
        problem = GUARD.leave()
    if problem is not None and outcome != "crashed":  # it caught the Escape, or chdir'd, or took SIGALRM
        outcome, error = "crashed", f"step {state.step}: {problem}"

    final = decision if outcome == "stopped" else None
    return Cell(
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
        tokens=tokens,
        error=error,
    )


def _crash_error(exc: BaseException, step: int) -> str:
    """The cell's one-line error for what a decide call raised, or for the decision the validator
    refused."""
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
