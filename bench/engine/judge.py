"""Judge a cell against its sequence's `require:` block: what a correct loop must do.

Golden files check that a port does what its original does; requirements check whether what it
does is right. A violation names the requirement and the first step where it shows.
"""

from __future__ import annotations

import json
from dataclasses import replace

from bench.engine.model import Cell, Sequence, Step, Turn, Violation
from bench.wires.withhold import as_noted


def served_turn(sequence: Sequence, step: Step) -> Turn:
    """The turn `step`'s request was answered with: the sequence's turn, or, on a step the server
    noted as withheld (the request offered no tools or asked for none, :mod:`bench.wires.withhold`),
    that turn without its calls, as the loop got it. Replay steps never carry the note."""
    return as_noted(sequence.turns[step.turn], step.note, sequence.dialect)


def judge(sequence: Sequence, cell: Cell) -> tuple[Violation, ...]:
    """Every requirement of `sequence` that `cell` breaks (nothing for a crashed cell), each marked
    ``guess`` when it rests on the wording fallback: with the calls judged by their wording read the
    other way (:func:`read_otherwise`), the cell would not break it."""
    found = _judged(sequence, cell)
    other = read_otherwise(cell)
    if other is None or not found:
        return found
    still = {v.requirement for v in _judged(sequence, other)}
    return tuple(v if v.requirement in still else replace(v, guess=True) for v in found)


def rests_on_a_guess(sequence: Sequence, cell: Cell) -> bool:
    """Whether the cell's verdict rests on the wording fallback: read the other way
    (:func:`read_otherwise`), it would break other requirements (a pass or a failure that a guess
    decided, not what the loop was seen to do)."""
    other = read_otherwise(cell)
    if other is None:
        return False
    return {v.requirement for v in _judged(sequence, cell)} != {v.requirement for v in _judged(sequence, other)}


def read_otherwise(cell: Cell) -> Cell | None:
    """The cell with every call judged by its wording (a step's ``known`` says ``wording``) read the
    other way: a call guessed run as failed, one guessed failed as run; None when no call was guessed."""
    steps: list[Step] = []
    guessed = False
    for s in cell.steps:
        words = {i for i, how in s.known if how == "wording"}
        d = s.decision
        if not words or d.run == "all" or d.failed == "all":
            steps.append(s)
            continue
        guessed = True
        run = tuple(sorted({i for i in d.run if i not in words} | {i for i in d.failed if i in words}))
        failed = tuple(sorted({i for i in d.failed if i not in words} | {i for i in d.run if i in words}))
        names = dict(zip(d.run, s.tools_run, strict=False)) | dict(zip(d.failed, s.tools_failed, strict=False))
        steps.append(replace(s, decision=replace(d, run=run, failed=failed),
                             tools_run=tuple(names.get(i, "") for i in run),
                             tools_failed=tuple(names.get(i, "") for i in failed)))
    if not guessed:
        return None
    return replace(cell, steps=tuple(steps), tools_run=tuple(n for s in steps for n in s.tools_run),
                   tools_failed=tuple(n for s in steps for n in s.tools_failed))


def _judged(sequence: Sequence, cell: Cell) -> tuple[Violation, ...]:
    """The requirements `cell` breaks, as the cell says its calls went: each requirement the sequence
    sets, checked for its first violation, in the order of :class:`~bench.engine.model.Requirement`'s fields."""
    req = sequence.require
    if cell.outcome == "crashed" or req.is_empty():
        return ()
    found = (_broken_ok(req.ok, cell) if req.ok is not None else None,
             _broken_stops_within(req.stops_within, cell) if req.stops_within is not None else None,
             _broken_no_dropped_calls(sequence, cell) if req.no_dropped_calls else None,
             _broken_no_truncated_runs(sequence, cell) if req.no_truncated_runs else None,
             _broken_answer_after_tools(sequence, cell) if req.answer_after_tools else None,
             _broken_no_malformed_runs(sequence, cell) if req.no_malformed_runs else None,
             _broken_answer_on(req.answer_on, cell) if req.answer_on is not None else None,
             _broken_progress(req.progress, sequence, cell) if req.progress is not None else None)
    return tuple(filter(None, found))  # a Violation is never false


