"""The bench's vocabulary: turns, sequences, decisions, steps and cells.

These are plain frozen dataclasses so that a replay allocates little and a predicate reads
fields at attribute speed. Files are validated into them by :mod:`bench.catalogue.load`; nothing here
parses or checks input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

Finish: TypeAlias = Literal["stop", "tool_calls", "length", "content_filter", "error", "unknown"]
"""Canonical finish reason, mapped from the provider's raw string by a dialect table."""

FINISHES: tuple[Finish, ...] = ("stop", "tool_calls", "length", "content_filter", "error", "unknown")

Dialect: TypeAlias = Literal["openai-chat", "anthropic", "openai-responses", "gemini", "bedrock-converse",
                          "ollama", "cohere"]
"""Wire format a turn's raw finish string belongs to; it selects the finish table."""

Action: TypeAlias = Literal["continue", "resend", "remind", "stop"]
"""What a loop does after one turn: run tools and ask again, ask again unchanged, add a
harness message and ask again, or end."""

ACTIONS: tuple[Action, ...] = ("continue", "resend", "remind", "stop")

Outcome: TypeAlias = Literal["stopped", "running", "capped", "crashed"]
"""How a replay ended: the loop stopped; the sequence ended (`then: end`) while the loop still
asked for a response; the bench's safety cap ended it; the predicate raised or misbehaved."""

OUTCOMES: tuple[Outcome, ...] = ("stopped", "running", "capped", "crashed")

Then: TypeAlias = Literal["repeat", "end"]
"""What answers requests past the last turn: the last turn again, or nothing (outcome running)."""

