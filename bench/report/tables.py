"""The decision table (Markdown) and every cell (CSV): pure functions of the results and their order,
so the same catalogue and predicates give byte-identical files."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from tabulate import tabulate

from bench.golden.expected import path_of
from bench.golden.run import Result
from bench.report.labels import LEGEND, LIVE_LEGEND, changes_summary, crashed_note, short_label


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
    live = {r.cell.predicate for r in results if r.status == "live"}
    out = ["# stopbench decision table", "",
           "One row per sequence, one column per predicate. " + LEGEND, ""]
    if live:
        out[-1:-1] = ["", LIVE_LEGEND]
    out.append(_matrix(results, sequences, predicates))
    out += _violations_section(results, predicates)
    out += _golden_section(results, predicates, live)
    for section in sections:
        out += ["", section.rstrip("\n")]
    if titles:
        out += ["", "## Sequences", ""]
        out.append(tabulate([[s, _one_cell(titles.get(s, ""))] for s in sequences], headers=["sequence", "title"],
                            tablefmt="github"))
    return "\n".join(out) + "\n"


def _matrix(results: list[Result], sequences: list[str], predicates: list[str]) -> str:
    """The decision table itself: one row per sequence, one short cell per predicate (empty where
    the pair has no result)."""
    by_key = {(r.cell.sequence, r.cell.predicate): r for r in results}
    rows = []
    for seq in sequences:
        row = [seq]
        for pred in predicates:
            r = by_key.get((seq, pred))
            row.append("" if r is None else short_label(r))
        rows.append(row)
    return tabulate(rows, headers=["sequence", *predicates], tablefmt="github")


def _violations_section(results: list[Result], predicates: list[str]) -> list[str]:
    """The ``## Requirement violations`` section's lines: how many and their table (``None.`` when none)."""
    out = ["", "## Requirement violations", ""]
    total = sum(len(r.cell.violations) for r in results)
    if not total:
        return [*out, "None."]
    headers, viol_rows = violations_summary(results, predicates)
    out += [f"{total} violations in {sum(bool(r.cell.violations) for r in results)} cells, counted per "
            "predicate and requirement; each one's sequence, step and detail are in `index.html`, "
            "`cells.csv` and the output of `stopbench run`.", ""]
    out.append(tabulate(viol_rows, headers=headers, tablefmt="github"))
    return out


def _golden_section(results: list[Result], predicates: list[str], live: set[str]) -> list[str]:
    """The ``## Golden status`` section's lines: per replayed predicate, its cells by golden status,
    crashed and with violations; then one sentence on the `live` columns, which have no golden status."""
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
    out = ["", "## Golden status", "",
           tabulate(status_rows, headers=["predicate", "match", "mismatch", "unreviewed", "crashed",
                                          "cells with violations"], tablefmt="github")]
    if live:
        out += ["", "Live columns (observed, no golden status): " + "; ".join(
            f"`{col}` {sum(r.cell.predicate == col for r in results)} cells, "
            f"{sum(r.cell.predicate == col and bool(r.cell.violations) for r in results)} with violations"
            + crashed_note([r.cell for r in results if r.cell.predicate == col])
            for col in predicates if col in live) + "."]
    return out


def _one_cell(text: str) -> str:
    """Free text (a title) as one Markdown table cell: its lines joined by a space, ``|`` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


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
