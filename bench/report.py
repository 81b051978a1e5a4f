"""Reports of a run: the decision table (Markdown), every cell (CSV), and JSON lines.

Everything here is a pure function of the results and their order, so the same catalogue and
predicates give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
from tabulate import tabulate

from bench.changes import changes_data, changes_text
from bench.coverage import markdown_section, rule_coverage
from bench.discovery import Loaded
from bench.errors import UnusableInput
from bench.files import write_all_or_nothing
from bench.golden import Golden, path_of
from bench.judge import judge
from bench.model import ACTIONS, OUTCOMES, Cell
from bench.model import Sequence as SequenceModel
from bench.predicate import Predicate
from bench.runner import Result


def tool_list(names: tuple[str, ...] | list[str]) -> str:
    """Tool names in brackets, a run of the same name written once with its count:
    ``[read_file,write_file x3]``."""
    parts: list[str] = []
    i = 0
    while i < len(names):
        j = i
        while j < len(names) and names[j] == names[i]:
            j += 1
        parts.append(names[i] if j - i == 1 else f"{names[i]} x{j - i}")
        i = j
    return f"[{','.join(parts)}]"


def label(cell: Cell) -> str:
    """A cell in one short string, e.g. ``stop:no_tool_calls@3 ok [read_file,count_lines]``."""
    tools = tool_list(cell.tools_run)
    failed = f" failed{tool_list(cell.tools_failed)}" if cell.tools_failed else ""
    extras = ""
    if cell.resends:
        extras += f" resends={cell.resends}"
    if cell.reminders:
        extras += f" reminders={cell.reminders}"
    changed = changes_summary(cell)
    if changed:
        extras += f" {changed}"
    if cell.outcome == "stopped":
        verdict = "ok" if cell.ok else "not-ok"
        head = f"stop:{cell.reason}@{cell.n_steps} {verdict}"
    else:
        head = f"{cell.outcome}@{cell.n_steps}"
    return f"{head} {tools}{failed}{extras}"


def changes_summary(cell: Cell) -> str:
    """The request changes of a cell's steps, e.g. ``changes[2:+max_tokens=8192,3:+compact]``
    (step numbers from 1); empty when no step changes its next request."""
    parts = [f"{s.step}:{changes_text(s.decision.changes).replace(' ', '')}"
             for s in cell.steps if s.decision.changes is not None]
    return f"changes[{','.join(parts)}]" if parts else ""


def cell_record(result: Result) -> dict[str, Any]:
    """The JSON form of one cell: a stable format other tools read (``stopbench run --json``)."""
    c = result.cell
    return {
        "sequence": c.sequence,
        "predicate": c.predicate,
        "outcome": c.outcome,
        "reason": c.reason,
        "ok": c.ok,
        "steps": c.n_steps,
        "tools_run": list(c.tools_run),
        "tools_failed": list(c.tools_failed),
        "reminders": c.reminders,
        "resends": c.resends,
        "tokens": c.tokens,
        "error": c.error,
        "golden": result.status,
        "violations": [{"requirement": v.requirement, "step": v.step, "detail": v.detail}
                       for v in c.violations],
        "decisions": [
            {"step": s.step, "turn": s.turn, "action": s.decision.action, "reason": s.decision.reason,
             "ok": s.decision.ok, "rule": s.decision.rule, "run": list(s.tools_run),
             "failed": list(s.tools_failed), "changes": changes_data(s.decision.changes)}
            for s in c.steps
        ],
    }


def json_line(result: Result) -> bytes:
    return orjson.dumps(cell_record(result), option=orjson.OPT_APPEND_NEWLINE)


GLYPHS = {"ok": "✓", "not-ok": "✗", "running": "↻", "capped": "∞", "crashed": "‼"}
"""A cell's verdict as one glyph, the same in the Markdown and on the page."""

SHORT_ACTIONS = {"stopped": "stop", "running": "run", "capped": "cap", "crashed": "crash"}

MARKS = {"match": "", "mismatch": " ≠", "unreviewed": " ?", "live": ""}


def short_label(result: Result) -> str:
    """A cell in a few characters: glyph, ``action@steps``, then ⚠ (breaks a requirement), ≠ (golden
    mismatch) or ? (unreviewed), e.g. ``✗stop@2 ⚠ ?``; a live cell has no golden mark (its column,
    ``<name>@live``, says it was observed). The full cell is on the page and in cells.csv."""
    c = result.cell
    v = ("ok" if c.ok else "not-ok") if c.outcome == "stopped" else c.outcome
    viol = " ⚠" if c.violations else ""
    return f"{GLYPHS[v]}{SHORT_ACTIONS[c.outcome]}@{c.n_steps}{viol}{MARKS[result.status]}"


