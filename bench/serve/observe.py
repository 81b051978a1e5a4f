"""Infer what a client did from the requests it sent: continue, resend, remind or stop.

The server cannot see a loop's decision, only its next request. Request i+1 is compared with
request i after both are reduced to a dialect-neutral conversation (system text plus a list of
items: user and system messages, assistant messages with their call ids, tool results):

* the same conversation again: **resend**;
* request i's items, the assistant's echo, then tool results only: **continue**, with the calls of
  turn i that were answered (`run`) and those answered with an error result (`failed`);
* a new user or system message (or a changed system prompt), with or without tool results:
  **remind**, the new text as its message;
* the assistant's echo and nothing else: **continue** with no calls (detail says so);
* request i ending with an assistant message (a turn with no calls that did not end the run) and
  request i+1 carrying the echo right after it: consecutive assistant items are merged, so that
  item is request i's last one grown (more calls, or its text extended); the growth is the echo,
  judged as above. (Some clients merge the two messages themselves.) An echo that adds neither
  calls nor text cannot be told from a resend there, and counts as one;
* request i ending with a user message and request i+1 carrying that message grown (a client
  that merges consecutive user messages into one, as smolagents does with its error and
  observation messages): the growth is a user item of its own after it, judged as above;
* no request i+1 at all: **stop** (ok and reason come from whoever drove the client);
* the history rewritten into fewer items (a compaction: a summary in place of earlier turns):
  the request's changes say ``compact``; the action is **remind** when it ends with a user or
  system message request i did not have (its text the message), **resend** when it ends with
  request i's last item, else **unknown**;
* anything else (history rewritten, e.g. another conversation): **unknown**, with a detail saying
  what differed.

Besides the action, :func:`request_changes` reads what the request itself changed beyond its
messages, as a :class:`~bench.engine.model.RequestChanges`: a new ``max_tokens`` (``max_tokens`` or
``max_completion_tokens`` on Chat, ``max_tokens`` on Anthropic, ``max_output_tokens`` on
Responses), another ``model``, another ``tool_choice`` (normalised to ``auto``, ``required``,
``none`` or the forced tool's name; an absent one is ``auto``) and the compaction above.

Whether a tool result is an error, and how that was known (executed, flag, marker or wording),
is :class:`bench.serve.results.ResultJudge`'s business: the tool endpoint's executions first, then
the wire's error flag, then the error and ok markers, then the result's wording.

Tool results sent as user text (a client that replays a tool's output in a user message, as
smolagents' ToolCallingAgent does with "Observation:"): with an ``ok_marker``, a user item whose
lines start with it carries stub results, never a reminder; each ``<ok_marker> <name>`` line
answers the next call of that name not answered yet (the stubs answer "<ok_marker> <name>";
there is no call id in such text). A failed call cannot be told in user text: it has no marker.
When the program ran the bench's tools, a user item that carries execution tokens
(``STOPBENCH-OK <name> #<n>``), or the whole content of an execution of the round (a scripted
result), answers the calls of those executions instead, known ``executed``
(:meth:`bench.serve.results.ResultJudge.in_text`), marker or not; one that names an open call's tool
in quotes when no execution of the round has that name says the loop refused it: failed
(:meth:`~bench.serve.results.ResultJudge.refused_in_text`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from bench.engine.changes import changes_data
from bench.engine.model import Cell, Decision, Outcome, RequestChanges, Sequence, Step, ToolCall, Turn
from bench.serve.results import Known, ResultJudge, starts_with_error
from bench.wires import registry
from bench.wires.base import tool_choice
from bench.wires.conversation import Conversation, Item

__all__ = [
    "Conversation",
    "Inferred",
    "Item",
    "Observed",
    "ResultJudge",
    "conversation",
    "error_rule",
    "infer",
    "observed_cell",
    "observed_steps",
    "request_changes",
    "starts_with_error",
    "tool_choice",
]

ObservedAction: TypeAlias = Literal["continue", "resend", "remind", "stop", "unknown"]

OBSERVED_RULE = "observed"
"""The rule id of every observed decision."""


def conversation(wire: str, body: dict[str, Any]) -> Conversation:
    """A request body reduced to a dialect-neutral conversation (:meth:`bench.wires.base.Wire.conversation`)."""
    return registry.wire(wire).conversation(body)


# ---------------------------------------------------------------- inference


def error_rule(ok_marker: str | None) -> Callable[[str], bool]:
    """The test for 'this tool result is an error result'."""
    if ok_marker:
        return lambda text: ok_marker not in text
    return starts_with_error


def _grown_echo(before: tuple[Item, ...], after: tuple[Item, ...]) -> Item | None:
    """The echo of the served turn when it was merged into request i's last (assistant) item.

    Request i may end with an assistant message (a turn that did not end the run and had no tool
    calls to answer). The echo of the next turn then follows it directly, and the reduction merges
    consecutive assistant items (some clients merge them themselves, e.g. the AI SDK on Anthropic).
    Request i+1's item at that place is then request i's last item grown by the echo: the same
    calls and then more, or the same calls and its text extended. Returns that growth as an
    assistant item, or None when request i+1 does not have this shape.
    """
    if not before or before[-1].kind != "assistant" or len(after) < len(before):
        return None
    last, merged = before[-1], after[len(before) - 1]
    if merged.kind != "assistant" or merged.calls[:len(last.calls)] != last.calls:
        return None
    if [i.key() for i in after[:len(before) - 1]] != [i.key() for i in before[:-1]]:
        return None
    extra_calls = merged.calls[len(last.calls):]
    extended = merged.text.startswith(last.text) and len(merged.text) > len(last.text)
    if not extra_calls and not extended:
        return None  # nothing grew: a resend, or another shape the general comparison judges
    return Item("assistant", merged.text[len(last.text):] if extended else merged.text, calls=extra_calls,
                call_names=merged.call_names[len(last.calls):], call_args=merged.call_args[len(last.calls):])


def _grown_user(before: tuple[Item, ...], after: tuple[Item, ...]) -> Item | None:
    """A user message merged into request i's last (user) item, as a user item of its own.

    Some clients merge consecutive user messages into one (smolagents joins its error and
    observation messages with a newline, models.py get_clean_message_list): request i+1's item at
    that place is then request i's last item with text added. Returns the added text (leading
    newlines dropped) as a user item, or None when request i+1 does not have this shape.
    """
    if not before or before[-1].kind != "user" or len(after) < len(before):
        return None
    last, merged = before[-1], after[len(before) - 1]
    if merged.kind != "user" or len(merged.text) <= len(last.text) or not merged.text.startswith(last.text):
        return None
    if [i.key() for i in after[:len(before) - 1]] != [i.key() for i in before[:-1]]:
        return None
    return Item("user", merged.text[len(last.text):].lstrip("\n"))


def _stub_results(text: str, ok_marker: str | None) -> list[str] | None:
    """The tool names of the stub results a user message carries (its lines that start with the
    ok marker: "<ok_marker> <name>"), or None when it carries none (or no marker is given)."""
    if not ok_marker:
        return None
    names = [line[len(ok_marker):].strip() for line in text.splitlines() if line.startswith(ok_marker)]
    return names or None


def _same_arguments(echoed: str, call: ToolCall) -> bool:
    """Whether an echoed call's arguments are the served call's: equal as JSON, else as text."""
    try:
        return bool(json.loads(echoed or "{}") == json.loads(call.arguments or "{}"))
    except ValueError:
        return echoed.strip() == call.arguments.strip()


def _renamed_calls(tail: tuple[Item, ...], turn: Turn, ids: dict[str, int]) -> dict[str, int]:
    """The echoed calls whose ids are the client's own, mapped to the served call each stands for.

    Some clients (agno) replace every call id by their own before sending the history back: the
    echo's calls are then the served calls in order, with the same names and arguments, under other
    ids. An echoed call with an id the turn does not have is the served call at its position when
    name and arguments agree, else the first one not yet matched that agrees; one that agrees
    with none is no call of the turn."""
    echoed = [(cid, item.call_names[p] if p < len(item.call_names) else None,
               item.call_args[p] if p < len(item.call_args) else None)
              for item in tail if item.kind == "assistant" for p, cid in enumerate(item.calls)]
    calls = turn.tool_calls
    taken = {ids[cid] for cid, _, _ in echoed if cid in ids}
    out: dict[str, int] = {}
    for pos, (cid, name, args) in enumerate(echoed):
        if cid in ids or name is None:
            continue

        def agrees(k: int, name: str = name, args: str | None = args) -> bool:
            return calls[k].name == name and (args is None or _same_arguments(args, calls[k]))

        k = pos if pos < len(calls) and pos not in taken and agrees(pos) else next(
            (k for k in range(len(calls)) if k not in taken and agrees(k)), None)
        if k is not None:
            taken.add(k)
            out[cid] = k
    return out


@dataclass(frozen=True, slots=True)
class Inferred:
    action: ObservedAction
    run: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    message: str | None = None
    detail: str = ""
    compact: bool = False
    known: tuple[tuple[int, Known], ...] = ()
    """For each answered call (by index), how its result was judged (:mod:`bench.serve.results`)."""
    texts: tuple[tuple[int, str], ...] = ()
    """For each call answered by a tool result (by index), the start of the result's text (:func:`excerpt`)."""