Kind: TypeAlias = Literal["recorded", "constructed"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the loop received it; `arguments` is the raw string, maybe invalid JSON."""

    id: str
    name: str
    arguments: str = "{}"
    result: str | None = None
    """What the tool returns when this call is run (None: the default stub result, the same every
    time), so a sequence can say that a round's results never change (``require: progress``)."""


ErrorKind: TypeAlias = Literal[
    "rate_limit", "quota", "overloaded", "server_error", "timeout", "connection_refused", "connection_reset",
    "stream_cut", "stream_error", "context_overflow", "invalid_request", "authentication", "permission",
    "not_found", "content_filter", "http_status",
]
"""What went wrong, as a closed vocabulary (like :data:`Finish`), so that no port and no server guesses it
from words in a message:

- ``rate_limit``: 429, a provider rate limit;
- ``quota``: quota or billing exhausted (OpenAI's ``insufficient_quota`` 429, a 402);
- ``overloaded``: the provider is overloaded (Anthropic's 529 ``overloaded_error``, "model overloaded" 503/409);
- ``server_error``: any other 5xx;
- ``timeout``: no response in time (a client timeout, 408, a gateway's 504);
- ``connection_refused``: no connection was made;
- ``connection_reset``: the connection dropped after the response started (mid-stream, mid-body);
- ``stream_cut``: the stream ended cleanly, but without a finish and without an error event;
- ``stream_error``: an error event inside a stream (SSE ``error``, ``response.failed``, a Gemini error chunk);
- ``context_overflow``: the request exceeds the context window (400/413 ``context_length_exceeded``, ...);
- ``invalid_request``: any other 400/422;
- ``authentication``: 401; ``permission``: 403; ``not_found``: 404 (an unknown model);
- ``content_filter``: the request itself refused by a safety filter, as an error (Azure's 400, Gemini's
  blocked prompt);
- ``http_status``: any other HTTP status.
"""

ERROR_KINDS: tuple[ErrorKind, ...] = (
    "rate_limit", "quota", "overloaded", "server_error", "timeout", "connection_refused", "connection_reset",
    "stream_cut", "stream_error", "context_overflow", "invalid_request", "authentication", "permission",
    "not_found", "content_filter", "http_status",
)


@dataclass(frozen=True, slots=True)
class TurnError:
    """A transport or provider error received in place of a normal response.

    A port and the replay server read `kind` and `status` only (a test in tests/unit holds them to
    it); `message` and `code` are the provider's words, kept as data for people and echoed by the
    server in the body it renders. `context_window` is the window an overflow error reports, in
    tokens, where the provider's message gives one (a loop that reads the number, as Hermes does,
    reads it here, not from the text).
    """

    kind: ErrorKind
    message: str = ""
    status: int | None = None
    code: str | None = None
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Turn:
    """One model response, after any streaming is assembled.

    `finish_raw` is the provider's own string (None when the provider sent none); `finish` is
    its canonical form. `end_turn` is the Responses API flag (None when absent). `steer` is a
    user message that arrived while this response was generated (the steering case).
    """

    finish: Finish
    finish_raw: str | None = None
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    error: TurnError | None = None
    usage: Usage | None = None
    end_turn: bool | None = None
    finish_detail: str | None = None
    steer: str | None = None
    after: tuple[tuple[Action, int], ...] = ()
    """The reactive form: which turn answers each kind of follow-up to this one, as (action, turn
    index) pairs in the order continue, resend, remind (YAML ``after: {remind: 3, resend: 1}``).
    An action left out, or no ``after`` at all, is answered by the next turn (open loop, the
    default). :func:`next_turn` is the one reading of it."""
    refusal: str | None = None
    """The model's refusal text, whatever the finish says (chat ``message.refusal``, often with
    finish ``stop``; a Responses ``refusal`` content part; the text of an Anthropic ``refusal``)."""


def next_turn(turn: Turn, index: int, action: Action) -> int:
    """The index of the turn that answers the request a loop sends after `turn` (at `index`).

    The one rule the replay and the replay server share: the turn's ``after`` entry for `action`
    if it has one, else ``index + 1`` (open loop). The result may be past the last turn; what
    answers then (``then: repeat`` or ``end``) is the caller's business. `stop` sends no request,
    so it is never in ``after`` and gets ``index + 1`` like any action left out.
    """
    for name, target in turn.after:
        if name == action:
            return target
    return index + 1


@dataclass(frozen=True, slots=True)
class Requirement:
    """What a correct loop must do on a sequence (all fields optional).

    ok: the loop's verdict must be this (false: it must not report success).
    stops_within: the loop must stop within this many steps (requests).
    no_dropped_calls: no tool call is dropped silently: every call of a turn is run or failed,
        unless the loop gives up openly (a stop with ok false) or resends a turn that is not usable
        as it stands (an error, a truncated reply, or a call whose arguments are not valid JSON:
        Hermes' fix for truncated calls, predicates/hermes.py). Resending a usable turn that carries
        calls throws them away.
    no_truncated_runs: no tool call of a `length` turn is run (failing it is fine).
    answer_after_tools: success is reported only on a turn that carries no tool calls, so every
        tool result reaches the model before the answer.
    answer_on: success may be reported only on one of these turns (0-based indices into
        `turns`): the others are not answers (an empty stop, a pause, a tool call left as text,
        a truncated turn) even where the finish says stop. It does not require success; pair it
        with `ok: true` for that.
    no_malformed_runs: no tool call whose `arguments` is not valid JSON is run, whatever the
        finish says (a truncation hidden behind `tool_calls`); failing it is fine; an empty string
        counts as no arguments.
    progress: after this many rounds in a row that ran the same calls and got the same results
        (`ToolCall.result`), the loop must not run them plainly once more: it stops, reminds, or
        changes the next request (`Decision.changes`). Results that change are progress (a poll
        that moves).
    """

    ok: bool | None = None
    stops_within: int | None = None
    no_dropped_calls: bool = False
    no_truncated_runs: bool = False
    answer_after_tools: bool = False
    answer_on: tuple[int, ...] | None = None
    no_malformed_runs: bool = False
    progress: int | None = None

    def is_empty(self) -> bool:
        return self == _NO_REQUIREMENT


_NO_REQUIREMENT = Requirement()
"""What :meth:`Requirement.is_empty` compares with, made once: the judge asks on every cell."""


@dataclass(frozen=True, slots=True)
class Sequence:
    """One scripted model, replayed: request i is answered by turn i."""

    id: str
    title: str
    kind: Kind
    dialect: Dialect
    source: str
    turns: tuple[Turn, ...]
    then: Then = "end"
    tags: tuple[str, ...] = ()
    require: Requirement = field(default_factory=Requirement)
    path: str = ""
    max_tokens: int | None = None
    """The request's max_tokens when the recording had one: a `stop` whose usage.output_tokens
    equals it is a truncation the finish does not say."""


ALL: Literal["all"] = "all"
"""Marker for "every tool call of the turn" in a decision's `run` or `failed`."""


@dataclass(frozen=True, slots=True)
class RequestChanges:
    """What the loop changes in its next request, beyond adding messages. All optional; a closed set.

    A loop often answers an odd turn by changing the request rather than only resending it: a
    higher `max_tokens` after a `length` turn, a fallback model, a compacted context, a forced
    tool choice. The fields, in this order, are the ones golden and step YAML write.
    """

    max_tokens: int | None = None
    """The new max_tokens (e.g. raised after a `length` turn)."""
    model: str | None = None
    """A fallback model."""
    compact: bool = False
    """The context was compacted or summarised before the next request."""
    tool_choice: str | None = None
    """A forced tool choice: "required", "none", "auto" or a tool name."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What the loop does after one turn, and which rule of the predicate made it.

    `run` and `failed` name the turn's tool calls (by index, or ``"all"``) that were executed
    or answered with an error result instead. `reason` and `ok` only mean something on `stop`;
    `message` is the harness text of a `remind`; `changes` is what the next request changes
    (never on `stop`, which sends none).
    """

    action: Action
    rule: str
    reason: str | None = None
    ok: bool | None = None
    run: Literal["all"] | tuple[int, ...] = ()
    failed: Literal["all"] | tuple[int, ...] = ()
    message: str | None = None
    changes: RequestChanges | None = None


def Continue(rule: str, run: Literal["all"] | tuple[int, ...] = ALL,
             failed: Literal["all"] | tuple[int, ...] = (), changes: RequestChanges | None = None) -> Decision:
    """Run the turn's tool calls (all by default), feed results back, request again."""
    return Decision("continue", rule, run=run, failed=failed, changes=changes)


def Resend(rule: str, changes: RequestChanges | None = None) -> Decision:
    """Send the same request again, nothing added (but `changes`, when given)."""
    return Decision("resend", rule, changes=changes)


def Remind(rule: str, message: str = "", run: Literal["all"] | tuple[int, ...] = (),
           failed: Literal["all"] | tuple[int, ...] = (), changes: RequestChanges | None = None) -> Decision:
    """Add a harness message (or synthetic tool results) and request again."""
    return Decision("remind", rule, run=run, failed=failed, message=message, changes=changes)


def Stop(reason: str, ok: bool, rule: str, run: Literal["all"] | tuple[int, ...] = (),
         failed: Literal["all"] | tuple[int, ...] = ()) -> Decision:
    """End the loop: `ok` true returns an answer as success, false raises or returns an error."""
    return Decision("stop", rule, reason=reason, ok=ok, run=run, failed=failed)


@dataclass(frozen=True, slots=True)
class Step:
    """One request of a replay: which turn answered it and what the loop decided."""

    step: int
    turn: int
    decision: Decision
    tools_run: tuple[str, ...] = ()
    tools_failed: tuple[str, ...] = ()
    known: tuple[tuple[int, str], ...] = ()
    """An observed step only: for each answered call (by index), how its result was judged
    (``executed``, ``flag``, ``marker`` or ``wording``, :mod:`bench.serve.results`)."""
    note: str = ""
    """An observed step only: what the server did unasked when it served the turn (e.g. tool calls
    withheld from a request that offered no tools)."""
    texts: tuple[tuple[int, str], ...] = ()
    """An observed step only: for each answered call (by index), the start of the result text it
    was judged from (what ``stopbench show --live`` prints beside how it was known)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """A requirement of a sequence that a cell breaks, and the step where it shows."""

    requirement: str
    step: int | None
    detail: str
    guess: bool = False
    """The violation rests on the wording fallback: read the other way, the results of the calls
    judged by their wording (:mod:`bench.serve.results`) would not break the requirement
    (:func:`bench.engine.judge.judge`)."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One sequence replayed by one predicate."""

    sequence: str
    predicate: str
    outcome: Outcome
    steps: tuple[Step, ...]
    reason: str | None = None
    ok: bool | None = None
    tools_run: tuple[str, ...] = ()
    tools_failed: tuple[str, ...] = ()
    reminders: int = 0
    resends: int = 0
    tokens: int = 0
    error: str | None = None
    violations: tuple[Violation, ...] = ()

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    def with_violations(self, violations: tuple[Violation, ...]) -> Cell:
        """The same cell, judged."""
        return Cell(self.sequence, self.predicate, self.outcome, self.steps, self.reason, self.ok,
                    self.tools_run, self.tools_failed, self.reminders, self.resends, self.tokens, self.error,
                    violations)
