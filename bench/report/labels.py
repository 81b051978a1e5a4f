"""A cell in one string, its glyph and its record: the leaf every report, the page and the CLI share.

Nothing here imports another report module, so every output (Markdown, CSV, JSON lines, the page,
the live and conformance records) can use it without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import orjson

from bench.engine.changes import changes_data, changes_text
from bench.engine.model import Cell

if TYPE_CHECKING:
    from bench.golden.run import Result


Verdict: TypeAlias = Literal["ok", "not-ok", "running", "capped", "crashed"]
"""A cell's verdict: stopped with success, stopped with an error, or how else the replay ended."""

VERDICTS: tuple[Verdict, ...] = ("ok", "not-ok", "running", "capped", "crashed")

GLYPHS: dict[Verdict, str] = {"ok": "✓", "not-ok": "✗", "running": "↻", "capped": "∞", "crashed": "‼"}
"""A cell's verdict as one glyph, the same in the Markdown, on the page and on the corpus page: a cell is
never told by its colour alone."""

VERDICT_WORDS: dict[Verdict, str] = {
    "ok": "stopped, success", "not-ok": "stopped, error", "running": "still running when the sequence ended",
    "capped": "hit the bench's safety cap", "crashed": "predicate crashed"}
"""A verdict in words, where the page names it."""


def verdict(cell: Cell) -> Verdict:
    """One of :data:`VERDICTS`: ``ok`` or ``not-ok`` for a stopped cell (its ``ok``), else its outcome."""
    if cell.outcome == "stopped":
        return "ok" if cell.ok else "not-ok"
    return cell.outcome


def verdict_table() -> dict[str, Any]:
    """The verdicts, their glyphs and their words as data: the page's script reads them from its embedded
    data rather than writing them again."""
    return {"order": list(VERDICTS), "glyphs": dict(GLYPHS), "words": dict(VERDICT_WORDS)}


LIST_RUNS = 1000
"""Runs of tool names a label writes; a cell of more (a long cycle at a high ``--safety-cap``) counts the rest."""


def tool_runs(names: Sequence[str]) -> list[str]:
    """A run of the same name written once with its count (``write_file x3``), at most :data:`LIST_RUNS`
    runs and then ``… N more run(s)``."""
    runs = [name if k == 1 else f"{name} x{k}" for name, k in ((n, sum(1 for _ in same)) for n, same in groupby(names))]
    return runs if len(runs) <= LIST_RUNS else [*runs[:LIST_RUNS], f"… {len(runs) - LIST_RUNS} more run(s)"]


def tool_list(names: Sequence[str]) -> str:
    """Tool names in brackets as :func:`tool_runs` writes them: ``[read_file,write_file x3]``."""
    return "[" + ",".join(tool_runs(names)) + "]"


def label(cell: Cell, tools: Callable[[Sequence[str]], str] = tool_list, after: str = "") -> str:
    """A cell in one short string, e.g. ``stop:no_tool_calls@3 ok [read_file,count_lines]``: its head
    (``stop:<reason>@<steps> <verdict>`` or ``<outcome>@<steps>``), then `after` (a note on the head,
    e.g. how many requests a live run served), its tool lists as `tools` writes them, its resends,
    reminders and request changes."""
    text = f"{head(cell)}{after} {tools(cell.tools_run)}"
    if cell.tools_failed:
        text += f" failed{tools(cell.tools_failed)}"
    if cell.resends:
        text += f" resends={cell.resends}"
    if cell.reminders:
        text += f" reminders={cell.reminders}"
    changed = changes_summary(cell)
    return f"{text} {changed}" if changed else text


def head(cell: Cell) -> str:
    """How a cell ended: ``stop:<reason>@<steps> <verdict>`` for a stopped cell, else ``<outcome>@<steps>``."""
    if cell.outcome == "stopped":
        return f"stop:{cell.reason}@{cell.n_steps} {verdict(cell)}"
    return f"{cell.outcome}@{cell.n_steps}"


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
        "violations": [{"requirement": v.requirement, "step": v.step, "detail": v.detail,
                        **({"guess": True} if v.guess else {})} for v in c.violations],
        "decisions": [
            {"step": s.step, "turn": s.turn, "action": s.decision.action, "reason": s.decision.reason,
             "ok": s.decision.ok, "rule": s.decision.rule, "run": list(s.tools_run),
             "failed": list(s.tools_failed), "changes": changes_data(s.decision.changes)}
            for s in c.steps
        ],
    }


def json_line(result: Result) -> bytes:
    """One cell as a JSON line (``stopbench run --json``)."""
    return orjson.dumps(cell_record(result), option=orjson.OPT_APPEND_NEWLINE)


SHORT_ACTIONS = {"stopped": "stop", "running": "run", "capped": "cap", "crashed": "crash"}

MARKS = {"match": "", "mismatch": " ≠", "unreviewed": " ?", "live": ""}


def short_label(result: Result) -> str:
    """A cell in a few characters: glyph, ``action@steps``, then ⚠ (breaks a requirement), ≠ (golden
    mismatch) or ? (unreviewed), e.g. ``✗stop@2 ⚠ ?``; a live cell has no golden mark (its column,
    ``<name>@live``, says it was observed). The full cell is on the page and in cells.csv."""
    c = result.cell
    viol = " ⚠" if c.violations else ""
    return f"{GLYPHS[verdict(c)]}{SHORT_ACTIONS[c.outcome]}@{c.n_steps}{viol}{MARKS[result.status]}"


LEGEND = (f"Cells: {GLYPHS['ok']} stopped with success, {GLYPHS['not-ok']} stopped with an error, {GLYPHS['running']} "
          f"still running when the sequence ended (`run`), {GLYPHS['capped']} the bench's safety cap (`cap`), "
          f"{GLYPHS['crashed']} the predicate crashed; then `action@steps` (requests "
          "made). ⚠ the cell breaks its sequence's requirements, ≠ it differs from its golden cell, ? it has no "
          "golden cell (unreviewed). Each cell's reason, tools, decision path and rules are in "
          "`index.html` (open it in a browser) and in `cells.csv`.")

LIVE_LEGEND = ("Columns named `<name>@live` were observed live: a program run against the replay server by "
               "`stopbench check` (its record is `reports/live/<name>.json`), each step inferred from its "
               "requests. They are judged against each sequence's `require:` as it is now, but never replayed "
               "and never compared with a golden file: they have no golden status, and they do not change the "
               "exit status of `stopbench run` (`stopbench check` gives their verdict).")


LIVE_SUFFIX = "@live"
"""The suffix of a live column's name: ``<name>@live``."""


def crashed_note(cells: Sequence[Cell]) -> str:
    """``, N crashed (no verdict)`` for live cells without a verdict, which check counts as failing;
    empty when there are none."""
    crashed = sum(c.outcome == "crashed" for c in cells)
    return f", {crashed} crashed (no verdict)" if crashed else ""