TEXT_KEPT = 200
"""Characters of a tool result's text an observed step keeps (what ``show --live`` prints)."""


def excerpt(text: str) -> str:
    """The start of a tool result's text as a step keeps it: at most :data:`TEXT_KEPT` characters."""
    return text if len(text) <= TEXT_KEPT else text[:TEXT_KEPT] + "..."


def _compacted(before: Conversation, after: Conversation, note: str) -> Inferred | None:
    """The inference for a request whose history was rewritten into fewer items (a compaction),
    or None when it was not. A lone item is the summary itself: what else was sent cannot be told."""
    if len(after.items) >= len(before.items) or not after.items:
        return None
    note = f"{note}: compacted"
    last = after.items[-1]
    seen = {i.key() for i in before.items}
    if len(after.items) > 1 and last.kind in ("user", "system") and last.key() not in seen:
        return Inferred("remind", message=last.text, detail=note, compact=True)
    if before.items and last.key() == before.items[-1].key():
        return Inferred("resend", detail=note, compact=True)
    return Inferred("unknown", detail=note + "; it ends with nothing new", compact=True)


def infer(before: Conversation, turn: Turn, response_id: str, after: Conversation,
          is_error: Callable[[str], bool] = starts_with_error, ok_marker: str | None = None,
          judge: ResultJudge | None = None) -> Inferred:
    """What the client did after `turn` answered `before`, judged from its next request `after`.

    `ok_marker` (the driver's stub marker, when there is one) lets a user message that carries stub
    results be read as tool results (the module docstring). `judge` says whether each result
    failed and how that was known (default: the ok marker, then `is_error` on its text)."""
    judge = judge or ResultJudge(turn, ok_marker=ok_marker, wording=is_error)
    added = _added(before, after, response_id)
    if isinstance(added, Inferred):
        return added
    tail, merged_note = added
    tally = _Tally(turn, tail, judge, ok_marker)
    if merged_note:
        tally.notes.insert(0, merged_note)
    for item in tail:
        tally.read(item)
    return tally.inferred(before, after)


