"""A broken requirement told as a person reads it: which requirement, at which step, the turn the
server served there, and what the loop did with it.

:data:`REQUIREMENTS` is the one table of requirement kinds in words: what each asks of a loop
(the docs' requirement kinds page is generated from it when the site is built, and a test holds
both to the fields of :class:`bench.engine.model.Requirement`) and the phrase that says a cell broke it
(:func:`violation_words`: "reported success on a cut-off reply", not ``ok: false``).
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass
from itertools import groupby

from bench.engine.judge import served_turn
from bench.engine.model import Cell, Sequence, Step, Turn, Violation


@dataclass(frozen=True, slots=True)
class RequirementWords:
    """One requirement kind in words."""

    example: str
    """How it is written in a sequence's ``require:`` block."""
    definition: str
    """What a correct loop must do."""
    broken: str
    """What a cell that breaks it did; ``{turn}`` is the served turn at the violation's step, in words
    (:func:`turn_words`), ``{n}`` the requirement's parameter."""


REQUIREMENTS: dict[str, RequirementWords] = {
    "ok": RequirementWords(
        "ok: false", "the loop's verdict must be this: `true`, it must end with success; `false`, it must not "
        "report success (the task cannot be done, or the last turn is not an answer)",
        "reported success on {turn}"),
    "stops_within": RequirementWords(
        "stops_within: 4", "the loop must stop within N steps (model requests)",
        "did not stop within {n} requests"),
    "no_dropped_calls": RequirementWords(
        "no_dropped_calls: true", "every tool call of a turn is run or answered with an error, unless the "
        "loop gives up openly (a stop with ok false) or resends a turn that is unusable as it stands (an "
        "error, a cut-off reply, arguments that are not valid JSON)",
        "dropped tool calls without running or failing them"),
    "no_truncated_runs": RequirementWords(
        "no_truncated_runs: true", "no tool call of a cut-off (`length`) turn is run; failing it is fine",
        "ran a tool call from a cut-off reply"),
    "answer_after_tools": RequirementWords(
        "answer_after_tools: true", "success is reported only on a turn without tool calls, so every tool "
        "result reaches the model before the answer",
        "reported success before the model saw its tool results"),
    "answer_on": RequirementWords(
        "answer_on: [2]", "success may be reported only on these turns (0-based indices): the others are not "
        "answers (an empty stop, a pause, a tool call left as text, a cut-off reply) even where the finish "
        "says stop; it does not require success (pair it with `ok: true`)",
        "reported success on {turn}"),
    "no_malformed_runs": RequirementWords(
        "no_malformed_runs: true", "no tool call whose arguments are not valid JSON is run, whatever the "
        "finish says (a truncation hidden behind `tool_calls`); failing it is fine; empty arguments count "
        "as none",
        "ran a tool call whose arguments are not valid JSON"),
    "progress": RequirementWords(
        "progress: 2", "after N rounds in a row that ran the same calls and got the same results, the loop "
        "must not run them plainly once more: it stops, reminds, or changes its next request; results that "
        "change are progress",
        "ran the same tool round again without progress"),
}


def turn_words(turn: Turn) -> str:
    """A served turn as a reader names it: "a cut-off reply", "an error response", ..."""
    if turn.error is not None or turn.finish == "error":
        return "an error response"
    if turn.finish == "length":
        return "a cut-off reply"
    if turn.finish == "content_filter":
        return "a filtered reply"
    if turn.refusal is not None:
        return "a refusal"
    if turn.tool_calls:
        return "a reply that still calls tools"
    if turn.end_turn is False:
        return "a reply marked not final (end_turn: false)"
    if turn.finish == "unknown":
        return "a reply with an unknown finish"
    if turn.finish == "tool_calls":
        return "a reply that says tool_calls but carries no call"
    if not (turn.content or "").strip():
        return "an empty reply"
    return "a reply that is not an answer"


def violation_words(violation: Violation, sequence: Sequence | None = None, cell: Cell | None = None) -> str:
    """What the cell did, in plain words (:data:`REQUIREMENTS`), the served turn named when
    `sequence` and `cell` are given; the requirement as written when it is not one of the table's kinds."""
    kind, _, param = violation.requirement.partition(":")
    words = REQUIREMENTS.get(kind.strip())
    if words is None:
        return violation.requirement
    if kind == "ok" and param.strip() == "true":
        return OK_TRUE_BROKEN
    step = next((s for s in cell.steps if s.step == violation.step), None) if cell is not None else None
    turn = "a turn that is not an answer"
    if sequence is not None and step is not None and 0 <= step.turn < len(sequence.turns):
        turn = turn_words(served_turn(sequence, step))  # as the loop got it (calls withheld: without them)
    return words.broken.format(turn=turn, n=param.strip())


OK_TRUE_BROKEN = "did not end with success"
"""The phrase for a broken ``ok: true`` (the table's ``ok`` phrase is for ``ok: false``)."""


def requirements_markdown() -> str:
    """The table of requirement kinds, from :data:`REQUIREMENTS`: the docs site's requirement kinds page
    (``docs/reference/requirements.md``) is this table, put in when the site is built."""
    lines = ["| requirement | a correct loop | a cell that breaks it |", "| --- | --- | --- |"]
    for words in REQUIREMENTS.values():
        broken = words.broken.format(turn="the turn in words (a cut-off reply, an error response, ...)", n="N")
        if words is REQUIREMENTS["ok"]:
            broken += f" (`ok: false`); {OK_TRUE_BROKEN} (`ok: true`)"
        lines.append(f"| `{words.example}` | {words.definition} | {broken} |")
    return "\n".join(lines) + "\n"


