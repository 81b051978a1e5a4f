"""``stopbench show``: step through one sequence, each turn and each loop's decision, for review.

What a person needs before ``stopbench accept``: the turns as the model sent them, each decision
with its rule, the full citation of every rule the cell went through (wrapped to the terminal,
never cut), the requirements it breaks, and how it differs from its golden cell, shown as the
lines ``accept --replace`` would change. With ``--live NAME``, the cell ``stopbench check`` observed
(``reports/live/NAME.json``) instead: each turn served, what the next request showed, the decision
inferred from it, how each answered call was known, and the requirements broken. Values are written
as the YAML files write them (``null``, ``true``, ``[a, b]``, strings in double quotes), never as
Python reprs.
"""

from __future__ import annotations

import difflib
import json
import shlex
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import click

from bench.catalogue.yaml_write import dump
from bench.check.explain import BLANK, GUESS, KNOWN_WORDS, known_text, tool_names, violation_words
from bench.check.report import LiveCell, cell_text, read_live_cell
from bench.cli._common import (
    folder_options,
    load_expected,
    load_inputs,
    load_sequences,
    only_predicates_option,
    reports_option,
)
from bench.engine.changes import changes_text
from bench.engine.discovery import Broken
from bench.engine.judge import rests_on_a_guess
from bench.engine.model import Cell, Requirement, Step, Turn
from bench.engine.model import Sequence as SequenceModel
from bench.engine.predicate import Predicate
from bench.errors import UnusableInput
from bench.golden.expected import ExpectedCell, cell_data, compare, expected_of, shown_value
from bench.golden.run import cells as replay_cells
from bench.report.labels import label

MAX_STEPS_SHOWN = 30
"""Steps listed per cell; the rest are counted (the rules they used are still cited)."""

TEXT_SHOWN = 200
"""Characters of a turn's content, reasoning or steer shown before the rest is counted."""


def quoted(text: str, limit: int = TEXT_SHOWN) -> str:
    """`text` in double quotes with JSON escapes (newlines visible), cut at `limit` characters with
    the rest counted."""
    if len(text) <= limit:
        return json.dumps(text, ensure_ascii=False)
    return f"{json.dumps(text[:limit], ensure_ascii=False)}... (+{len(text) - limit} chars)"


def describe_turn(turn: Turn) -> str:
    """One line per turn: finish (raw), content, tool calls, error, end_turn, steer."""
    raw = "none sent" if turn.finish_raw is None else quoted(turn.finish_raw)
    parts = [f"finish={turn.finish} (raw {raw})"]
    parts.append("content=null" if turn.content is None else f"content={quoted(turn.content)}")
    if turn.tool_calls:
        calls = ", ".join(f"{c.name if c.name.strip() else BLANK}"
                          f"({c.arguments if len(c.arguments) <= 80 else c.arguments[:80] + '...'})"
                          for c in turn.tool_calls)
        parts.append(f"tool_calls=[{calls}]")
    if turn.reasoning is not None:
        parts.append(f"reasoning={quoted(turn.reasoning, 80)}")
    if turn.error:
        status = f" {turn.error.status}" if turn.error.status is not None else ""
        message = f" {quoted(turn.error.message, 80)}" if turn.error.message else ""
        code = f" ({turn.error.code})" if turn.error.code else ""
        parts.append(f"error={turn.error.kind}{status}{code}{message}")
    if turn.end_turn is not None:
        parts.append(f"end_turn={shown_value(turn.end_turn)}")
    if turn.steer:
        parts.append(f"steer={quoted(turn.steer, 80)}")
    return " ".join(parts)


def describe_requirement(req: Requirement) -> str:
    """The fields set on a requirement: ``ok=false, stops_within=3, no_dropped_calls``."""
    out = []
    for f in fields(req):
        value = getattr(req, f.name)
        if value == f.default:
            continue
        out.append(f.name if value is True else f"{f.name}={shown_value(value)}")
    return ", ".join(out)


def citation(pred: Predicate, rule: str) -> str:
    """The source a rule cites: its declared citation, or for the cap the cap's note or the pin."""
    if rule in pred.rules:
        return pred.rules[rule]
    if rule == pred.cap.rule:
        return pred.cap_note or pred.source
    return "(not declared by the predicate)"


def wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
    """`text` wrapped to `width` columns, its own line breaks kept, nothing cut."""
    lines: list[str] = []
    for i, para in enumerate(text.splitlines() or [""]):
        lines += textwrap.wrap(para, width=width, initial_indent=first if i == 0 else rest, subsequent_indent=rest,
                               break_long_words=False, break_on_hyphens=False) or [first if i == 0 else rest]
    return lines


