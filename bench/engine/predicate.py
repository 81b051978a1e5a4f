"""The predicate API: what a loop port declares, and the state it decides from.

A predicate file defines one decide function and wraps it with :func:`predicate`, which
records the loop's cap, the stop reasons and rule ids it may return, and where each rule comes
from. The replay checks every decision against these declarations. The same call carries the
port's other facts, so they live in its file and travel with the :class:`Predicate` (a predicate
from an entry point has them as well as one from a file): the differences from the original loop
that conformance explains (``explained``, ``not_driven``) and why some mutants of the file survive
(``mutation_notes``, :class:`MutationNote`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Generic, ParamSpec

from bench.engine.cite import Citation, Cited
from bench.engine.model import Decision, Turn


@dataclass(slots=True)
class State:
    """What a loop knows when it decides: the step number and everything before this turn.

    The replay owns one State per cell and appends to it; `turns` and `decisions` are the
    earlier turns and decisions (not including the current turn). Predicates must not mutate
    them. `memo` is the predicate's own scratch space for counters a loop keeps (retries left,
    nudges sent): one fresh dict per cell, so a port need not rescan the history every step.
    `dialect` is the sequence's wire format, for a port whose loop maps raw finish strings
    through a provider-specific table. `max_tokens` is the request's max_tokens when the sequence
    records one (`Sequence.max_tokens`): a `stop` whose usage reaches it was cut off. The results of
    earlier tool calls are in `turns` (`ToolCall.result`, None for the default stub result);
    :meth:`same_rounds` counts the rounds that repeated them.
    """

    step: int = 0
    dialect: str = "openai-chat"
    max_tokens: int | None = None
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

    def same_rounds(self, turn: Turn) -> int:
        """How many tool rounds in a row, ending with the previous decision, ran the same calls
        (names and arguments) as `turn` carries and got the same results as each other: the rounds
        that made no progress before this one. A round is a `continue`; a resend in between is
        skipped; anything else ends the count."""
        calls = tuple((c.name, c.arguments) for c in turn.tool_calls)
        if not calls:
            return 0
        n = 0
        results: tuple[str | None, ...] | None = None
        for earlier, decision in zip(reversed(self.turns), reversed(self.decisions), strict=False):
            if decision.action == "resend":
                continue
            if decision.action != "continue" or tuple((c.name, c.arguments) for c in earlier.tool_calls) != calls:
                break
            got = tuple(c.result for c in earlier.tool_calls)
            if results is not None and got != results:
                break
            results = got
            n += 1
        return n

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


_DEFAULT_BELOW = ("the default is read only before the key is first set, and -1, 0 and 1 all pass "
                  "the first test (< 2)")
_RESET_AFTER_SUCCESS = ("a counter reset after a good response: only a second burst of the same "
                        "failure later in one run, reaching the budget, tells it apart; no sequence has one")


@dataclass(frozen=True, slots=True)
class MutationNote:
    """Why mutants of one source line of a port survive the mutation check (``python -m devtools.mutate``).

    `equivalent`: no replay can tell the mutant from the port; otherwise a coverage gap (a replay
    could, but no sequence does, and `why` says why none is added). `line` is a piece of the source
    line, `changes` the changes it explains as the check prints them (``"500 -> 499"``,
    ``"Stop: ok inverted"``; empty: every change on that line), `next` a piece of the line after it
    (to tell identical lines apart). Keyed by text, not line number, so edits elsewhere in the file
    keep it valid. The check reads a port's notes from its :class:`Predicate` and says when one
    explains no survivor.

    Example::

        @predicate(..., mutation_notes=[
            MutationNote("if status == 413:", "no sequence answers HTTP 413", equivalent=False),
            MutationNote.default_below('memo.get("sdk", 0) < SDK_RETRIES'),
        ])
    """

    line: str
    why: str
    changes: tuple[str, ...] = ()
    equivalent: bool = True
    next: str = ""

    @classmethod
    def default_below(cls, line: str) -> MutationNote:
        """A counter's default (0) moved by one, where it is read only before the key is first set
        and the test is ``< 2`` or wider: -1, 0 and 1 all pass it (equivalent)."""
        return cls(line, _DEFAULT_BELOW)

    @classmethod
    def reset_after_success(cls, line: str, next: str = "") -> MutationNote:
        """A failure counter reset after a good response, moved by one: only a second burst of the
        same failure later in one run tells it apart (a coverage gap)."""
        return cls(line, _RESET_AFTER_SUCCESS, equivalent=False, next=next)

    def matches(self, line_text: str, change: str, next_text: str) -> bool:
        """Whether this note explains a mutant with this source line, change and following line."""
        return (self.line in line_text and (not self.changes or change in self.changes)
                and self.next in next_text)


@dataclass(frozen=True, slots=True)
class Predicate:
    """A termination predicate: a decide function plus what it declares about itself.

    `name` is the column (the file's stem, filled in by discovery). `rules` maps each rule id to
    its citation as text (source lines, or why it exists); `citations` holds, for each rule declared
    with :class:`~bench.engine.cite.Cited`, the same citations as data, and `source_citations` the
    column's (the page links them). `reasons` are the stop reasons it may return.
    `unreachable` maps a rule id to why no sequence of an open-loop replay can make it fire (rule
    coverage, :mod:`bench.report.coverage`, lists these apart and a test fails if one fires after all).
    `explained` maps a sequence id to why the original loop, driven on the replay server, differs
    from the port there for a reason of the server, not of the loop's decisions
    (``reports/conformance.md`` counts it explained); `not_driven` maps a sequence id to why the
    conformance driver cannot produce it for this loop at all; `mutation_notes` say why mutants of
    the port's file survive (:class:`MutationNote`).
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
    explained: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    not_driven: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    mutation_notes: tuple[MutationNote, ...] = ()
    citations: Mapping[str, tuple[Citation, ...]] = field(default_factory=lambda: MappingProxyType({}))
    source_citations: tuple[Citation, ...] = ()
    reason_set: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Looked up on every stop of every replay: computed once here.
        object.__setattr__(self, "reason_set", frozenset(self.reasons) if self.reasons else None)

    def named(self, name: str, origin: str, description: str | None = None) -> Predicate:
        """A copy with its column name, origin and (if it had none) description filled in."""
        return replace(self, name=name, origin=origin, description=self.description or (description or ""))

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
    source: str | Cited = "constructed",
    max_steps: int | None = None,
    cap: Cap | None = None,
    reasons: tuple[str, ...] | list[str] = (),
    rules: Mapping[str, str | Cited] | None = None,
    description: str = "",
    cap_note: str = "",
    unreachable: Mapping[str, str] | None = None,
    explained: Mapping[str, str] | None = None,
    not_driven: Mapping[str, str] | None = None,
    mutation_notes: Seq[MutationNote] = (),
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
    `explained` and `not_driven` map sequence ids to why the original loop differs from the port
    there for a reason of the replay server, or cannot be driven there (``stopbench conform``);
    `mutation_notes` say why mutants of the file survive the mutation check (:class:`MutationNote`).
    A rule's citation (and `source`) is text or a :class:`~bench.engine.cite.Cited`: its places as
    data and its prose, from which the text is derived. A keyword is a :class:`Predicate` field of the
    same name (a mapping made read-only, a list a tuple; None leaves the field's default).
    """
    declared = dict(locals())  # the keywords above, as given: the one list of what a port declares

    def wrap(fn: DecideFn) -> Predicate:
        check_declarations(fn, declared)
        return Predicate(decide=fn, **_fields(fn, declared))

    return wrap


def _frozen(value: object) -> object:
    """A declared value as a Predicate holds it: a mapping read-only, a list or other sequence a tuple."""
    if isinstance(value, Mapping):
        return MappingProxyType(dict(value))
    if isinstance(value, Seq) and not isinstance(value, str):
        return tuple(value)
    return value


def _fields(fn: DecideFn, declared: Mapping[str, Any]) -> dict[str, Any]:
    """The Predicate's fields from :func:`predicate`'s keywords: each frozen (:func:`_frozen`), None left to
    the field's default; the description defaults to the decide function's first docstring line; a
    :class:`~bench.engine.cite.Cited` source or rule gives its text to the field and its places to
    `source_citations` or `citations`."""
    fields = {key: _frozen(value) for key, value in declared.items() if value is not None}
    source, rules = declared["source"], declared["rules"] or {}
    fields.update(
        description=declared["description"] or _first_line(fn.__doc__),
        source=str(source),
        source_citations=source.citations if isinstance(source, Cited) else (),
        rules=MappingProxyType({rid: str(v) for rid, v in rules.items()}),
        citations=MappingProxyType({rid: v.citations for rid, v in rules.items() if isinstance(v, Cited)}),
    )
    return fields


class DeclarationError(TypeError):
    """A predicate declares itself wrongly (raised when ``@predicate`` runs, so at import: the
    file becomes a broken predicate with this one-line message)."""


P = ParamSpec("P")


class PredicateFactory(Generic[P]):
    """A function that builds a :class:`Predicate` from its parameters: one loop's rules, shared by
    columns that configure them differently (the Vercel AI SDK's loop with a step limit of 1 or 5).

    It lives in a shared rules file (a predicate file whose name starts with ``_``), declared with
    :func:`predicate_factory`; a column gets it with :func:`bench.engine.discovery.shared_factory` and
    binds what it builds::

        generate_text = shared_factory(__file__, "_vercel_ai")
        decide = generate_text(step_limit=5, ...)

    A call whose parameters the function does not take, or a function that returns something
    other than a Predicate, raises :class:`DeclarationError`, so the column is a broken predicate
    with that one line.
    """

    def __init__(self, build: Callable[P, Predicate]) -> None:
        self.build = build
        self.__doc__ = build.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Predicate:
        name = getattr(self.build, "__name__", "factory")
        try:
            inspect.signature(self.build).bind(*args, **kwargs)
        except TypeError as exc:
            raise DeclarationError(f"{name}(): {exc}") from None
        built = self.build(*args, **kwargs)
        if not isinstance(built, Predicate):
            raise DeclarationError(f"{name}() built {type(built).__name__}, not a Predicate (decorate with @predicate)")
        return built


def predicate_factory(build: Callable[P, Predicate]) -> PredicateFactory[P]:
    """Declare the function of a shared rules file that builds a column's :class:`Predicate` from
    its parameters (:class:`PredicateFactory`); a shared rules file declares exactly one."""
    return PredicateFactory(build)


def check_declarations(fn: object, declared: Mapping[str, Any]) -> None:
    """Raise :class:`DeclarationError` on the first declaration the replay could not rely on:
    reasons and rules of the wrong types, a cap without a rule or reason, a `max_steps` that is not
    a positive whole number, an `unreachable` rule that is not declared, explanations that do not map
    sequence ids to text, mutation notes that are not :class:`MutationNote`, or a decide function
    that cannot be called as ``decide(turn, state)``. `declared` holds :func:`predicate`'s keywords."""
    _check_texts(declared)
    _check_cap(declared.get("max_steps"), declared.get("cap"))
    _check_reasons(declared.get("reasons"))
    _check_rules(declared.get("rules"), declared.get("unreachable"), declared.get("max_steps"), declared.get("cap"))
    for what in ("explained", "not_driven"):
        _check_sequence_texts(what, declared.get(what))
    _check_mutation_notes(declared.get("mutation_notes"))
    _check_decide(fn)


def _bad(msg: str) -> DeclarationError:
    return DeclarationError(f"@predicate: {msg}")


def _text(value: object) -> bool:
    """Whether `value` is a non-empty string."""
    return isinstance(value, str) and value != ""


def _check_texts(declared: Mapping[str, Any]) -> None:
    """``source``, ``description`` and ``cap_note`` are strings (``source`` may be a Cited)."""
    for name in ("source", "description", "cap_note"):
        value = declared.get(name, "")
        if not isinstance(value, str) and not (name == "source" and isinstance(value, Cited)):
            raise _bad(f"{name} must be a string, not {type(value).__name__}")


def _check_cap(max_steps: Any, cap: Any) -> None:
    """``max_steps`` is a positive whole number or None; a cap is a full :class:`Cap` under a ``max_steps``."""
    if max_steps is not None and (type(max_steps) is not int or max_steps < 1):
        raise _bad(f"max_steps must be a positive whole number or None, not {max_steps!r:.40}")
    if cap is None:
        return
    if not isinstance(cap, Cap):
        raise _bad(f"cap must be a Cap(reason=..., ok=..., rule=...), not {type(cap).__name__}")
    if not _text(cap.reason) or not _text(cap.rule) or type(cap.ok) is not bool:
        raise _bad(f"cap needs a non-empty reason and rule and ok=True/False, not {cap!r:.80}")
    if max_steps is None:
        raise _bad("cap is declared but max_steps is not: the cap would never apply")


def _check_reasons(reasons: Any) -> None:
    """``reasons`` is a list of distinct non-empty strings."""
    if isinstance(reasons, str) or not isinstance(reasons, tuple | list):
        raise _bad(f"reasons must be a list of strings, not {type(reasons).__name__} {reasons!r:.40}")
    for r in reasons:
        if not _text(r):
            raise _bad(f"reasons: {r!r:.40} is not a stop reason (a non-empty string)")
    if len(set(reasons)) != len(reasons):
        raise _bad(f"reasons: {sorted(r for r in set(reasons) if reasons.count(r) > 1)} declared twice")


def _check_rules(rules: Any, unreachable: Any, max_steps: Any, cap: Any) -> None:
    """``rules`` and ``unreachable`` map rule ids to citations; each unreachable rule is declared
    (in ``rules``, or the cap's rule under a ``max_steps``)."""
    for what, mapping in (("rules", rules), ("unreachable", unreachable)):
        if mapping is None:
            continue
        if not isinstance(mapping, Mapping):
            raise _bad(f"{what} must map rule ids to text, not {type(mapping).__name__}")
        for key, value in mapping.items():
            if not _text(key) or not (isinstance(value, str) or (what == "rules" and isinstance(value, Cited))):
                raise _bad(f"{what}: {key!r:.40}: {value!r:.40} is not a rule id (a non-empty string) "
                           "with its citation (a string) or a Cited")
    rule_ids: set[str] = set(rules) if rules is not None else set()
    if max_steps is not None:
        rule_ids.add(cap.rule if isinstance(cap, Cap) else Cap().rule)
    for key in unreachable or {}:
        if key not in rule_ids:
            raise _bad(f"unreachable: {key!r} is not a declared rule (declared: {', '.join(sorted(rule_ids))})")


def _check_sequence_texts(what: str, mapping: Any) -> None:
    """``explained`` or ``not_driven`` (`what`), when given, maps sequence ids to why."""
    if mapping is None:
        return
    if not isinstance(mapping, Mapping):
        raise _bad(f"{what} must map sequence ids to text, not {type(mapping).__name__}")
    for key, value in mapping.items():
        if not _text(key) or not _text(value):
            raise _bad(f"{what}: {key!r:.40}: {value!r:.40} is not a sequence id with why (non-empty strings)")


def _check_mutation_notes(mutation_notes: Any) -> None:
    """``mutation_notes`` is a list of :class:`MutationNote`."""
    if isinstance(mutation_notes, str) or not isinstance(mutation_notes, Seq):
        raise _bad(f"mutation_notes must be a list of MutationNote, not {type(mutation_notes).__name__}")
    for note in mutation_notes:
        if not isinstance(note, MutationNote):
            raise _bad(f"mutation_notes: {note!r:.40} is not a MutationNote(line, why, ...)")


def _check_decide(fn: object) -> None:
    """`fn` can be called as ``decide(turn, state)`` (a builtin without a signature is left to the replay)."""
    if not callable(fn):
        raise _bad(f"decorates {type(fn).__name__}, not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        params = ", ".join(inspect.signature(fn).parameters)
        raise _bad(f"{getattr(fn, '__name__', 'decide')}({params}) cannot be called as decide(turn, state)") from None
    except ValueError:  # a builtin without a signature: let the replay find out
        pass


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    return doc.strip().splitlines()[0].strip()