def _added(before: Conversation, after: Conversation, response_id: str) -> tuple[tuple[Item, ...], str] | Inferred:
    """The items `after` adds to `before` and a note on how they were found (an echo or a user message
    merged with the previous one); or the inference itself when nothing follows from new items: a
    resend, a history rewritten (compacted or not)."""
    if after.previous_id is not None and after.previous_id == response_id:
        if not after.items:
            return Inferred("resend", detail="previous_response_id with no new input")
        return after.items, ""
    if (grown := _grown_echo(before.items, after.items)) is not None:
        return (grown, *after.items[len(before.items):]), "echo follows the previous assistant message (merged with it)"
    if (user := _grown_user(before.items, after.items)) is not None:
        return (user, *after.items[len(before.items):]), \
            "a user message follows the previous user message (merged with it)"
    old = [i.key() for i in before.items]
    new = [i.key() for i in after.items]
    if new == old and after.system == before.system:
        return Inferred("resend")
    if new[:len(old)] != old:
        at = next((k for k, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
        note = f"history differs at item {at} ({len(old)} items before, {len(after.items)} after)"
        return _compacted(before, after, note) or Inferred("unknown", detail=note)
    return tuple(after.items[len(old):]), ""


class _Tally:
    """What the new items of a request say of each call of the turn, read one item at a time."""

    def __init__(self, turn: Turn, tail: tuple[Item, ...], judge: ResultJudge, ok_marker: str | None) -> None:
        self.turn = turn
        self.judge = judge
        self.ok_marker = ok_marker
        self.ids = {c.id: n for n, c in enumerate(turn.tool_calls)}
        # a wire without call ids (Gemini) names a result by its call's position: #0, #1, ...
        self.ids.update({f"#{n}": n for n in range(len(turn.tool_calls))})
        self.renamed = _renamed_calls(tail, turn, self.ids)
        self.ids.update({k: v for k, v in self.renamed.items() if k not in self.ids})
        self.blank = [n for n, c in enumerate(turn.tool_calls) if not c.id]
        self.run: list[int] = []
        self.failed: list[int] = []
        self.messages: list[str] = []
        self.known: list[tuple[int, Known]] = []
        self.texts: list[tuple[int, str]] = []
        self.notes: list[str] = []
        if self.renamed:
            self.notes.append("call ids renamed by the client: results matched to calls by position, name and "
                              "arguments")
        self.echoed = False

    def answered(self) -> set[int]:
        return {*self.run, *self.failed}

    def read(self, item: Item) -> None:
        """One new item: an echo, a tool result, results in user text (executed, refused, stub), or a message."""
        if item.kind == "assistant":
            self.echoed = True
        elif item.kind == "tool":
            self.result(item)
        elif item.kind == "user" and (ran := self.judge.in_text(item.text, self.answered())):
            # results sent as user text, known by their executions (the program ran the bench's tools)
            for j, e in ran:
                (self.failed if e.is_error else self.run).append(j)
                self.known.append((j, "executed"))
        elif item.kind == "user" and (refused := self.judge.refused_in_text(item.text, self.answered())):
            # calls the loop refused and said so in user text, none of them run on the bench's tools
            self.failed.extend(refused)
            self.known.extend((j, "executed") for j in refused)
        elif item.kind == "user" and (names := _stub_results(item.text, self.ok_marker)) is not None:
            self.stubs(names)
        else:
            self.messages.append(item.text)

    def result(self, item: Item) -> None:
        """A tool result, matched to its call by id (a call served without one: the first still open)."""
        n = self.ids.get(item.call_id)
        if n is None and item.call_id not in self.renamed:
            # a call served without an id can only be answered under one the client made up
            # (Semantic Kernel's "unknown"): the first such call still open, in order
            n = next((k for k in self.blank if k not in self.run and k not in self.failed), None)
            if n is not None:
                self.notes.append(f"result under the client's id {item.call_id!r} for a call served without an id")
        if n is None:
            self.notes.append(f"result for unknown call id {item.call_id!r}")
            return
        if n in self.run or n in self.failed:
            self.notes.append(f"second result for call {item.call_id!r}")
            return
        bad, how = self.judge(n, item.text, item.is_error)
        (self.failed if bad else self.run).append(n)
        self.known.append((n, how))
        self.texts.append((n, excerpt(item.text)))

    def stubs(self, names: list[str]) -> None:
        """Stub results in user text (the driver's ok marker), each for the first open call of its name."""
        answered: list[int] = []
        for name in names:
            k = next((k for k, c in enumerate(self.turn.tool_calls)
                      if c.name == name and k not in self.run and k not in self.failed and k not in answered), None)
            if k is None:
                self.notes.append(f"stub result in user text for no open call named {name!r}")
            else:
                answered.append(k)
        self.run.extend(sorted(answered))
        self.known.extend((k, "marker") for k in answered)

    def inferred(self, before: Conversation, after: Conversation) -> Inferred:
        """The action the items add up to: a reminder when they say something, a continuation when they
        answer calls or only echo the reply, else unknown."""
        messages, notes, run, failed = self.messages, self.notes, self.run, self.failed
        if after.system != before.system:
            messages.insert(0, after.system)
            notes.append("system prompt changed")
        unanswered = [c.id for n, c in enumerate(self.turn.tool_calls) if n not in run and n not in failed]
        if unanswered and (run or failed or messages):
            notes.append(f"no result for {', '.join(unanswered)}")
        detail = "; ".join(notes)
        ways = tuple(sorted(self.known))
        said = tuple(sorted(self.texts))
        if messages:
            return Inferred("remind", tuple(run), tuple(failed), "\n".join(messages), detail, known=ways, texts=said)
        if run or failed:
            return Inferred("continue", tuple(run), tuple(failed), None, detail, known=ways, texts=said)
        if self.echoed:
            return Inferred("continue", detail="; ".join([*notes, "assistant echo only, nothing added"]))
        return Inferred("unknown", detail="; ".join([*notes, "items added that say nothing"]))


def request_changes(wire: str, before: dict[str, Any], after: dict[str, Any],
                    compact: bool = False) -> RequestChanges | None:
    """What request `after` changes against request `before` beyond its messages: a new
    max_tokens, model or tool choice, and `compact` as :func:`infer` found it; None when nothing."""
    w = registry.wire(wire)
    mt_before, mt_after = w.max_tokens(before), w.max_tokens(after)
    model_after = after.get("model")
    choice_after = w.tool_choice(after)
    changes = RequestChanges(
        max_tokens=mt_after if mt_after is not None and mt_after != mt_before else None,
        model=model_after if isinstance(model_after, str) and model_after and model_after != before.get("model")
        else None,
        compact=compact,
        tool_choice=choice_after if choice_after != w.tool_choice(before) else None)
    return None if changes == RequestChanges() else changes


@dataclass(frozen=True, slots=True)
class Observed:
    """One answered model request of a run and what the client did after it, with what its next
    request changed (:func:`request_changes`)."""

    step: int
    turn: int
    action: ObservedAction
    run: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    message: str | None = None
    detail: str = ""
    changes: RequestChanges | None = None
    known: tuple[tuple[int, Known], ...] = ()
    """For each answered call (by index), how its result was judged: executed, flag, marker, wording."""
    note: str = ""
    """What the server did unasked when it served this step (e.g. tool calls withheld)."""
    texts: tuple[tuple[int, str], ...] = ()
    """For each call answered by a tool result (by index), the start of its text (:func:`excerpt`)."""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "turn": self.turn, "action": self.action,
                               "rule": OBSERVED_RULE, "run": list(self.run), "failed": list(self.failed),
                               "message": self.message, "detail": self.detail}
        if self.known:
            out["known"] = {str(k): how for k, how in self.known}
        if self.note:
            out["note"] = self.note
        if self.texts:
            out["texts"] = {str(k): text for k, text in self.texts}
        if self.changes is not None:
            out["changes"] = changes_data(self.changes)
        return out


def observed_steps(sequence: Sequence, steps: list[Observed], ok: bool | None, reason: str | None) -> tuple[Step, ...]:
    """The observed steps as the bench's Steps; a final stop gets the driver's ok and reason."""
    out: list[Step] = []
    for s in steps:
        calls = sequence.turns[s.turn].tool_calls
        if s.action == "stop":  # calls it ran before stopping (on the tool endpoint) are its run and failed
            d = Decision("stop", OBSERVED_RULE, reason=reason or OBSERVED_RULE, ok=ok, run=s.run, failed=s.failed)
        else:
            d = Decision(s.action, OBSERVED_RULE, run=s.run, failed=s.failed,  # type: ignore[arg-type]
                         message=s.message, changes=s.changes)
        out.append(Step(s.step, s.turn, d, tuple(calls[i].name for i in s.run),
                        tuple(calls[i].name for i in s.failed), known=s.known, note=s.note, texts=s.texts))
    return tuple(out)


def observed_cell(sequence: Sequence, predicate: str, steps: list[Observed], ok: bool | None,
                  reason: str | None = None, error: str | None = None) -> Cell:
    """An observed Cell: outcome stopped when the client stopped asking, running when it asked past the end."""
    records = observed_steps(sequence, steps, ok, reason)
    stopped = bool(records) and records[-1].decision.action == "stop"
    outcome: Outcome = "stopped" if stopped else ("crashed" if error else "running")
    run = tuple(n for s in records for n in s.tools_run)
    failed = tuple(n for s in records for n in s.tools_failed)
    tokens = 0
    for s in records:
        u = sequence.turns[s.turn].usage
        if u is not None:
            tokens += u.input_tokens + u.output_tokens
    return Cell(sequence=sequence.id, predicate=predicate, outcome=outcome, steps=records,
                reason=(reason or OBSERVED_RULE) if stopped else None, ok=ok if stopped else None,
                tools_run=run, tools_failed=failed,
                reminders=sum(1 for s in records if s.decision.action == "remind"),
                resends=sum(1 for s in records if s.decision.action == "resend"),
                tokens=tokens, error=error)
