"""``stopbench show``: step through one sequence, each turn and each loop's decision."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli._common import EXIT_BAD_INPUT, folder_options, load_inputs
from bench.discovery import Broken
from bench.golden import compare, load_golden, shown_value
from bench.model import Turn
from bench.replay import replay
from bench.report import label


def describe_turn(turn: Turn) -> str:
    """One line per turn: finish (raw), content, tool calls, error."""
    raw = "none sent" if turn.finish_raw is None else repr(turn.finish_raw)
    parts = [f"finish={turn.finish} (raw {raw})"]
    parts.append("content=null" if turn.content is None else f"content={turn.content[:60]!r}")
    if turn.tool_calls:
        calls = ", ".join(f"{c.name}({c.arguments[:40]})" for c in turn.tool_calls)
        parts.append(f"tool_calls=[{calls}]")
    if turn.error:
        parts.append(f"error={turn.error.type}:{turn.error.status or ''} {turn.error.message[:40]}")
    if turn.end_turn is not None:
        parts.append(f"end_turn={str(turn.end_turn).lower()}")
    if turn.steer:
        parts.append(f"steer={turn.steer[:40]!r}")
    return " ".join(parts)


@click.command("show")
@click.argument("sequence")
@folder_options
@click.option("--predicate", "-p", "only", multiple=True, help="Only this predicate (repeatable).")
def show_cmd(sequence: str, sequences_dir: Path, predicates_dir: Path, expected_dir: Path, reports_dir: Path,
             safety_cap: int, no_entry_points: bool, only: tuple[str, ...]) -> None:
    """Step through SEQUENCE (its id, the file's stem): each turn, then each predicate's
    decisions with their rules, the cell, and how it compares with its expectation."""
    inputs = load_inputs(sequences_dir, predicates_dir, no_entry_points, only)
    seq = inputs.catalogue.by_id(sequence)
    if seq is None:
        click.echo(f"no usable sequence {sequence!r} under {sequences_dir}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    golden = load_golden(expected_dir)
    echo = click.echo
    echo(f"{seq.id}: {seq.title}")
    echo(f"  {seq.kind}, {seq.dialect}, then: {seq.then}; source: {seq.source.splitlines()[0]}")
    if not seq.require.is_empty():
        echo(f"  require: {seq.require}")
    for i, turn in enumerate(seq.turns):
        echo(f"  turn {i}: {describe_turn(turn)}")
    for pred in inputs.predicates:
        echo("")
        if isinstance(pred, Broken):
            echo(f"{pred.name}: did not load: {pred.error}")
            continue
        cell = replay(seq, pred, safety_cap)
        echo(f"{pred.name}: {label(cell)}")
        for s in cell.steps[:30]:
            d = s.decision
            extra = f" -> {d.reason}, ok={shown_value(d.ok)}" if d.action == "stop" else ""
            tools = f" run[{','.join(s.tools_run)}]" if s.tools_run else ""
            tools += f" failed[{','.join(s.tools_failed)}]" if s.tools_failed else ""
            cite = pred.rules.get(d.rule) or (pred.source if d.rule == pred.cap.rule else "")
            echo(f"  step {s.step} (turn {s.turn}): {d.action}{extra}{tools}  [{d.rule}] {cite[:90]}")
        if len(cell.steps) > 30:
            echo(f"  ... {len(cell.steps) - 30} more steps")
        if cell.error:
            echo(f"  crashed: {cell.error}")
        for v in cell.violations:
            echo(f"  violates {v.requirement} at step {v.step}: {v.detail}")
        exp = golden.expectation(pred.name, seq.id)
        if exp is None:
            echo("  golden: unreviewed")
        else:
            m = compare(cell, exp)
            echo("  golden: match" if m is None else f"  golden: {m}")