def _last_step(cell: Cell) -> int | None:
    return cell.steps[-1].step if cell.steps else None


def _broken_ok(ok: bool, cell: Cell) -> Violation | None:
    """``ok``: true needs a stop with success; false forbids one."""
    succeeded = cell.outcome == "stopped" and cell.ok is True
    if ok and not succeeded:
        return Violation("ok: true", _last_step(cell), f"the loop ended {_ending(cell)}, not with success")
    if not ok and succeeded:
        return Violation("ok: false", _last_step(cell),
                         f"the loop reported success ({cell.reason}) on a turn that is not an answer")
    return None


def _broken_stops_within(stops_within: int, cell: Cell) -> Violation | None:
    """``stops_within``: a stop, at that step or before."""
    if cell.outcome != "stopped":
        return Violation(f"stops_within: {stops_within}", _last_step(cell), f"the loop never stopped ({_ending(cell)})")
    if cell.n_steps > stops_within:
        return Violation(f"stops_within: {stops_within}", cell.n_steps, f"the loop stopped only at step {cell.n_steps}")
    return None


def _broken_no_dropped_calls(sequence: Sequence, cell: Cell) -> Violation | None:
    """``no_dropped_calls``: :func:`first_dropped_calls`."""
    dropped = first_dropped_calls(sequence, cell)
    return None if dropped is None else Violation("no_dropped_calls", dropped[0], dropped[1])


def _broken_no_truncated_runs(sequence: Sequence, cell: Cell) -> Violation | None:
    """``no_truncated_runs``: the first step that ran calls of a ``length`` turn."""
    for s in cell.steps:
        if served_turn(sequence, s).finish == "length" and s.tools_run:
            return Violation("no_truncated_runs", s.step,
                             f"ran {', '.join(s.tools_run)} from a truncated (length) turn")
    return None


def _broken_answer_after_tools(sequence: Sequence, cell: Cell) -> Violation | None:
    """``answer_after_tools``: success reported on a turn that carries calls."""
    if not (cell.outcome == "stopped" and cell.ok and cell.steps):
        return None
    final = cell.steps[-1]
    if not served_turn(sequence, final).tool_calls:
        return None
    return Violation("answer_after_tools", final.step, f"reported success on turn {final.turn}, which carries "
                     "tool calls whose results the model never saw")


def _broken_no_malformed_runs(sequence: Sequence, cell: Cell) -> Violation | None:
    """``no_malformed_runs``: the first step that ran calls whose arguments are not JSON."""
    for s in cell.steps:
        calls = served_turn(sequence, s).tool_calls
        bad = [calls[i].name for i in _run_indices(s, len(calls)) if not _is_json(calls[i].arguments)]
        if bad:
            return Violation("no_malformed_runs", s.step,
                             f"ran {', '.join(bad)} with arguments that are not valid JSON")
    return None


def _broken_answer_on(answer_on: tuple[int, ...], cell: Cell) -> Violation | None:
    """``answer_on``: success reported on a turn not listed."""
    if not (cell.outcome == "stopped" and cell.ok and cell.steps):
        return None
    final = cell.steps[-1]
    if final.turn in answer_on:
        return None
    allowed = ", ".join(str(i) for i in answer_on) or "none"
    return Violation(f"answer_on: {list(answer_on)}", final.step,
                     f"reported success on turn {final.turn}, which is not an answer (answers: turn {allowed})")


def _broken_progress(rounds: int, sequence: Sequence, cell: Cell) -> Violation | None:
    """``progress``: :func:`first_plain_repeat`."""
    stuck = first_plain_repeat(sequence, cell, rounds)
    return None if stuck is None else Violation(f"progress: {rounds}", stuck[0], stuck[1])


