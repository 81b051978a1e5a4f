"""The open-loop replay: request i is answered by turn i, whatever the loop sent.

A resend, a reminder and a continue each consume one turn. Past the last turn, ``then: repeat``
answers with the last turn again and ``then: end`` ends the replay as ``running``. The loop's own
cap turns a non-stop decision at step ``max_steps`` into the cap's stop (tools of that step are
still run); the bench's safety cap ends the replay as ``capped``. A replay costs time linear in
its steps: the state grows by appending, never by copying the history.
"""

from __future__ import annotations

from bench.judge import judge
from bench.model import ACTIONS, Cell, Decision, Sequence, Step
from bench.predicate import Predicate, State

DEFAULT_SAFETY_CAP = 200
"""Requests after which the bench ends a replay as `capped` (far above any loop's own cap here)."""


class InvalidDecision(Exception):
    """A predicate returned something that is not a well-formed decision it declared."""


def replay(sequence: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP, *,
           judged: bool = True) -> Cell:
    """Replay one sequence through one predicate and return the cell, judged against the
    sequence's requirements unless `judged` is false."""
    cell = _run(sequence, pred, safety_cap)
    if not judged:
        return cell
    violations = judge(sequence, cell)
    return cell.with_violations(violations) if violations else cell


def crashed_cell(sequence: str, predicate: str, error: str) -> Cell:
    """The cell of a predicate that could not even be loaded."""
    return Cell(sequence=sequence, predicate=predicate, outcome="crashed", steps=(), error=error)


_ACTIONS = frozenset(ACTIONS)
_ALL_CALLS = tuple(tuple(range(n)) for n in range(64))


def _run(sequence: Sequence, pred: Predicate, safety_cap: int) -> Cell:
    turns = sequence.turns
    n_turns = len(turns)
    repeat = sequence.then == "repeat"
    decide = pred.decide
    max_steps = pred.max_steps if pred.max_steps is not None else -1
    rules = pred.rules or None
    reasons = pred.reason_set
    state = State(dialect=sequence.dialect)
    steps: list[Step] = []
    tools_run: list[str] = []
    tools_failed: list[str] = []
    add_step, add_turn, add_decision = steps.append, state.turns.append, state.decisions.append
    tokens = 0
    step = 0
    outcome = "running"
    error: str | None = None
    decision: Decision | None = None
    run: tuple[int, ...]
    failed: tuple[int, ...]

    while True:
        if step >= safety_cap:
            outcome = "capped"
            break
        if step < n_turns:
            index = step
        elif repeat and n_turns:
            index = n_turns - 1
        else:
            outcome = "running"
            break
        turn = turns[index]
        step += 1
        state.step = step
        try:
            decision = decide(turn, state)
            # The common case is checked inline; anything unusual goes through _check for its message.
            if (type(decision) is not Decision or decision.action not in _ACTIONS
                    or (rules is not None and decision.rule not in rules)
                    or (decision.action == "stop" and (type(decision.ok) is not bool
                                                       or (reasons is not None and decision.reason not in reasons)))):
                _check(decision, rules, reasons)
            sel_run, sel_failed = decision.run, decision.failed
            calls = turn.tool_calls
            if not sel_failed:
                failed = ()
                if not sel_run:
                    run = ()
                elif sel_run == "all" and len(calls) < 64:
                    run = _ALL_CALLS[len(calls)]
                else:
                    run = _resolve(sel_run, len(calls), "run")
            else:
                run = _resolve(sel_run, len(calls), "run")
                failed = _resolve(sel_failed, len(calls), "failed")
                if run and set(run) & set(failed):
                    raise InvalidDecision("a tool call cannot be both run and failed")
        except InvalidDecision as exc:
            outcome, error = "crashed", f"step {step}: {exc}"
            break
        except Exception as exc:  # the predicate's bug is reported in its cells, the run goes on
            outcome, error = "crashed", f"step {step}: {type(exc).__name__}: {exc}"
            break
        action = decision.action
        if step == max_steps and action != "stop":
            cap = pred.cap
            decision = Decision("stop", cap.rule, reason=cap.reason, ok=cap.ok,
                                run=decision.run, failed=decision.failed)
            action = "stop"
        if run or failed:
            run_names = tuple([calls[i].name for i in run])
            failed_names = tuple([calls[i].name for i in failed])
            add_step(Step(step, index, decision, run_names, failed_names))
            tools_run.extend(run_names)
            tools_failed.extend(failed_names)
            state.tools_run += len(run_names)
            state.tools_failed += len(failed_names)
        else:
            add_step(Step(step, index, decision))
        usage = turn.usage
        if usage is not None:
            tokens += usage.input_tokens + usage.output_tokens
        if action == "remind":
            state.reminders += 1
        elif action == "resend":
            state.resends += 1
        add_turn(turn)
        add_decision(decision)
        if action == "stop":
            outcome = "stopped"
            break

    stopped = outcome == "stopped" and decision is not None
    return Cell(
        sequence=sequence.id,
        predicate=pred.name,
        outcome=outcome,  # type: ignore[arg-type]
        steps=tuple(steps),
        reason=decision.reason if stopped and decision is not None else None,
        ok=decision.ok if stopped and decision is not None else None,
        tools_run=tuple(tools_run),
        tools_failed=tuple(tools_failed),
        reminders=state.reminders,
        resends=state.resends,
        tokens=tokens,
        error=error,
    )


def _check(decision: object, rules: object, reasons: frozenset[str] | None) -> None:
    """Raise InvalidDecision saying what is wrong with a decision that failed the inline check."""
    if not isinstance(decision, Decision):
        raise InvalidDecision(f"returned {type(decision).__name__} {decision!r:.80}, not a Decision")
    if decision.action not in _ACTIONS:
        raise InvalidDecision(f"action {decision.action!r} is not one of {', '.join(ACTIONS)}")
    if rules is not None and decision.rule not in rules:  # type: ignore[operator]
        raise InvalidDecision(f"rule {decision.rule!r} is not declared by the predicate")
    if decision.action == "stop":
        if not isinstance(decision.ok, bool):
            raise InvalidDecision("a stop must say ok=True or ok=False")
        if reasons is not None and decision.reason not in reasons:
            raise InvalidDecision(f"stop reason {decision.reason!r} is not declared by the predicate")


def _resolve(selection: object, n: int, what: str) -> tuple[int, ...]:
    """A decision's `run` or `failed` as call indices of a turn with `n` calls."""
    if selection == "all":
        return _ALL_CALLS[n] if n < 64 else tuple(range(n))
    if not isinstance(selection, tuple):
        raise InvalidDecision(f"{what} must be 'all' or a tuple of call indices, not {selection!r:.40}")
    for i in selection:
        if not isinstance(i, int) or not 0 <= i < n:
            raise InvalidDecision(f"{what} names call {i!r}, but the turn carries {n} tool call(s)")
    if len(set(selection)) != len(selection):
        raise InvalidDecision(f"{what} names a call twice")
    return selection
