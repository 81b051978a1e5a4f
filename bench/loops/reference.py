"""stopbench's reference loop as client code: the loop ``predicates/reference.py`` models, over the
official ``openai`` and ``anthropic`` clients.

Use it as it is, or copy it with the budgets and reminders it reads from ``predicates/reference.py``::

    import openai
    from bench.loops.clients import APIS
    from bench.loops.reference import run

    def execute(name: str, arguments: object) -> str:  # your tools; raise to report a failure
        ...

    # api: the wire the client speaks, one of APIS (the wires the loop has a client for; APIS[0] is Chat Completions)
    result = run(openai.OpenAI(), api=APIS[0], model="gpt-5", prompt="fix the failing test",
                 tools=[{"name": "read_file", "description": "...", "parameters": {...JSON schema...}}],
                 execute=execute)
    if not result.ok:
        raise SystemExit(f"the agent gave up: {result.reason}")

It reads both the finish reason and the message body, and gives every odd reply a bounded remedy
with an enumerated stop reason. The rules, in the order they are checked, are those of
``predicates/reference.py`` (each cited there): an error in place of a reply is resent when
transient (at most 3 in a row), else ``model_error``; before a resend the loop waits what the
provider asked (``Retry-After`` and the like, :func:`bench.wires.client.retry_after`; more than
:data:`MAX_WAIT` is ``model_error``), else an exponential back-off (:func:`backoff`), since the
clients' own retries are off; a stream cut before its finish and a frame that does not parse are
such errors; a filtered reply stops ``content_filter``;
a truncated reply's calls are failed, never run (2 times, then ``length``), and a truncated text is
``length``; calls are run whatever the finish says, except calls whose arguments are not JSON,
which are failed; a loop guard fails with a reminder the calls that start a cycle of 1 to 5 rounds
a 4th time after 3 runs with the same calls and results, and stops ``repeated_tool_call`` when the
model goes on with that cycle (other arguments or a changed result are progress); a paused turn is
sent back (3 times, then ``unfinished_turn``); a missing
call or a call left as text gets 2 reminders, then ``dropped_tool_call``; an unknown finish is
``unknown_finish``; a user message that arrived meanwhile is sent; an empty reply gets 2 reminders,
then ``empty_response``; a non-empty reply without calls is the answer; 50 requests are
``max_steps``, an error. ``tests/check/test_reference_library_loop.py`` runs this code against the catalogue
and requires the same steps as the predicate.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from bench.catalogue.shipped import shipped_folder
from bench.engine.predicate import Predicate
from bench.loops.clients import Api, Call, Conversation, Reply, Result, conversation


def _reference_port() -> ModuleType:
    """The shipped ``predicates/reference.py``: the one home of the budgets, the reminders' words and
    the transient errors this loop shares with the predicate that models it, so the two cannot drift
    (and the mutation check, which changes the port's constants, keeps judging them there)."""
    folder = shipped_folder("predicates")
    spec = None if folder is None else importlib.util.spec_from_file_location(
        "stopbench_reference_port", folder / "reference.py")
    if spec is None or spec.loader is None:
        raise ImportError("the shipped predicates/reference.py is missing: reinstall stopbench")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PORT = _reference_port()
_RULES: Predicate = _PORT.decide

MAX_STEPS: int = _RULES.max_steps or 0
MAX_RESENDS: int = _PORT.MAX_RESENDS
MAX_REMINDERS: int = _PORT.MAX_REMINDERS
MAX_TRUNCATED: int = _PORT.MAX_TRUNCATED
MAX_PAUSES: int = _PORT.MAX_PAUSES
REPEATS: int = _PORT.REPEATS
MAX_PERIOD: int = _PORT.MAX_PERIOD

REASONS: tuple[str, ...] = tuple(_RULES.reasons)
"""Every reason the loop stops with; only ``no_tool_calls`` is success."""

NO_CALL: str = _PORT.NO_CALL
TEXT_CALL: str = _PORT.TEXT_CALL
EMPTY: str = _PORT.EMPTY
TRUNCATED: str = _PORT.TRUNCATED
REPEATED: str = _PORT.REPEATED
NOT_RUN = "Error: not run. "

MAX_WAIT = 60.0
"""The longest wait before a resend the loop accepts, in seconds: a provider asking for more is
``model_error`` (the official ``openai`` and ``anthropic`` clients honour a Retry-After of at most
60 s, ``_calculate_retry_timeout`` in their ``_base_client.py``)."""
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 8.0
"""The back-off when the provider gave no hint: 0.5 s doubled at each resend in a row, at most 8 s,
less up to a quarter at random (the official clients' INITIAL_RETRY_DELAY, MAX_RETRY_DELAY and
jitter)."""


def backoff(resend: int, rng: random.Random | None = None) -> float:
    """Seconds to wait before resend number `resend` (from 1) when the provider gave no hint."""
    base = min(BACKOFF_MAX, BACKOFF_FIRST * 2.0 ** (resend - 1))
    draw = rng.random() if rng is not None else random.random()
    return base * (1 - 0.25 * draw)


_TRANSIENT_KINDS: tuple[str, ...] = _PORT._TRANSIENT_KINDS
"""Errors worth a resend when no HTTP status says otherwise: the provider's or the network's passing
trouble, never the request's fault nor an exhausted quota. A Responses failure is judged the same
way, by the kind of its error code."""
_TEXT_CALL: re.Pattern[str] = _PORT._TEXT_CALL

Execute = Callable[[str, Any], str]
"""Runs one tool: (name, parsed arguments) to the result text; an exception is a failed call."""
Steer = Callable[[int], str | None]
"""A user message that arrived while reply n (from 0) was generated, or None."""


@dataclass(frozen=True, slots=True)
class Step:
    """What the loop did after one reply, and the rule that made it."""

    action: Literal["continue", "resend", "remind", "stop"]
    rule: str
    run: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    message: str | None = None
    reason: str | None = None
    ok: bool | None = None
    wait: float = 0.0
    """Seconds to wait before a resend."""


@dataclass(slots=True)
class LoopResult:
    """How the loop ended: `ok` is success, `reason` one of :data:`REASONS`, `final` the answer."""

    ok: bool
    reason: str
    final: str = ""
    steps: list[Step] = field(default_factory=list)


def _bad_json(arguments: str) -> bool:
    try:
        json.loads(arguments or "{}")
    except ValueError:
        return True
    return False


class Policy:
    """The decision after each reply: the rules of predicates/reference.py, with their counters."""

    def __init__(self) -> None:
        self.resends = self.truncated = self.pauses = self.reminders = 0
        self.rounds: list[Any] = []  # (calls, results) of the rounds run since the last reply without calls
        self.running: tuple[tuple[str, str], ...] | None = None  # the calls of the round being run
        self.warned: set[tuple[tuple[str, str], ...]] | None = None  # the cycle a reminder named

    def ran(self, results: Sequence[Result]) -> None:
        """The results a round's run gave back: the loop guard's new information (rule repeat)."""
        if self.running is not None:
            self.rounds.append((self.running, tuple(r.text for r in results)))
            del self.rounds[:-REPEATS * MAX_PERIOD]
            self.running = None

    @staticmethod
    def transient(reply: Reply) -> bool:
        err = reply.error
        if err is None:
            return False
        if err.status is not None:  # 4xx other than 408/409/429 is the request's fault
            return err.status in (408, 409, 429) or err.status >= 500
        return err.kind in _TRANSIENT_KINDS

    def decide(self, reply: Reply, steer: str | None = None) -> Step:
        """The step after `reply` (`steer`: a user message that arrived meanwhile): the first rule
        that applies, in predicates/reference.py's order; each rule resets its counter when it does not."""
        every = tuple(range(len(reply.calls)))
        return (self._error(reply, every) or self._filtered(reply, every) or self._truncated(reply, every)
                or self._calls(reply, every, steer) or self._paused(reply) or self._missing_call(reply)
                or self._unknown(reply) or self._steered(steer) or self._empty(reply)
                or Step("stop", "done", reason="no_tool_calls", ok=True))  # 10. the answer

    def _error(self, reply: Reply, every: tuple[int, ...]) -> Step | None:
        """1. An error in place of a reply: resent when transient and the wait is acceptable."""
        if reply.error is None and reply.finish != "error":
            self.resends = 0
            return None
        self.resends += 1
        hint = reply.error.retry_after if reply.error is not None else None
        if self.transient(reply) and self.resends <= MAX_RESENDS and (hint is None or hint <= MAX_WAIT):
            return Step("resend", "error-resend", wait=backoff(self.resends) if hint is None else hint)
        return Step("stop", "error-stop", failed=every, reason="model_error", ok=False)

    @staticmethod
    def _filtered(reply: Reply, every: tuple[int, ...]) -> Step | None:
        """2. Filtered or refused."""
        if reply.finish == "content_filter":
            return Step("stop", "filter", failed=every, reason="content_filter", ok=False)
        if reply.refusal is not None:
            return Step("stop", "refusal", failed=every, reason="content_filter", ok=False)
        return None

    def _truncated(self, reply: Reply, every: tuple[int, ...]) -> Step | None:
        """3. Truncated (or cut at the request's max_tokens under a stop)."""
        hidden = reply.finish == "stop" and reply.at_limit
        if reply.finish != "length" and not hidden:
            self.truncated = 0
            return None
        if not reply.calls:
            return Step("stop", "length-hidden" if hidden else "length", reason="length", ok=False)
        self.truncated += 1
        if self.truncated > MAX_TRUNCATED:
            return Step("stop", "truncated-stop", failed=every, reason="length", ok=False)
        return Step("remind", "truncated-calls", failed=every, message=TRUNCATED)

    def _calls(self, reply: Reply, every: tuple[int, ...], steer: str | None) -> Step | None:
        """4. Calls present: run them, whatever the finish says, unless the loop guard stops them."""
        calls = reply.calls
        if not calls:
            self.rounds, self.warned = [], None
            return None
        signature = tuple((c.name, c.arguments) for c in calls)
        if self.warned is not None and signature in self.warned:
            return Step("stop", "repeat-stop", failed=every, reason="repeated_tool_call", ok=False)
        cycle = _PORT.repeated_cycle(self.rounds, signature)
        if cycle is not None:
            self.warned = {calls_of for calls_of, _ in cycle}
            return Step("remind", "repeat-remind", failed=every, message=REPEATED)
        self.warned, self.running = None, signature
        self.reminders = self.pauses = 0
        bad = tuple(i for i, c in enumerate(calls) if _bad_json(c.arguments))
        good = tuple(i for i in every if i not in bad)
        if steer:
            return Step("remind", "calls-steer", run=good, failed=bad, message=steer)
        return Step("continue", "calls", run=good, failed=bad)

    def _paused(self, reply: Reply) -> Step | None:
        """5. The provider says the turn is not over."""
        if reply.finish_raw != "pause_turn" and reply.end_turn is not False:
            self.pauses = 0
            return None
        self.pauses += 1
        if self.pauses > MAX_PAUSES:
            return Step("stop", "paused-stop", reason="unfinished_turn", ok=False)
        return Step("continue", "paused")

    def _missing_call(self, reply: Reply) -> Step | None:
        """6. A call that went missing: announced by the finish, or left as text."""
        dropped = reply.finish == "tool_calls"
        as_text = bool(reply.content) and bool(_TEXT_CALL.search(reply.content or ""))
        if not (dropped or as_text):
            return None
        self.reminders += 1
        if self.reminders > MAX_REMINDERS:
            return Step("stop", "dropped-stop", reason="dropped_tool_call", ok=False)
        return Step("remind", "dropped-remind" if dropped else "text-call-remind",
                    message=NO_CALL if dropped else TEXT_CALL)

    @staticmethod
    def _unknown(reply: Reply) -> Step | None:
        """7. A finish nobody defined."""
        return Step("stop", "unknown", reason="unknown_finish", ok=False) if reply.finish == "unknown" else None

    def _steered(self, steer: str | None) -> Step | None:
        """8. A user message arrived while the model answered."""
        if not steer:
            return None
        self.reminders = 0
        return Step("remind", "steer", message=steer)

    def _empty(self, reply: Reply) -> Step | None:
        """9. An empty stop."""
        if (reply.content or "").strip():
            return None
        self.reminders += 1
        if self.reminders > MAX_REMINDERS:
            return Step("stop", "empty-stop", reason="empty_response", ok=False)
        return Step("remind", "empty-remind", message=EMPTY)


def _results(calls: Sequence[Call], step: Step, execute: Execute, why: str) -> list[Result]:
    """Run the calls the step runs; answer the ones it fails with an error result."""
    out: list[Result] = []
    for i, call in enumerate(calls):
        if i in step.run:
            try:
                args = json.loads(call.arguments) if call.arguments.strip() else {}
                out.append(Result(call, execute(call.name, args)))
            except Exception as exc:  # a tool that fails is an error result, not the loop's end
                out.append(Result(call, f"Error: {type(exc).__name__}: {exc}", is_error=True))
        elif i in step.failed:
            out.append(Result(call, NOT_RUN + why, is_error=True))
    return out


def run_loop(conv: Conversation, execute: Execute, *, max_steps: int = MAX_STEPS, steer: Steer | None = None,
             on_step: Callable[[Reply, Step], None] | None = None,
             sleep: Callable[[float], None] = time.sleep) -> LoopResult:
    """Drive `conv` until the policy stops or `max_steps` requests were made (then ``max_steps``);
    `sleep` waits before a resend."""
    policy = Policy()
    steps: list[Step] = []
    for n in range(max_steps):
        reply = conv.ask()
        step = policy.decide(reply, steer(n) if steer is not None else None)
        if n == max_steps - 1 and step.action != "stop":
            step = Step("stop", "cap", failed=step.failed, reason="max_steps", ok=False)
        steps.append(step)
        if on_step is not None:
            on_step(reply, step)
        if step.action == "stop":
            return LoopResult(bool(step.ok), step.reason or "", reply.content or "", steps)
        if step.action == "resend":
            sleep(step.wait)
            continue
        conv.add_reply(reply)
        why = "the arguments were cut off or are not valid JSON." if step.failed else ""
        results = _results(reply.calls, step, execute, why or "see the next message.")
        if step.rule in ("calls", "calls-steer"):
            policy.ran(results)
        conv.add_results(results, step.message)
    return LoopResult(False, "max_steps", "", steps)


def run(client: Any, *, api: Api, model: str, prompt: str, tools: Sequence[dict[str, Any]], execute: Execute,
        system: str | None = None, max_steps: int = MAX_STEPS, steer: Steer | None = None,
        sleep: Callable[[float], None] = time.sleep) -> LoopResult:
    """Run the reference loop on `api` with an ``openai.OpenAI`` (Chat, Responses) or
    ``anthropic.Anthropic`` client. `tools` are ``{"name", "description", "parameters"}`` (a JSON
    schema), `execute` runs one."""
    return run_loop(conversation(api, client, model, prompt, tools, system), execute, max_steps=max_steps,
                    steer=steer, sleep=sleep)