LEGEND = ("Cells: ✓ stopped with success, ✗ stopped with an error, ↻ still running when the sequence ended "
          "(`run`), ∞ the bench's safety cap (`cap`), ‼ the predicate crashed; then `action@steps` (requests "
          "made). ⚠ the cell breaks its sequence's requirements, ≠ it differs from its golden cell, ? it has no "
          "golden cell (unreviewed). Each cell's reason, tools, decision path and rules are in "
          "`index.html` (open it in a browser) and in `cells.csv`.")

LIVE_LEGEND = ("Columns named `<name>@live` were observed live: a program run against the replay server by "
               "`stopbench check` (its record is `reports/live/<name>.json`), each step inferred from its "
               "requests. They are judged against each sequence's `require:` as it is now, but never replayed "
               "and never compared with a golden file: they have no golden status, and they do not change the "
               "exit status of `stopbench run` (`stopbench check` gives their verdict).")


def violations_summary(results: list[Result], predicates: list[str]) -> tuple[list[str], list[list[Any]]]:
    """Requirement violations counted per predicate (rows) and requirement (columns, the requirement
    without its parameter: ``stops_within``), with a total; the headers and the rows."""
    kinds = sorted({v.requirement.split(":", 1)[0] for r in results for v in r.cell.violations})
    counts: dict[tuple[str, str], int] = {}
    for r in results:
        for v in r.cell.violations:
            key = (r.cell.predicate, v.requirement.split(":", 1)[0])
            counts[key] = counts.get(key, 0) + 1
    rows: list[list[Any]] = []
    for pred in predicates:
        row = [counts.get((pred, k), 0) for k in kinds]
        rows.append([pred, *row, sum(row)])
    return ["predicate", *kinds, "total"], rows


def decision_table(results: list[Result], sequences: list[str], predicates: list[str],
                   titles: dict[str, str] | None = None, sections: Sequence[str] = ()) -> str:
    """The Markdown report: a legend, the decision table of short cells, requirement violations
    counted per predicate and requirement, the golden status, then `sections` (further Markdown
    sections, each starting with its ``##`` heading) and the sequences' titles."""
    by_key = {(r.cell.sequence, r.cell.predicate): r for r in results}
    rows = []
    for seq in sequences:
        row = [seq]
        for pred in predicates:
            r = by_key.get((seq, pred))
            row.append("" if r is None else short_label(r))
        rows.append(row)
    live = {r.cell.predicate for r in results if r.status == "live"}
    out = ["# stopbench decision table", "",
           "One row per sequence, one column per predicate. " + LEGEND, ""]
    if live:
        out[-1:-1] = ["", LIVE_LEGEND]
    out.append(tabulate(rows, headers=["sequence", *predicates], tablefmt="github"))
    out += ["", "## Requirement violations", ""]
    total = sum(len(r.cell.violations) for r in results)
    if total:
        headers, viol_rows = violations_summary(results, predicates)
        out += [f"{total} violations in {sum(bool(r.cell.violations) for r in results)} cells, counted per "
                "predicate and requirement; each one's sequence, step and detail are in `index.html`, "
                "`cells.csv` and the output of `stopbench run`.", ""]
        out.append(tabulate(viol_rows, headers=headers, tablefmt="github"))
    else:
        out.append("None.")
    out += ["", "## Golden status", ""]
    status_rows = []
    for pred in predicates:
        if pred in live:
            continue  # observed live: no golden status (the legend says so)
        counts = {"match": 0, "mismatch": 0, "unreviewed": 0}
        crashed = violations = 0
        for r in results:
            if r.cell.predicate == pred:
                counts[r.status] += 1
                crashed += r.cell.outcome == "crashed"
                violations += bool(r.cell.violations)
        status_rows.append([pred, counts["match"], counts["mismatch"], counts["unreviewed"], crashed, violations])
    out.append(tabulate(status_rows, headers=["predicate", "match", "mismatch", "unreviewed", "crashed",
                                              "cells with violations"], tablefmt="github"))
    if live:
        out += ["", "Live columns (observed, no golden status): " + "; ".join(
            f"`{col}` {sum(r.cell.predicate == col for r in results)} cells, "
            f"{sum(r.cell.predicate == col and bool(r.cell.violations) for r in results)} with violations"
            + _crashed_note([r.cell for r in results if r.cell.predicate == col])
            for col in predicates if col in live) + "."]
    for section in sections:
        out += ["", section.rstrip("\n")]
    if titles:
        out += ["", "## Sequences", ""]
        out.append(tabulate([[s, titles.get(s, "")] for s in sequences], headers=["sequence", "title"],
                            tablefmt="github"))
    return "\n".join(out) + "\n"


CSV_COLUMNS = ["sequence", "predicate", "outcome", "reason", "ok", "steps", "tools_run", "tools_failed",
               "reminders", "resends", "tokens", "golden", "violations", "error", "path", "changes"]