def round_signature(turn: Turn) -> tuple[tuple[str, str, str | None], ...]:
    """What makes two tool rounds the same: every call's name and arguments, and the result its
    tool returns (`ToolCall.result`; None, the default stub result, equals itself)."""
    return tuple((c.name, c.arguments, c.result) for c in turn.tool_calls)


def first_plain_repeat(sequence: Sequence, cell: Cell, rounds: int) -> tuple[int, str] | None:
    """The first step that runs a turn's calls plainly once more after `rounds` rounds in a row ran
    the same calls and got the same results, with a description; or None.

    A round is a `continue` that runs calls. The streak counts rounds with the same
    :func:`round_signature`; a round with other calls or other results starts it again (results
    that change are progress: a build still running, a poll that moves), and so does anything the
    loop does about it: a reminder, a stop, or a continue that changes the next request
    (`Decision.changes`). A resend runs nothing and leaves the streak as it is. A stop that runs
    the calls of its turn (a loop that executes a step's calls, then ends at its step cap without
    sending the results: Mastra's maxSteps, the AI SDK's stopWhen) ran the round once more: after
    the streak it breaks the requirement as a plain round would.
    """
    streak = 0
    previous: tuple[tuple[str, str, str | None], ...] | None = None
    for s in cell.steps:
        d = s.decision
        if d.action == "resend":
            continue
        turn = served_turn(sequence, s)
        plain_round = d.action in ("continue", "stop") and d.changes is None and bool(s.tools_run)
        if not plain_round:
            streak, previous = 0, None
            continue
        signature = round_signature(turn)
        if signature == previous and streak >= rounds:
            return s.step, (f"step {s.step}: ran {', '.join(s.tools_run)} again with the same arguments after "
                            f"{streak} rounds in a row that ran the same calls and got the same results")
        streak = streak + 1 if signature == previous else 1
        previous = signature
    return None


def first_dropped_calls(sequence: Sequence, cell: Cell) -> tuple[int, str] | None:
    """The first step that silently drops tool calls of its turn, with a description, or None.

    A step drops calls when fewer than all of its turn's calls were run or failed, unless the loop
    gave up openly (a stop with ok false) or resent a turn that is not usable as it stands (an
    error in place of a response, a truncated reply, or a call whose arguments are not valid JSON:
    Hermes' fix for truncated calls, predicates/hermes.py). Resending a usable turn that carries
    calls throws them away.
    """
    for s in cell.steps:
        d = s.decision
        turn = served_turn(sequence, s)
        if d.action == "stop" and d.ok is False:
            continue
        if d.action == "resend" and (turn.error is not None or turn.finish in ("error", "length")
                                     or any(not _is_json(c.arguments) for c in turn.tool_calls)):
            continue
        handled = len(s.tools_run) + len(s.tools_failed)
        if handled < len(turn.tool_calls):
            return s.step, (f"step {s.step} ({d.action} {d.rule}): turn {s.turn} carried {len(turn.tool_calls)} "
                            f"tool call(s) with finish {turn.finish} (raw {_raw(turn.finish_raw)}); {handled} were "
                            "run or failed")
    return None


def _run_indices(step: Step, n: int) -> range | tuple[int, ...]:
    run = step.decision.run
    return range(n) if run == "all" else run


def _is_json(arguments: str) -> bool:
    try:
        json.loads(arguments or "{}")  # an empty string (null on the wire, H12) is no arguments
    except ValueError:
        return False
    return True


def _ending(cell: Cell) -> str:
    if cell.outcome == "stopped":
        return f"stopped: {cell.reason}, ok={'true' if cell.ok else 'false'}"
    if cell.outcome == "running" and cell.error:  # a live loop the time limit ended while it still asked
        return f"running: {cell.error}"
    return cell.outcome


def _raw(finish_raw: str | None) -> str:
    """The provider's finish string as the catalogue writes it: double-quoted, or "none sent"."""
    return "none sent" if finish_raw is None else json.dumps(finish_raw, ensure_ascii=False)
