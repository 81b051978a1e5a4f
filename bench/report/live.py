"""Live columns: the ``<name>@live`` records ``stopbench check`` writes, shown by ``stopbench run``
after the predicates, each cell judged again against its sequence as it is now."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.check.faulted import judge_faulted
from bench.check.report import LIVE, live_cell_fits, load_live, recorded_faults
from bench.engine.model import ACTIONS, OUTCOMES, Cell
from bench.engine.model import Sequence as SequenceModel
from bench.errors import UnusableInput
from bench.golden.run import Result
from bench.report.labels import LIVE_SUFFIX, crashed_note

_LIVE_ACTIONS = (*ACTIONS, "unknown")
"""A live step's action: a decision, or ``unknown`` where the server could not tell what the program did."""


@dataclass(frozen=True, slots=True)
class LiveColumns:
    """The ``<name>@live`` columns a run shows after its predicates (:func:`live_columns`)."""

    columns: list[str]
    """Column names, in the order of their files' names."""
    results: list[Result]
    """Column by column, each in catalogue order; every status ``live``."""
    notes: list[str]
    """One line per record with cells the run leaves out (a sequence gone, or changed since)."""


def live_columns(folder: Path, sequences: Sequence[SequenceModel]) -> LiveColumns:
    """The live records of ``folder/live/`` (``stopbench check``) as extra columns for the
    sequences of `sequences`, each cell judged again against its sequence's ``require:`` as it is now.

    A cell for a sequence not in `sequences`, or one that cannot have been observed on it as it is
    now (a step answers a turn it no longer has, or runs a tool its turn does not call), is left out
    and noted. A record that is not one (bad JSON, a missing or mistyped field, a
    column not named ``<name>@live``, two cells for one sequence) raises :class:`UnusableInput`
    naming the file and the field."""
    by_id = {s.id: s for s in sequences}
    order = {s.id: i for i, s in enumerate(sequences)}
    columns: list[str] = []
    results: list[Result] = []
    notes: list[str] = []
    for col, cells in load_live(folder, by_id).items():
        path = folder / LIVE / f"{col.removesuffix(LIVE_SUFFIX)}.json"
        if not col.endswith(LIVE_SUFFIX) or col == LIVE_SUFFIX:
            raise UnusableInput(f"{path}: column: {col!r} is not named <name>{LIVE_SUFFIX}")
        injected = recorded_faults(path)  # a run with --faults is judged knowing what was injected
        kept: dict[str, Cell] = {}
        gone: list[str] = []
        changed: list[str] = []
        for i, cell in enumerate(cells):
            _check_live_cell(cell, col, f"{path}: cells[{i}]")
            if cell.sequence in kept:
                raise UnusableInput(f"{path}: cells[{i}].sequence: a second cell for {cell.sequence!r}")
            seq = by_id.get(cell.sequence)
            if seq is None:
                gone.append(cell.sequence)
            elif not live_cell_fits(seq, cell):
                changed.append(cell.sequence)
            else:
                kept[cell.sequence] = cell.with_violations(judge_faulted(seq, cell, injected.get(cell.sequence, ())))
        if gone:
            notes.append(f"note: {path}: {len(gone)} cell(s) for sequences not in the catalogue, left out: "
                         + ", ".join(sorted(gone)))
        if changed:
            notes.append(f"note: {path}: {len(changed)} cell(s) do not fit their sequence as it is now "
                         "(changed since the check; run stopbench check again), left out: "
                         + ", ".join(sorted(changed)))
        if kept:
            columns.append(col)
            results += [Result(kept[sid], "live") for sid in sorted(kept, key=order.__getitem__)]
    return LiveColumns(columns, results, notes)


def live_summary_lines(live: LiveColumns) -> list[str]:
    """What ``stopbench run`` says about its live columns, before its verdict line: the cells that
    fail counted as ``stopbench check`` counts them (requirements broken, or no verdict)."""
    out = []
    for col in live.columns:
        mine = [r.cell for r in live.results if r.cell.predicate == col]
        out.append(f"{col}: {len(mine)} cell(s) observed live, {sum(bool(c.violations) for c in mine)} breaking "
                   f"requirements{crashed_note(mine)} (no golden file; not part of this verdict: stopbench check "
                   "gives theirs)")
    return out






def _check_live_cell(cell: Cell, column: str, where: str) -> None:
    """Refuse a loaded live cell whose fields the reports cannot show (a record edited by hand, or
    written by something else)."""
    def bad(field: str, why: str) -> UnusableInput:
        return UnusableInput(f"{where}.{field}: {why}")

    def text(v: object) -> bool:
        return isinstance(v, str)

    def count(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if cell.predicate != column:
        raise bad("predicate", f"{cell.predicate!r}, not the record's column {column!r}")
    checks: list[tuple[str, bool, str]] = [
        ("sequence", text(cell.sequence) and bool(cell.sequence), "not a sequence id"),
        ("outcome", cell.outcome in OUTCOMES, f"{cell.outcome!r} is not one of {', '.join(OUTCOMES)}"),
        ("reason", cell.reason is None or text(cell.reason), "not a string or null"),
        ("ok", cell.ok is None or isinstance(cell.ok, bool), "not true, false or null"),
        ("error", cell.error is None or text(cell.error), "not a string or null"),
        ("tools_run", all(map(text, cell.tools_run)), "not a list of tool names"),
        ("tools_failed", all(map(text, cell.tools_failed)), "not a list of tool names"),
        ("reminders", count(cell.reminders), "not a count"),
        ("resends", count(cell.resends), "not a count"),
        ("tokens", count(cell.tokens), "not a count"),
    ]
    for field, fine, why in checks:
        if not fine:
            raise bad(field, why)
    for j, st in enumerate(cell.steps):
        d = st.decision
        if not (isinstance(st.turn, int) and not isinstance(st.turn, bool)):
            raise bad(f"decisions[{j}].turn", "not a turn index")
        if d.action not in _LIVE_ACTIONS:
            raise bad(f"decisions[{j}].action", f"{d.action!r} is not one of {', '.join(_LIVE_ACTIONS)}")
        if not text(d.rule) or not all(map(text, (*st.tools_run, *st.tools_failed))):
            raise bad(f"decisions[{j}]", "rule or tool names are not strings")