def golden_lines(cell: Cell, exp: ExpectedCell | None, golden_path: Path) -> list[str]:
    """How the cell compares with its golden cell: match, unreviewed, or the first difference and
    the lines of the golden file that ``accept --replace`` would change."""
    if exp is None:
        return [f"  golden: unreviewed (no cell in {golden_path}); after review: stopbench accept "
                f"{cell.predicate} -s {cell.sequence} --basis source|observed|rule"]
    m = compare(cell, exp)
    if m is None:
        return [f"  golden: match ({golden_path}, basis {exp.basis})"]
    out = [f"  golden: MISMATCH with {golden_path} (basis {exp.basis}): {m.what}",
           f"    expected: {m.expected}", f"    actual:   {m.actual}"]
    if cell.outcome == "crashed":
        return [*out, "  a crashed cell is never accepted: fix the predicate"]
    want = dump(cell_data(exp.model_copy(update={"note": None}))).splitlines()
    got = dump(cell_data(expected_of(cell, exp.basis))).splitlines()
    diff = [line for line in difflib.unified_diff(want, got, lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]
    out.append(f"  stopbench accept {cell.predicate} -s {cell.sequence} --replace would change:")
    out += [f"    {line[0]} {line[1:]}" for line in diff]
    return out


def observed_text(step: Step, detail: str) -> str:
    """What the server saw in the request after a live step's turn (or that none came)."""
    d = step.decision
    action: str = d.action  # an observed step may also be "unknown"
    if action == "stop":
        seen = "no further request"
    elif action == "resend":
        seen = "the next request was the same one again"
    elif action == "unknown":
        seen = "the next request could not be read as a loop's step"
    else:
        parts = []
        if step.tools_run:
            parts.append(f"ran {tool_names(step.tools_run)[1:-1]}")
        if step.tools_failed:
            parts.append(f"answered {tool_names(step.tools_failed)[1:-1]} with an error")
        known = known_text(step)
        if d.action == "remind":
            parts.append(f"added a message {quoted(d.message or '', 80)}")
        seen = "the next request " + (", ".join(parts) if parts else "added only the reply") + \
            (f" ({known})" if known else "")
    if d.changes is not None:
        seen += f"; it changed {changes_text(d.changes)}"
    return f"{seen}; the server noted: {detail}" if detail else seen


def result_lines(step: Step) -> list[str]:
    """The result text each judged call of a live step was answered with, and how it was judged
    (a result read by its wording is the bench's guess, said so)."""
    how = dict(getattr(step, "known", ()))
    out = []
    for i, text in getattr(step, "texts", ()):
        verdict = "failed" if i in _indices(step.decision.failed) else "ran"
        judged = KNOWN_WORDS.get(how.get(i, ""), "")
        guess = ", a guess" if how.get(i) == "wording" else ""
        out.append(f"result of call {i}: {quoted(text, 120)} ({verdict}{', ' + judged if judged else ''}{guess})")
    return out


def _indices(calls: object) -> tuple[int, ...]:
    return calls if isinstance(calls, tuple) else ()


def show_live(seq: SequenceModel, cells: list[LiveCell], echo: Callable[[str], None]) -> None:
    """Each live cell of `seq` (:func:`bench.check.report.read_live_cell`), step by step."""
    for live in cells:
        cell = live.cell
        echo("")
        echo(f"{cell.predicate} ({live.path}: {shlex.join(live.command)}): "
             f"{cell_text(cell, seq, live.requests)}")
        for s in cell.steps[:MAX_STEPS_SHOWN]:
            turn = seq.turns[s.turn]
            echo(f"  step {s.step}: served turn {s.turn}: {describe_turn(turn)}")
            echo(f"    observed: {observed_text(s, live.details.get(s.step, ''))}")
            d = s.decision
            inferred = (f"stop, ok={shown_value(d.ok)}, reason {quoted(d.reason or '')}" if d.action == "stop"
                        else d.action)
            echo(f"    inferred: {inferred}")
            for line in result_lines(s):
                echo(f"    {line}")
            note = getattr(s, "note", "")
            if note:
                echo(f"    served unasked: {note}")
        if len(cell.steps) > MAX_STEPS_SHOWN:
            echo(f"  ... {len(cell.steps) - MAX_STEPS_SHOWN} more steps")
        if cell.outcome == "crashed":
            echo(f"  crashed after {live.requests if live.requests is not None else cell.n_steps} request(s) "
                 f"served: {cell.error}")
        for v in cell.violations:
            at = f" at step {v.step}" if v.step is not None else ""
            echo(f"  violates {v.requirement}{at}: {violation_words(v, seq, cell)}: {v.detail}"
                 f"{GUESS if v.guess else ''}")
        if not any(v.guess for v in cell.violations) and rests_on_a_guess(seq, cell):
            echo(f"  verdict{GUESS}: read the other way, the cell's requirements would come out otherwise")


@click.command("show")
@click.argument("sequence")
@folder_options
@only_predicates_option
@reports_option
@click.option("--live", "live", multiple=True, metavar="NAME",
              help="Instead of the predicates: step through the live cell of REPORTS/live/NAME.json "
                   "(stopbench check): each turn served, the request observed after it, the decision inferred "
                   "(repeatable).")
def show_cmd(sequence: str, sequences_dir: Path, predicates_dir: Path, expected_dir: Path,
             safety_cap: int, no_entry_points: bool, only: tuple[str, ...], reports_dir: Path,
             live: tuple[str, ...]) -> None:
    """Step through SEQUENCE (its id, the file's stem): each turn, then each predicate's
    decisions with their rules (cited in full), the cell, and how it compares with its
    expectation; with --live NAME, the cell `stopbench check` observed instead."""
    inputs = None if live else load_inputs(sequences_dir, predicates_dir, no_entry_points, only)
    found = (inputs.catalogue if inputs is not None else load_sequences(sequences_dir)).by_id(sequence)
    if found is None:
        raise UnusableInput(f"no usable sequence {sequence} under {sequences_dir} (stopbench list shows the ids)")
    seq = found
    cells = [read_live_cell(reports_dir, name, seq) for name in live]  # every record read before anything is shown
    width = max(60, shutil.get_terminal_size((100, 24)).columns - 1)
    echo: Callable[[str], None] = click.echo
    for line in sequence_lines(seq, width):
        echo(line)
    if inputs is None:
        show_live(seq, cells, echo)
        return
    golden = load_expected(expected_dir)
    row = next(replay_cells([seq], inputs.predicates, safety_cap))  # each predicate sees the sequence untouched
    for pred, cell in zip(inputs.predicates, row, strict=True):
        echo("")
        if isinstance(pred, Broken):
            echo(f"{pred.name}: did not load: {pred.error}")
            continue
        for line in cell_lines(pred, cell, width):
            echo(line)
        exp = golden.expectation(pred.name, seq.id)
        for line in golden_lines(cell, exp, expected_dir / f"{pred.name}.yaml"):
            echo(line)
        if exp is not None and exp.note:
            for line in wrapped(exp.note, width, "  golden note: ", "    "):
                echo(line)


def sequence_lines(seq: SequenceModel, width: int) -> list[str]:
    """The sequence: its id and title, kind, dialect and then, its source wrapped to `width`, its
    requirements and each turn."""
    lines = [f"{seq.id}: {seq.title}", f"  {seq.kind}, {seq.dialect}, then: {seq.then}",
             *wrapped(seq.source, width, "  source: ", "    ")]
    if not seq.require.is_empty():
        lines.append(f"  require: {describe_requirement(seq.require)}")
    return lines + [f"  turn {i}: {describe_turn(turn)}" for i, turn in enumerate(seq.turns)]


def cell_lines(pred: Predicate, cell: Cell, width: int) -> list[str]:
    """A predicate's cell: its label, each step with its decision and rule, each rule used cited in
    full (wrapped to `width`), the crash, and the requirements it breaks."""
    lines = [f"{pred.name}: {label(cell)}"]
    for s in cell.steps[:MAX_STEPS_SHOWN]:
        d = s.decision
        extra = f" -> {d.reason}, ok={shown_value(d.ok)}" if d.action == "stop" else ""
        tools = f" run[{','.join(s.tools_run)}]" if s.tools_run else ""
        tools += f" failed[{','.join(s.tools_failed)}]" if s.tools_failed else ""
        lines.append(f"  step {s.step} (turn {s.turn}): {d.action}{extra}{tools}  [{d.rule}]")
    if len(cell.steps) > MAX_STEPS_SHOWN:
        lines.append(f"  ... {len(cell.steps) - MAX_STEPS_SHOWN} more steps")
    used = list(dict.fromkeys(s.decision.rule for s in cell.steps))
    if used:
        lines.append("  rules:")
        for rule in used:
            lines += wrapped(citation(pred, rule), width, f"    [{rule}] ", "      ")
    if cell.error:
        lines.append(f"  crashed: {cell.error}")
    for v in cell.violations:
        at = f" at step {v.step}" if v.step is not None else ""
        lines.append(f"  violates {v.requirement}{at}: {v.detail}")
    return lines