def cells_frame(results: Iterable[Result]) -> pd.DataFrame:
    """One row per cell, the columns of :data:`CSV_COLUMNS`."""
    records = []
    for r in results:
        c = r.cell
        records.append({
            "sequence": c.sequence, "predicate": c.predicate, "outcome": c.outcome,
            "reason": c.reason or "", "ok": "" if c.ok is None else str(c.ok).lower(),
            "steps": c.n_steps, "tools_run": " ".join(c.tools_run), "tools_failed": " ".join(c.tools_failed),
            "reminders": c.reminders, "resends": c.resends, "tokens": c.tokens, "golden": r.status,
            "violations": "; ".join(f"{v.requirement}@{v.step}" for v in c.violations),
            "error": c.error or "", "path": " | ".join(path_of(c)), "changes": changes_summary(c),
        })
    return pd.DataFrame.from_records(records, columns=CSV_COLUMNS)


def write_reports(folder: Path, results: list[Result], sequences: list[str], predicates: list[str],
                  titles: dict[str, str] | None = None, *, catalogue: Sequence[SequenceModel] | None = None,
                  loaded: Sequence[Loaded] | None = None, golden: Golden | None = None) -> list[Path]:
    """Write ``decision-table.md`` and ``cells.csv`` into `folder`, and ``index.html`` when the
    sequences (`catalogue`) and predicates (`loaded`) themselves are given; return their paths.

    The set is written all or nothing (:func:`bench.files.write_all_or_nothing`): every report is
    rendered first, then all replace the old ones together, so a failure (a report that raises, a
    folder that cannot be written) leaves the previous set whole. Add a report with one entry below.
    """
    sections = [coverage_section(results, loaded)] if loaded is not None else []
    files = {
        folder / "decision-table.md": decision_table(results, sequences, predicates, titles, sections),
        folder / "cells.csv": cells_frame(results).to_csv(index=False, lineterminator="\n"),
    }
    if catalogue is not None and loaded is not None:
        files[folder / "index.html"] = page_html(folder, results, catalogue, loaded, golden)
    write_all_or_nothing(files)
    return list(files)


def coverage_section(results: list[Result], loaded: Sequence[Loaded]) -> str:
    """The ``## Rule coverage`` section of the decision table (:mod:`bench.coverage`): which
    declared rules of each loaded predicate fire on at least one cell of `results`."""
    return markdown_section(rule_coverage([p for p in loaded if isinstance(p, Predicate)],
                                          (r.cell for r in results)))


def page_html(folder: Path, results: list[Result], catalogue: Sequence[SequenceModel],
              loaded: Sequence[Loaded], golden: Golden | None = None) -> str:
    """``index.html``: the page of :mod:`bench.page`, with the conformance records of
    ``folder/conformance/``, each port's ``CONFORMANCE_EXPLAINED`` and the golden cells' basis."""
    # imported here: bench.page reads bench.report's labels (through bench.conform too)
    from bench.conform.report import explanations, port_module
    from bench.page import build_page, load_conformance
    from bench.page.scorecard import load_scorecard

    explained = {p.name: explanations(port_module(p.name)) for p in loaded}
    return build_page(results, catalogue, loaded, load_conformance(folder), explained, golden,
                      scorecard=load_scorecard(folder))


LIVE_SUFFIX = "@live"

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
    # imported here: bench.check.report reads this module's labels
    from bench.check.report import LIVE, load_live

    by_id = {s.id: s for s in sequences}
    order = {s.id: i for i, s in enumerate(sequences)}
    columns: list[str] = []
    results: list[Result] = []
    notes: list[str] = []
    for col, cells in load_live(folder, by_id).items():
        path = folder / LIVE / f"{col.removesuffix(LIVE_SUFFIX)}.json"
        if not col.endswith(LIVE_SUFFIX) or col == LIVE_SUFFIX:
            raise UnusableInput(f"{path}: column: {col!r} is not named <name>{LIVE_SUFFIX}")
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
                kept[cell.sequence] = cell.with_violations(judge(seq, cell))
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
                   f"requirements{_crashed_note(mine)} (no golden file; not part of this verdict: stopbench check "
                   "gives theirs)")
    return out


def _crashed_note(cells: Sequence[Cell]) -> str:
    """``, N crashed (no verdict)`` for live cells without a verdict, which check counts as failing;
    empty when there are none."""
    crashed = sum(c.outcome == "crashed" for c in cells)
    return f", {crashed} crashed (no verdict)" if crashed else ""


def live_cell_fits(seq: SequenceModel, cell: Cell) -> bool:
    """Whether a live cell can have been observed on `seq` as it is now: every step answers a turn
    it has, and every tool run or failed is named (and indexed) by a call of that turn."""
    for s in cell.steps:
        if not 0 <= s.turn < len(seq.turns):
            return False
        calls = seq.turns[s.turn].tool_calls
        if not {c.name for c in calls}.issuperset((*s.tools_run, *s.tools_failed)):
            return False
        for chosen in (s.decision.run, s.decision.failed):
            if chosen != "all" and not all(0 <= i < len(calls) for i in chosen):
                return False
    return True


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
