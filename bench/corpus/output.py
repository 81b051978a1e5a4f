"""The corpus report: three tables as Parquet and CSV, and one HTML page, written all or nothing.

* ``cells``: per predicate, cells by outcome (and ``ok`` for stopped cells), with the rate among
  that predicate's cells;
* ``findings``: per predicate and finding (:data:`bench.corpus.aggregate.FINDINGS`), the cells that
  show it, their rate, and up to three example sequence ids (the smallest);
* ``edge_cases``: per provider, model and tag (:data:`bench.corpus.tags.EDGE_TAGS` and ``normal``),
  the sequences and turns carrying the tag, and their rates among that provider and model's.

Every table lists every row of its grid (zeros included) in one fixed order, so the same counts give
the same bytes, whichever order the shards were merged in. The page (``index.html``) uses the
decision matrix's style sheet (:mod:`bench.report.page`'s ``page.css``) and shows the same tables, with
nothing fetched and no script.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import jinja2

from bench.catalogue.files import write_all_or_nothing
from bench.corpus.aggregate import FINDINGS, Partial
from bench.corpus.tags import EDGE_TAGS
from bench.engine.model import OUTCOMES
from bench.report.labels import GLYPHS, VERDICTS

__all__ = ["TABLES", "render_page", "tables", "write_report"]

TABLES = ("cells", "findings", "edge_cases")

_HERE = Path(__file__).parent
_PAGE_CSS = _HERE.parent / "report" / "page" / "assets" / "page.css"

_FINDING_WORDS = {
    "truncated_as_success": "a cut-off (length) turn taken as success",
    "filtered_as_success": "a filtered turn taken as success",
    "errored_as_success": "an errored turn taken as success",
    "calls_dropped": "tool calls dropped silently",
    "stop_calls_run": "calls of a stop turn run",
    "stop_calls_not_run": "calls of a stop turn neither run nor failed",
    "stopped_at_cap": "stopped by its own cap before the recording ended",
    "safety_capped": "never stopped (the bench's safety cap)",
}


def _rate(n: int, total: int) -> float:
    return n / total if total else 0.0


def tables(part: Partial) -> dict[str, list[dict[str, Any]]]:
    """The rows of the three tables, in their fixed order."""
    preds = part.predicates
    per_pred = {p: sum(v for (q, _, _), v in part.cells.items() if q == p) for p in preds}
    cells: list[dict[str, Any]] = []
    for p in preds:
        for outcome in OUTCOMES:
            for ok in (("true", "false") if outcome == "stopped" else ("",)):
                n = part.cells.get((p, outcome, ok), 0)
                cells.append({"predicate": p, "outcome": outcome, "ok": ok, "cells": n,
                              "rate": _rate(n, per_pred[p])})
    findings = [{"predicate": p, "finding": f, "cells": part.findings.get((p, f), 0),
                 "rate": _rate(part.findings.get((p, f), 0), per_pred[p]),
                 "examples": " ".join(part.examples.get((p, f), []))} for p in preds for f in FINDINGS]
    edges: list[dict[str, Any]] = []
    for (provider, model), (n_seq, n_turns) in sorted(part.groups.items()):
        for tag in (*EDGE_TAGS, "normal"):
            s, t = part.edges.get((provider, model, tag), [0, 0])
            edges.append({"provider": provider, "model": model, "tag": tag, "sequences": s,
                          "sequence_rate": _rate(s, n_seq), "turns": t, "turn_rate": _rate(t, n_turns),
                          "group_sequences": n_seq, "group_turns": n_turns})
    return {"cells": cells, "findings": findings, "edge_cases": edges}


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    if rows:
        w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in row.items()})
    return out.getvalue()


_SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "cells": [("predicate", "string"), ("outcome", "string"), ("ok", "string"), ("cells", "int64"),
              ("rate", "float64")],
    "findings": [("predicate", "string"), ("finding", "string"), ("cells", "int64"), ("rate", "float64"),
                 ("examples", "string")],
    "edge_cases": [("provider", "string"), ("model", "string"), ("tag", "string"), ("sequences", "int64"),
                   ("sequence_rate", "float64"), ("turns", "int64"), ("turn_rate", "float64"),
                   ("group_sequences", "int64"), ("group_turns", "int64")],
}


def _parquet(name: str, rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    schema = pa.schema([(col, getattr(pa, kind)()) for col, kind in _SCHEMAS[name]])
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


_VERDICT_CELLS: dict[str, tuple[str, str]] = {"ok": ("stopped", "true"), "not-ok": ("stopped", "false")}
"""The (outcome, ok) cells of the tables a verdict counts; any other verdict is its outcome, with no ok."""


def render_page(part: Partial, rows: dict[str, list[dict[str, Any]]], inputs: list[str]) -> str:
    """The corpus section as one self-contained page (the decision matrix's CSS, no script)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    preds = part.predicates
    cell_grid = {(r["predicate"], r["outcome"], r["ok"]): r for r in rows["cells"]}
    finding_grid = {(r["predicate"], r["finding"]): r for r in rows["findings"]}
    groups = sorted(part.groups)
    edge_grid = {(r["provider"], r["model"], r["tag"]): r for r in rows["edge_cases"]}
    return env.get_template("page.html.j2").render(
        css=_PAGE_CSS.read_text(encoding="utf-8"), part=part, preds=preds, inputs=inputs,
        verdicts=[(*_VERDICT_CELLS.get(v, (v, "")), v, GLYPHS[v]) for v in VERDICTS],
        cell_grid=cell_grid, findings=FINDINGS, finding_words=_FINDING_WORDS, finding_grid=finding_grid,
        groups=groups, tags=[*EDGE_TAGS, "normal"], edge_grid=edge_grid)


def write_report(out: Path, part: Partial, inputs: list[str]) -> list[Path]:
    """Write the tables (Parquet and CSV) and the page into `out`, all or nothing; return the paths."""
    rows = tables(part)
    files: dict[Path, str | bytes] = {}
    for name in TABLES:
        files[out / f"{name}.parquet"] = _parquet(name, rows[name])
        files[out / f"{name}.csv"] = _csv(rows[name])
    files[out / "index.html"] = render_page(part, rows, inputs)
    write_all_or_nothing(files)
    return list(files)
