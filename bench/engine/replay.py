"""The replay: request i is answered by turn i, whatever the loop sent, unless a turn reacts.

Open loop is the default: a resend, a reminder and a continue each consume one turn. A turn with
``after`` (the reactive form) names the turn that answers each kind of follow-up
(:func:`following`, shared with the replay server). Past the last turn, ``then: repeat``
answers with the last turn again and ``then: end`` ends the replay as ``running``. The loop's own
cap turns a non-stop decision at step ``max_steps`` into the cap's stop (tools of that step are
still run); the bench's safety cap ends the replay as ``capped``. A replay costs time linear in
its steps: the state grows by appending, never by copying the history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, TypeVar

from bench.engine.contain import WATCH, DecisionTimeout, user_interrupted
from bench.engine.judge import judge
from bench.engine.model import ACTIONS, Action, Cell, Decision, Sequence, Step, next_turn
from bench.engine.predicate import Predicate, State
from bench.engine.validate import ALL_CALLS, InvalidDecision, check_calls, check_decision

__all__ = ["DEFAULT_SAFETY_CAP", "InvalidDecision", "crashed_cell", "fast_constructor", "following", "replay"]

DEFAULT_SAFETY_CAP = 200
"""Requests after which the bench ends a replay as `capped` (far above any loop's own cap here)."""


def replay(sequence: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP, *,
           judged: bool = True) -> Cell:
    """Replay one sequence through one predicate and return the cell, judged against the
    sequence's requirements unless `judged` is false.

    Whatever the predicate does wrong (raises, calls ``sys.exit``, returns a decision that
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


T = TypeVar("T")


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen dataclass `cls` for the replay's hot path: the same object
    ``cls(...)`` builds (same parameters and defaults), made by setting its slots through their
    descriptors, which costs about half of the dataclass ``__init__`` (a frozen class's ``__init__``
    calls ``object.__setattr__`` by name per field). Generated once per class, as dataclasses
    generates its own ``__init__``. The corpus reader makes its sequences with it too."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__: the replay's constructor would skip it")
    ns: dict[str, Any] = {"new": object.__new__, "cls": cls, "MISSING": MISSING}
    params, body = [], []
    for i, f in enumerate(fields(cls)):  # type: ignore[arg-type]
        ns[f"set{i}"] = getattr(cls, f.name).__set__
        if f.default is not MISSING:
            ns[f"default{i}"] = f.default
            params.append(f"{f.name}=default{i}")
        elif f.default_factory is not MISSING:  # a fresh default per object, as the dataclass makes it
            ns[f"factory{i}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            body.append(f"    if {f.name} is MISSING: {f.name} = factory{i}()")
        else:
            params.append(f.name)
        body.append(f"    set{i}(obj, {f.name})")
    exec(f"def make({', '.join(params)}):\n    obj = new(cls)\n" + "\n".join(body) + "\n    return obj\n", ns)
    make: Callable[..., T] = ns["make"]
    return make


_new_step: Callable[..., Step] = fast_constructor(Step)
_new_cell: Callable[..., Cell] = fast_constructor(Cell)
_ACTIONS = frozenset(ACTIONS)
_NONE: tuple[int, ...] = ()
_NO_NAMES: tuple[str, ...] = ()
"""The empty selection. CPython has one empty tuple, so ``x is _NONE`` is the cheap exact test for
it; any other empty sequence fails it and goes to the validator."""


def _run(sequence: Sequence, pred: Predicate, safety_cap: int) -> Cell:
    turns = sequence.turns
    n_turns = len(turns)
    repeat = sequence.then == "repeat"
    decide = pred.decide
    max_steps = pred.max_steps if pred.max_steps is not None else -1
    rules = pred.rules or None
    reasons = pred.reason_set
    state = State(dialect=sequence.dialect, max_tokens=sequence.max_tokens)
    steps: list[Step] = []
    tools_run: list[str] = []
    tools_failed: list[str] = []
    add_step, add_turn, add_decision = steps.append, state.turns.append, state.decisions.append
    new_step = _new_step
    tokens = 0
    step = 0
    index = 0  # the turn answering the next request (open loop: the step's own number)
    turn = turns[0] if turns else None
    outcome = "running"
    error: str | None = None
    decision: Decision | None = None
    run: tuple[int, ...]
    failed: tuple[int, ...]

    outer_steps, WATCH.steps = WATCH.steps, steps  # the time limit's watchdog sees this list grow
    try:
        while True:
            if step >= safety_cap:
                outcome = "capped"
                break
            if step:
                # what `following` says, inline: the turn's `after` entry (next_turn), else the next turn
                # (open loop: request i gets turn i); past the last, then: repeat or end
                nxt = next_turn(turn, index, decision.action) if turn.after else index + 1  # type: ignore[union-attr,arg-type]
                if nxt < n_turns:
                    index = nxt
                elif repeat:
                    index = n_turns - 1
                else:
                    outcome = "running"
                    break
                turn = turns[index]
            elif turn is None:
                outcome = "running"
                break
            step += 1
            state.step = step
            calls = turn.tool_calls
            try:
                decision = decide(turn, state)
                # The common shapes are accepted inline; everything else is decided (and explained)
                # by the one validator. The inline test accepts nothing check_decision refuses (a
                # test pins this); an unhashable field makes it raise TypeError: the validator's turn.
                try:
                    fast = (type(decision) is Decision and (action := decision.action) in _ACTIONS
                            and ((rule := decision.rule) in rules if rules is not None
                                 else (type(rule := decision.rule) is str and rule != ""))
                            and decision.changes is None
                            and (action != "stop"
                                 or (type(decision.ok) is bool
                                     and ((reason := decision.reason) in reasons if reasons is not None
                                          else (type(reason := decision.reason) is str and reason != "")))))
                except TypeError:
                    fast = False
                if fast:
                    sel_run, sel_failed = decision.run, decision.failed
                    if sel_failed is _NONE and sel_run is _NONE:
                        run = failed = _NONE
                    elif sel_failed is _NONE and sel_run == "all" and len(calls) < 64:
                        run, failed = ALL_CALLS[len(calls)], _NONE
                    else:
                        run, failed = check_calls(sel_run, sel_failed, len(calls))
                else:
                    run, failed = check_decision(decision, len(calls), rules, reasons)
            except InvalidDecision as exc:
                outcome, error = "crashed", f"step {step}: {exc}"
                break
            except DecisionTimeout as exc:
                outcome, error = "crashed", str(exc)
                break
            except Exception as exc:  # the predicate's bug is reported in its cells, the run goes on
                outcome, error = "crashed", f"step {step}: {_describe(exc)}"
                break
            except KeyboardInterrupt:
                if user_interrupted():
                    raise
                outcome, error = "crashed", f"step {step}: raised KeyboardInterrupt"
                break
            except BaseException as exc:  # sys.exit() in a predicate must not end the bench
                outcome, error = "crashed", f"step {step}: {_describe(exc)}"
                break
            action = decision.action
            if step == max_steps and action != "stop":
                cap = pred.cap
                decision = Decision("stop", cap.rule, reason=cap.reason, ok=cap.ok,
                                    run=decision.run, failed=decision.failed)  # a stop sends no changes
                action = "stop"
            if run or failed:
                run_names = tuple([calls[i].name for i in run])
                failed_names = tuple([calls[i].name for i in failed])
                add_step(new_step(step, index, decision, run_names, failed_names))
                tools_run.extend(run_names)
                tools_failed.extend(failed_names)
                state.tools_run += len(run_names)
                state.tools_failed += len(failed_names)
            else:
                add_step(new_step(step, index, decision, _NO_NAMES, _NO_NAMES))
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
    except DecisionTimeout as exc:  # between two decisions: still the predicate's step that hung
        outcome, error = "crashed", str(exc)
    finally:
        WATCH.steps = outer_steps  # None, unless this replay runs inside another one's decide

    stopped = outcome == "stopped" and decision is not None
    return _new_cell(
        sequence=sequence.id,
        predicate=pred.name,
        outcome=outcome,
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


def _describe(exc: BaseException) -> str:
    """One line for an exception a predicate raised (``sys.exit`` said as such)."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) (a predicate cannot end the bench)"
    text = str(exc).replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
