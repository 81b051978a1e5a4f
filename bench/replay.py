"""The open-loop replay: request i is answered by turn i, whatever the loop sent.

A resend, a reminder and a continue each consume one turn. Past the last turn, ``then: repeat``
answers with the last turn again and ``then: end`` ends the replay as ``running``. The loop's own
cap turns a non-stop decision at step ``max_steps`` into the cap's stop (tools of that step are
still run); the bench's safety cap ends the replay as ``capped``. A replay costs time linear in
its steps: the state grows by appending, never by copying the history.
"""

from __future__ import annotations

from dataclasses import replace

from bench.judge import judge
from bench.model import ACTIONS, Cell, Decision, Sequence, Step, Turn, Violation
from bench.predicate import Predicate, State

DEFAULT_SAFETY_CAP = 200
"""Requests after which the bench ends a replay as `capped` (far above any loop's own cap here)."""


class InvalidDecision(Exception):
    """A predicate returned something that is not a well-formed decision it declared."""


def replay(sequence: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP) -> Cell:
    """Replay one sequence through one predicate and return the judged cell."""
    cell = _run(sequence, pred, safety_cap)
    violations = judge(sequence, cell)
    if violations:
        cell = _with_violations(cell, violations)
    return cell


def crashed_cell(sequence: str, predicate: str, error: str) -> Cell:
    """The cell of a predicate that could not even be loaded."""
    return Cell(sequence=sequence, predicate=predicate, outcome="crashed", steps=(), error=error)


def _run(sequence: Sequence, pred: Predicate, safety_cap: int) -> Cell:
    turns = sequence.turns
    n_turns = len(turns)
    repeat = sequence.then == "repeat"
    decide = pred.decide
    max_steps = pred.max_steps
    state = State()
    steps: list[Step] = []
    tools_run: list[str] = []
    tools_failed: list[str] = []
    tokens = 0
    step = 0
    outcome = "running"
    error: str | None = None
    last: Decision | None = None

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
            run, failed = _check(decision, turn, pred)
        except InvalidDecision as exc:
            outcome, error = "crashed", f"step {step}: {exc}"
            break
        except Exception as exc:  # the predicate's bug is reported in its cells, the run goes on
            outcome, error = "crashed", f"step {step}: {type(exc).__name__}: {exc}"
            break
        if decision.action != "stop" and max_steps is not None and step >= max_steps:
            cap = pred.cap
            decision = Decision("stop", cap.rule, reason=cap.reason, ok=cap.ok,
                                run=decision.run, failed=decision.failed)
        calls = turn.tool_calls
        run_names = tuple(calls[i].name for i in run)
        failed_names = tuple(calls[i].name for i in failed)
        steps.append(Step(step, index, decision, run_names, failed_names))
        tools_run.extend(run_names)
        tools_failed.extend(failed_names)
        state.tools_run += len(run_names)
        state.tools_failed += len(failed_names)
        if turn.usage is not None:
            tokens += turn.usage.input_tokens + turn.usage.output_tokens
        action = decision.action
        if action == "remind":
            state.reminders += 1
        elif action == "resend":
            state.resends += 1
        state.turns.append(turn)
        state.decisions.append(decision)
        last = decision
        if action == "stop":
            outcome = "stopped"
            break

    stopped = outcome == "stopped" and last is not None
    return Cell(
        sequence=sequence.id,
        predicate=pred.name,
        outcome=outcome,  # type: ignore[arg-type]
        steps=tuple(steps),
        reason=last.reason if stopped and last is not None else None,
        ok=last.ok if stopped and last is not None else None,
        tools_run=tuple(tools_run),
        tools_failed=tuple(tools_failed),
        reminders=state.reminders,
        resends=state.resends,
        tokens=tokens,
        error=error,
    )


def _check(decision: object, turn: Turn, pred: Predicate) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validate a decision against the turn and the predicate's declarations; resolve its calls."""
    if not isinstance(decision, Decision):
        raise InvalidDecision(f"returned {type(decision).__name__} {decision!r:.80}, not a Decision")
    if decision.action not in ACTIONS:
        raise InvalidDecision(f"action {decision.action!r} is not one of {', '.join(ACTIONS)}")
    if pred.rules and decision.rule not in pred.rules:
        raise InvalidDecision(f"rule {decision.rule!r} is not declared by the predicate")
    if decision.action == "stop":
        if not isinstance(decision.ok, bool):
            raise InvalidDecision("a stop must say ok=True or ok=False")
        if pred.reasons and decision.reason not in pred.reasons:
            raise InvalidDecision(f"stop reason {decision.reason!r} is not declared by the predicate")
    n = len(turn.tool_calls)
    run = _resolve(decision.run, n, "run")
    failed = _resolve(decision.failed, n, "failed")
    if set(run) & set(failed):
        raise InvalidDecision("a tool call cannot be both run and failed")
    return run, failed


def _resolve(selection: object, n: int, what: str) -> tuple[int, ...]:
    if selection == "all":
        return tuple(range(n))
    if not isinstance(selection, tuple):
        raise InvalidDecision(f"{what} must be 'all' or a tuple of call indices, not {selection!r:.40}")
    for i in selection:
        if not isinstance(i, int) or not 0 <= i < n:
            raise InvalidDecision(f"{what} names call {i!r}, but the turn carries {n} tool call(s)")
    if len(set(selection)) != len(selection):
        raise InvalidDecision(f"{what} names a call twice")
    return selection


def _with_violations(cell: Cell, violations: tuple[Violation, ...]) -> Cell:
    return replace(cell, violations=violations)
