"""The predicate API: what a loop port declares, and the state it decides from.

A predicate file defines one decide function and wraps it with :func:`predicate`, which
records the loop's cap, the stop reasons and rule ids it may return, and where each rule comes
from. The replay checks every decision against these declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from bench.model import Decision, Turn


@dataclass(slots=True)
class State:
    """What a loop knows when it decides: the step number and everything before this turn.

    The replay owns one State per cell and appends to it; `turns` and `decisions` are the
    earlier turns and decisions (not including the current turn). Predicates must not mutate
    them. `memo` is the predicate's own scratch space for counters a loop keeps (retries left,
    nudges sent): one fresh dict per cell, so a port need not rescan the history every step.
    `dialect` is the sequence's wire format, for a port whose loop maps raw finish strings
    through a provider-specific table.
    """

    step: int = 0
    dialect: str = "openai-chat"
    turns: list[Turn] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    reminders: int = 0
    resends: int = 0
    tools_run: int = 0
    tools_failed: int = 0
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def last(self) -> Decision | None:
        """The previous decision, or None on the first step."""
        return self.decisions[-1] if self.decisions else None

    def streak(self, action: str, rule: str | None = None) -> int:
        """How many decisions in a row, ending with the previous one, had this action (and rule)."""
        n = 0
        for decision in reversed(self.decisions):
            if decision.action != action or (rule is not None and decision.rule != rule):
                break
            n += 1
        return n


DecideFn = Callable[[Turn, State], Decision]


@dataclass(frozen=True, slots=True)
class Cap:
    """What the loop does when it has made `max_steps` requests without stopping."""

    reason: str = "max_steps"
    ok: bool = False
    rule: str = "cap"


@dataclass(frozen=True, slots=True)
class Predicate:
    """A termination predicate: a decide function plus what it declares about itself.

    `name` is the column (the file's stem, filled in by discovery). `rules` maps each rule id to
    its citation (source lines, or why it exists). `reasons` are the stop reasons it may return.
    `unreachable` maps a rule id to why no sequence of an open-loop replay can make it fire (rule
    coverage, :mod:`bench.coverage`, lists these apart and a test fails if one fires after all).
    """

    decide: DecideFn
    name: str = ""
    description: str = ""
    source: str = "constructed"
    max_steps: int | None = None
    cap: Cap = field(default_factory=Cap)
    reasons: tuple[str, ...] = ()
    rules: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    origin: str = ""
    cap_note: str = ""
    unreachable: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    reason_set: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Looked up on every stop of every replay: computed once here.
        object.__setattr__(self, "reason_set", frozenset(self.reasons) if self.reasons else None)

    def named(self, name: str, origin: str, description: str | None = None) -> Predicate:
        """A copy with its column name, origin and (if it had none) description filled in."""
        return Predicate(
            decide=self.decide,
            name=name,
            description=self.description or (description or ""),
            source=self.source,
            max_steps=self.max_steps,
            cap=self.cap,
            reasons=self.reasons,
            rules=self.rules,
            origin=origin,
            cap_note=self.cap_note,
            unreachable=self.unreachable,
        )

    @property
    def all_reasons(self) -> frozenset[str]:
        """Declared stop reasons, including the cap's when the loop has a cap."""
        extra = {self.cap.reason} if self.max_steps is not None else set()
        return frozenset(self.reasons) | extra

    @property
    def all_rules(self) -> frozenset[str]:
        extra = {self.cap.rule} if self.max_steps is not None else set()
        return frozenset(self.rules) | extra


def predicate(
    *,
    source: str = "constructed",
    max_steps: int | None = None,
    cap: Cap | None = None,
    reasons: tuple[str, ...] | list[str] = (),
    rules: Mapping[str, str] | None = None,
    description: str = "",
    cap_note: str = "",
    unreachable: Mapping[str, str] | None = None,
) -> Callable[[DecideFn], Predicate]:
    """Turn a decide function into a :class:`Predicate`.

    Example::

        @predicate(max_steps=8, reasons=["no_tool_calls"],
                   rules={"calls": "tool calls present", "done": "no tool calls"})
        def decide(turn, state):
            if turn.tool_calls:
                return Continue("calls")
            return Stop("no_tool_calls", ok=True, rule="done")

    When `rules` or `reasons` are left empty the replay does not check decisions against them.
    `cap_note` describes a cap the port counts itself because the loop's unit is not a request
    (rounds that exclude retries, iterations with a final summary call); it is shown, not enforced.
    `unreachable` names declared rules that cannot fire in an open-loop replay, each with the reason.
    """

    def wrap(fn: DecideFn) -> Predicate:
        return Predicate(
            decide=fn,
            description=description or _first_line(fn.__doc__),
            source=source,
            max_steps=max_steps,
            cap=cap or Cap(),
            reasons=tuple(reasons),
            rules=MappingProxyType(dict(rules or {})),
            cap_note=cap_note,
            unreachable=MappingProxyType(dict(unreachable or {})),
        )

    return wrap


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    return doc.strip().splitlines()[0].strip()
