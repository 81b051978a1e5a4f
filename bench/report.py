"""Reports of a run: the decision table (Markdown), every cell (CSV), and JSON lines.

Everything here is a pure function of the results and their order, so the same catalogue and
predicates give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
from tabulate import tabulate

from bench.golden import path_of, write_atomically
from bench.model import Cell
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
    if cell.outcome == "stopped":
        verdict = "ok" if cell.ok else "not-ok"
        head = f"stop:{cell.reason}@{cell.n_steps} {verdict}"
    else:
        head = f"{cell.outcome}@{cell.n_steps}"
    return f"{head} {tools}{failed}{extras}"


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
             "failed": list(s.tools_failed)}
            for s in c.steps
        ],
    }


def json_line(result: Result) -> bytes:
    return orjson.dumps(cell_record(result), option=orjson.OPT_APPEND_NEWLINE)


def decision_table(results: list[Result], sequences: list[str], predicates: list[str],
                   titles: dict[str, str] | None = None) -> str:
    """The Markdown report: the decision table, requirement violations, and golden status."""
    by_key = {(r.cell.sequence, r.cell.predicate): r for r in results}
    rows = []
    for seq in sequences:
        row = [seq]
        for pred in predicates:
            r = by_key.get((seq, pred))
            if r is None:
                row.append("")
                continue
            mark = {"match": "", "mismatch": " **MISMATCH**", "unreviewed": " (unreviewed)"}[r.status]
            viol = " ⚠" if r.cell.violations else ""
            row.append(label(r.cell) + viol + mark)
        rows.append(row)
    out = ["# stopbench decision table", "",
           "One row per sequence, one column per predicate. A cell reads "
           "`stop:<reason>@<steps> ok|not-ok [tools run]`, or `running@N` (the sequence ended while the "
           "loop still asked for a response), `capped@N` (the bench's safety cap), `crashed@N`. "
           "⚠ marks a cell that breaks its sequence's requirements (listed below).", ""]
    out.append(tabulate(rows, headers=["sequence", *predicates], tablefmt="github"))
    out += ["", "## Requirement violations", ""]
    viol_rows = [[r.cell.sequence, r.cell.predicate, v.requirement, "" if v.step is None else v.step, v.detail]
                 for r in results for v in r.cell.violations]
    if viol_rows:
        out.append(tabulate(viol_rows, headers=["sequence", "predicate", "requirement", "step", "detail"],
                            tablefmt="github"))
    else:
        out.append("None.")
    out += ["", "## Golden status", ""]
    status_rows = []
    for pred in predicates:
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
    if titles:
        out += ["", "## Sequences", ""]
        out.append(tabulate([[s, titles.get(s, "")] for s in sequences], headers=["sequence", "title"],
                            tablefmt="github"))
    return "\n".join(out) + "\n"


CSV_COLUMNS = ["sequence", "predicate", "outcome", "reason", "ok", "steps", "tools_run", "tools_failed",
               "reminders", "resends", "tokens", "golden", "violations", "error", "path"]


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
            "error": c.error or "", "path": " | ".join(path_of(c)),
        })
    return pd.DataFrame.from_records(records, columns=CSV_COLUMNS)


def write_reports(folder: Path, results: list[Result], sequences: list[str], predicates: list[str],
                  titles: dict[str, str] | None = None) -> list[Path]:
    """Write ``decision-table.md`` and ``cells.csv`` into `folder`; return their paths."""
    table = folder / "decision-table.md"
    write_atomically(table, decision_table(results, sequences, predicates, titles))
    csv_path = folder / "cells.csv"
    write_atomically(csv_path, cells_frame(results).to_csv(index=False, lineterminator="\n"))
    return [table, csv_path]
