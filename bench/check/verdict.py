"""A check's verdict in words: what ``stopbench check`` prints on stdout for a :class:`~bench.check.run.CheckResult`.

One trial: the table (:func:`bench.check.report.table`), the requirements broken, the faults injected,
what the server served unasked, then per loop how many sequences meet their requirements. Several
trials: the trials' table, the cells that flip, the requirements broken by trial, pass^k per loop.
Or one JSON object per cell. The same text on every run of a deterministic program: times go to
:func:`wall_line`, which the command prints on stderr.
"""

from __future__ import annotations

import json

from bench.check.faulted import fault_lines
from bench.check.report import cell_json, column, live_label, not_run_line, note_lines, table, violation_lines
from bench.check.run import CheckResult
from bench.check.trials import by_sequence, flip_lines, pass_k
from bench.check.trials import table as trials_table


def verdict_text(result: CheckResult) -> str:
    """The verdict as ``check`` prints it: :func:`trials_text` for several trials, else :func:`one_trial_text`."""
    return trials_text(result) if result.options.trials > 1 else one_trial_text(result)


def json_text(result: CheckResult) -> str:
    """One JSON object per cell (with its wall time, and its trial when there are several), a line each."""
    lines = []
    for n in result.names:
        for t, trial in enumerate(result.trials[n]):
            for r in trial:
                row = {**cell_json(r.cell, r.observed, r.faults), "seconds": round(r.seconds, 2)}
                if result.options.trials > 1:
                    row["trial"] = t + 1
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def _section(head: str, lines: list[str]) -> list[str]:
    """A blank line, `head`, then `lines` indented; nothing when there are no lines."""
    return ["", head, *(f"  {line}" for line in lines)] if lines else []


def one_trial_text(result: CheckResult) -> str:
    """The table, the requirements broken, the faults injected, what was served unasked, the counts."""
    names = result.names
    runs = {n: result.runs(n) for n in names}
    lines = [*_section("requirements broken:", [line for n in names for line in violation_lines(n, runs[n])]),
             *_faults_section(result),
             *_section("served otherwise than the sequence says (what a real provider does there):",
                       [line for n in names for line in note_lines(n, runs[n])]),
             "", *(counts_line(result, n) for n in names)]
    left_out = not_run_line(result.chosen.other_dialects, result.options.dialects, len(result.chosen.scripted))
    if left_out:
        lines.append(left_out)
    return table(names, runs) + "".join(f"{line}\n" for line in lines)


def _faults_section(result: CheckResult) -> list[str]:
    """What the fault recipe injected, by loop, sequence and step (none without a recipe)."""
    recipe = result.options.faults
    if recipe is None:
        return []
    return _section(f"faults injected ({recipe.name}, seed {recipe.seed}):",
                    [line for n in result.names for line in fault_lines(column(n), result.runs(n))])


def counts_line(result: CheckResult, name: str) -> str:
    """How many sequences loop `name` met the requirements of, and of those it did not, how many were
    capped, crashed, or broke them only on a guess (a result read by its wording)."""
    runs = result.runs(name)
    n = len(result.chosen.sequences)
    bad = sum(r.failed for r in runs)
    capped = sum(r.cell.outcome == "capped" for r in runs)
    crashed = sum(r.cell.outcome == "crashed" for r in runs)
    guessed = sum(bool(r.cell.violations) and all(v.guess for v in r.cell.violations) for r in runs)
    on_a_guess = f", {guessed} only on a guess (a result read by its wording)" if guessed else ""
    return (f"{column(name)}: {n - bad} of {n} sequence(s) meet their requirements, "
            f"{bad} do not ({capped} capped, {crashed} crashed{on_a_guess})")


def trials_text(result: CheckResult) -> str:
    """The trials' table, the cells that flip, the broken requirements of each trial, pass^k per loop."""
    names, k = result.names, result.options.trials
    rows = {n: by_sequence(result.trials[n]) for n in names}
    broken = [f"trial {t + 1}: {line}" for n in names for t, trial in enumerate(result.trials[n])
              for line in violation_lines(n, trial)]
    lines = [*_section("cells that differ between trials:",
                       [line for n in names for line in flip_lines(n, rows[n], live_label, column)]),
             *_section("requirements broken:", broken), ""]
    if result.options.faults is not None:
        lines.append(f"fault seeds by trial: {', '.join(str(s) for s in result.seeds)} (the recipe's seed + the "
                     "trial's index)")
    for n in names:
        good, total = pass_k(rows[n])
        flipping = sum(r.flips for r in rows[n])
        lines.append(f"{column(n)}: pass^{k} {good} of {total} sequence(s) ({good / total:.0%}); "
                     f"{flipping} flip between trials")
    return trials_table(names, rows, k, live_label, column) + "".join(f"{line}\n" for line in lines)


def wall_line(result: CheckResult) -> str:
    """How many runs of how many sequences took how long, at how many jobs."""
    return (f"{result.total} run(s) of {len(result.chosen.sequences)} sequence(s) in {result.seconds:.1f} s "
            f"wall time (-j {result.jobs})")
