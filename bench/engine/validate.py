"""The one decision validator: what makes a predicate's return value a decision the bench accepts.

Used by the replay (a bad decision crashes the cell, with this module's message) and by fuzzing
(the same problems, filed under the property they break). A decision is valid when:

* it is a :class:`~bench.engine.model.Decision` whose action is one of ``continue``, ``resend``,
  ``remind``, ``stop``;
* its rule is a non-empty string, and one the predicate declares (when it declares rules);
* a stop says ``ok=True`` or ``ok=False`` (a bool, not 1 or None) and gives a non-empty reason,
  one the predicate declares (when it declares reasons);
* ``changes`` is None or a :class:`~bench.engine.model.RequestChanges` whose fields have their types
  (``max_tokens`` a positive int, ``model`` and ``tool_choice`` non-empty strings, ``compact`` a
  bool) and that changes something; a stop carries none (it sends no next request);
* ``run`` and ``failed`` are each ``"all"`` or a tuple of call indices: ints (not bools, which
  Python counts as ints), within the turn's tool calls, none named twice, none both run and
  failed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from bench.engine.model import ACTIONS, Decision, RequestChanges

Kind = Literal["well-formed", "declared-reasons", "no-phantom-tools"]
"""What a problem breaks, named after the fuzz property that reports it."""

_ACTIONS = frozenset(ACTIONS)
ALL_CALLS: tuple[tuple[int, ...], ...] = tuple(tuple(range(n)) for n in range(64))
"""``ALL_CALLS[n]`` is the selection ``"all"`` of a turn with n < 64 calls (shared, not rebuilt)."""


class InvalidDecision(Exception):
    """A predicate returned something that is not a well-formed decision it declared.

    `kind` says which property the problem breaks; ``str()`` is the one-line message."""

    def __init__(self, message: str, kind: Kind = "well-formed") -> None:
        super().__init__(message)
        self.kind: Kind = kind


def check_decision(decision: object, n_calls: int, rules: Collection[str] | None,
                   reasons: Collection[str] | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Check `decision` (returned on a turn carrying `n_calls` tool calls) against the rules and
    stop reasons a predicate declares (None: it declares none, any non-empty string goes).

    Returns the call indices it runs and fails; raises :class:`InvalidDecision` on the first
    problem found. The replay calls it on every decision, so the common selections (nothing
    failed, ``run`` empty or ``"all"``) are answered before the general check of call indices."""
    if not isinstance(decision, Decision):
        raise InvalidDecision(f"returned {type(decision).__name__} {decision!r:.80}, not a Decision")
    action, rule = decision.action, decision.rule
    if not isinstance(action, str) or action not in _ACTIONS:
        raise InvalidDecision(f"action {action!r:.40} is not one of {', '.join(ACTIONS)}")
    if not isinstance(rule, str) or not rule:
        raise InvalidDecision(f"rule {rule!r:.40} is not a rule id (a non-empty string)")
    if rules is not None and rule not in rules:
        raise InvalidDecision(f"rule {rule!r} is not declared by the predicate "
                              f"(declared: {', '.join(sorted(rules))})")
    if action == "stop":
        _check_stop(decision, reasons)
    if decision.changes is not None:
        check_changes(decision.changes, action)
    run, failed = decision.run, decision.failed
    if type(failed) is tuple and not failed:  # the common selections, without building anything
        if type(run) is tuple and not run:
            return run, failed
        if type(run) is str and run == "all" and n_calls < 64:
            return ALL_CALLS[n_calls], failed
    return check_calls(run, failed, n_calls)


def _check_stop(decision: Decision, reasons: Collection[str] | None) -> None:
    """A stop's verdict and reason."""
    if type(decision.ok) is not bool:
        raise InvalidDecision(f"a stop must say ok=True or ok=False, not ok={decision.ok!r:.40}")
    reason = decision.reason
    if not isinstance(reason, str) or not reason:
        raise InvalidDecision(f"a stop needs a reason (a non-empty string), not {reason!r:.40}",
                              "declared-reasons")
    if reasons is not None and reason not in reasons:
        raise InvalidDecision(f"stop reason {reason!r} is not declared by the predicate "
                              f"(declared: {', '.join(sorted(reasons))})", "declared-reasons")


def check_changes(changes: object, action: str) -> None:
    """A decision's `changes`: a RequestChanges with well-typed fields, not on a stop, not empty."""
    if type(changes) is not RequestChanges:
        raise InvalidDecision(f"changes must be a RequestChanges or None, not {changes!r:.60}")
    if action == "stop":
        raise InvalidDecision("a stop sends no next request, so it carries no changes")
    mt = changes.max_tokens
    if mt is not None and (type(mt) is not int or mt <= 0):
        raise InvalidDecision(f"changes.max_tokens must be a positive int, not {mt!r:.40}")
    for name in ("model", "tool_choice"):
        value = getattr(changes, name)
        if value is not None and (type(value) is not str or not value):
            raise InvalidDecision(f"changes.{name} must be a non-empty string, not {value!r:.40}")
    if type(changes.compact) is not bool:
        raise InvalidDecision(f"changes.compact must be a bool, not {changes.compact!r:.40}")
    if changes == RequestChanges():
        raise InvalidDecision("changes changes nothing: give None instead of an empty RequestChanges")


def check_calls(run: object, failed: object, n_calls: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The part of :func:`check_decision` about tool calls: a decision's `run` and `failed` as
    call indices of a turn carrying `n_calls` calls, or :class:`InvalidDecision`."""
    run_calls = _calls(run, n_calls, "run")
    failed_calls = _calls(failed, n_calls, "failed")
    if run_calls and failed_calls:
        both = set(run_calls) & set(failed_calls)
        if both:
            raise InvalidDecision(f"call(s) {sorted(both)} both run and failed")
    return run_calls, failed_calls


def _calls(selection: object, n: int, what: str) -> tuple[int, ...]:
    """A decision's `run` or `failed` as call indices of a turn with `n` calls."""
    if isinstance(selection, str) and selection == "all":
        return ALL_CALLS[n] if n < 64 else tuple(range(n))
    if type(selection) is not tuple:
        raise InvalidDecision(f"{what} must be 'all' or a tuple of call indices (ints), not {selection!r:.40}")
    for i in selection:
        if type(i) is not int:
            raise InvalidDecision(f"{what} must be 'all' or a tuple of call indices (ints), not {selection!r:.40}")
    for i in selection:
        if not 0 <= i < n:
            raise InvalidDecision(f"{what} names call(s) {[i for i in selection if not 0 <= i < n]}, but the turn "
                                  f"carries {n} tool call(s)", "no-phantom-tools")
    if len(selection) > 1 and len(set(selection)) != len(selection):
        raise InvalidDecision(f"{what} names a call twice: {selection}")
    return selection