def _short(text: str | None, n: int = 80) -> str:
    if text is None:
        return "null"
    text = text.replace("\n", "\\n")
    return repr(text if len(text) <= n else text[:n] + "...")


def turn_text(turn: Turn, index: int) -> str:
    """One served turn on one line: finish (and raw), content, calls, error."""
    parts = [f"turn {index}: finish {turn.finish} (raw {turn.finish_raw!r})", f"content {_short(turn.content)}"]
    if turn.tool_calls:
        parts.append("calls " + ", ".join(f"{c.name if c.name.strip() else BLANK}({_short(c.arguments, 40)})"
                                          for c in turn.tool_calls))
    if turn.error is not None:
        status = f" {turn.error.status}" if turn.error.status is not None else ""
        parts.append(f"error {turn.error.kind}{status}: {_short(turn.error.message, 60)}")
    if turn.end_turn is not None:
        parts.append(f"end_turn {turn.end_turn}")
    return ", ".join(parts)


GUESS = " (a guess: a result read by its wording)"
"""Said after a violation that rests on the wording fallback (``Violation.guess``): the bench did not
see the call run or fail, it read the result's words (:mod:`bench.serve.results`)."""


BLANK = "(blank)"
"""How a tool name that is empty (or only spaces) is printed."""

MANY = 6
"""Runs of names past which a tool list is written as totals per name."""


def tool_names(names: Seq[str]) -> str:
    """Tool names in brackets for a reader: a run of one name written once with its count
    (``[bash ×200]``), a blank name visible (``(blank)``), and a list with more than :data:`MANY`
    runs written as totals per name in order of first use (``[bash ×120, read_file ×80]``)."""
    shown = [n if n.strip() else BLANK for n in names]
    runs = [(n, len(list(same))) for n, same in groupby(shown)]
    if len(runs) > MANY:
        totals: dict[str, int] = {}
        for n in shown:
            totals[n] = totals.get(n, 0) + 1
        runs = list(totals.items())
    sep = ", " if len(runs) > MANY or any(k > 1 for _, k in runs) else ","
    return "[" + sep.join(n if k == 1 else f"{n} ×{k}" for n, k in runs) + "]"


KNOWN_WORDS = {"executed": "executed", "flag": "by its error flag", "marker": "by its marker",
               "wording": "by its wording"}
"""How an answered call was known (:data:`bench.serve.results.KNOWN`), as :func:`step_text` writes it."""


def known_text(step: Step) -> str:
    """How each answered call of an observed step was known: ``call 0 executed, call 1 by its
    wording``; empty when the step does not say (a replayed or older cell)."""
    known = getattr(step, "known", ())
    return ", ".join(f"call {i} {KNOWN_WORDS.get(how, how)}" for i, how in known)


def step_text(step: Step) -> str:
    """What the loop did after one turn."""
    d = step.decision
    if d.action == "stop":
        return f"stopped: ok={d.ok}, reason {d.reason!r}"
    tools = ""
    if step.tools_run:
        tools += f", ran {tool_names(step.tools_run)[1:-1]}"
    if step.tools_failed:
        tools += f", answered {tool_names(step.tools_failed)[1:-1]} with an error"
    known = known_text(step)
    if known:
        tools += f" ({known})"
    message = f", said {_short(d.message, 60)}" if d.message else ""
    return f"{d.action}{tools}{message}"


def path_text(cell: Cell) -> str:
    """The cell's actions in order, a run of one action written once with its count:
    ``continue ×199 -> stop``."""
    runs = ((action, len(list(same))) for action, same in groupby(s.decision.action for s in cell.steps))
    return " -> ".join(a if k == 1 else f"{a} ×{k}" for a, k in runs)


def explain(sequence: Sequence, cell: Cell) -> str | None:
    """Why `cell` fails `sequence` (its first broken requirement, or why it has no verdict), or None."""
    if cell.outcome == "crashed":
        return f"{cell.predicate} on {sequence.id}: no verdict: {cell.error}"
    if not cell.violations:
        return None
    v = cell.violations[0]
    at = f" at step {v.step}" if v.step is not None else ""
    lines = [f"{cell.predicate} on {sequence.id}: {violation_words(v, sequence, cell)} "
             f"(breaks `{v.requirement}`{at}): {v.detail}{GUESS if v.guess else ''}"]
    step = next((s for s in cell.steps if s.step == v.step), None)
    if step is not None:
        lines.append(f"  served {turn_text(sequence.turns[step.turn], step.turn)}")
        lines.append(f"  the loop: {step_text(step)}")
    ending = (f"stopped at step {cell.n_steps} (ok={cell.ok}, reason {cell.reason!r})" if cell.outcome == "stopped"
              else f"{cell.outcome} after {cell.n_steps} step(s)")
    lines.append(f"  path: {path_text(cell) or '(no request)'}; {ending}")
    if len(cell.violations) > 1:
        lines.append("  also broken: " + "; ".join(f"{violation_words(x, sequence, cell)} ({x.requirement})"
                                                   f"{GUESS if x.guess else ''}" for x in cell.violations[1:]))
    return "\n".join(lines)


def assert_meets_requirements(sequence: Sequence, cell: Cell) -> None:
    """Raise AssertionError with :func:`explain`'s text when the cell breaks a requirement or crashed."""
    __tracebackhide__ = True
    why = explain(sequence, cell)
    if why is not None:
        raise AssertionError(why)
