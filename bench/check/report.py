"""What ``stopbench check`` prints and keeps: the table of live cells and ``reports/live/<name>.json``.

A live column is named ``<name>@live``. Its record holds no times and no temporary paths, so the
same program on the same catalogue gives the same file (when the program itself is deterministic).
:func:`load_live` reads the records back as cells, for a report writer that adds the live columns to
the decision table, cells.csv, the JSON lines or the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.catalogue.files import write_atomically
from bench.check.explain import BLANK, GUESS, tool_names
from bench.check.explain import violation_words as _requirement_words
from bench.check.faulted import WORDS, StepFault, judge_faulted
from bench.check.runner import LiveRun, stable
from bench.engine.changes import changes_data, changes_from
from bench.engine.model import ALL, Cell, Decision, Step, Violation
from bench.engine.model import Sequence as SequenceModel
from bench.errors import UnusableInput
from bench.report.labels import label
from bench.serve.observe import Observed

__all__ = [
    "BLANK",
    "LIVE",
    "LiveCell",
    "ProgressLine",
    "cell_from_json",
    "cell_json",
    "cell_text",
    "column",
    "live_label",
    "live_record",
    "load_live",
    "merge_live",
    "not_run_line",
    "read_live_cell",
    "recorded_faults",
    "stable",
    "table",
    "tool_names",
    "violation_lines",
    "write_live",
]

LIVE = "live"
"""The folder under reports/ and the column suffix."""


def column(name: str) -> str:
    return f"{name}@{LIVE}"


def live_label(cell: Cell, requests: int | None = None) -> str:
    """A live cell in one short string, :func:`bench.report.labels.label` with the tool lists of
    :func:`tool_names`; a crashed cell says how many model requests were served before it
    (``crashed@0 after 1 request served``), which its steps alone do not show."""
    served = ""
    if cell.outcome == "crashed" and requests is not None:
        served = f" after {requests} request{'' if requests == 1 else 's'} served"
    return label(cell, tool_names, served)


def cell_text(cell: Cell, sequence: SequenceModel | None = None, requests: int | None = None) -> str:
    """The cell's :func:`live_label`, then ⚠ and what it did wrong in plain words
    (:func:`bench.check.explain.violation_words`, the served turn named when `sequence` is given);
    a crashed cell says why."""
    text = live_label(cell, requests)
    served = _notes(cell)
    if served:
        by_head: dict[str, list[int]] = {}
        for step, note in served:
            by_head.setdefault(note.split(":", 1)[0], []).append(step)
        text += " (" + "; ".join(f"step{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}: {head}"
                                 for head, at in by_head.items()) + ")"
    if cell.outcome == "crashed" and cell.error:
        text += f" ({stable(cell.error)[:80]})"
    if cell.violations:
        text += " ⚠ " + "; ".join(dict.fromkeys(violation_words(v, sequence, cell) + (GUESS if v.guess else "")
                                                 for v in cell.violations))
    return text


def violation_words(violation: Violation, sequence: SequenceModel | None = None, cell: Cell | None = None) -> str:
    """What the cell did, in plain words: :func:`bench.check.explain.violation_words`, or for a fault
    requirement (``check --faults``) its words in :data:`bench.check.faulted.WORDS`."""
    return WORDS.get(violation.requirement) or _requirement_words(violation, sequence, cell)


def not_run_line(other_dialects: int, dialects: Sequence[str], scripted: int) -> str:
    """The summary's count of the chosen sequences check did not run, and why; empty when none."""
    parts = []
    if other_dialects:
        parts.append(f"{other_dialects} of another dialect than {', '.join(dialects)}")
    if scripted:
        parts.append(f"{scripted} scripting its tool results")
    return f"not run: {other_dialects + scripted} sequence(s): {', '.join(parts)}" if parts else ""


def difference(cells: Sequence[Cell]) -> str:
    """What differs between the loops' cells of one sequence: who breaks requirements, or that
    they took different paths; empty when every cell is the same."""
    if len({(label(c), bool(c.violations)) for c in cells}) <= 1:  # a verdict alone can differ (retry_after)
        return ""
    bad = [c.predicate for c in cells if c.violations or c.outcome == "crashed"]
    if bad and len(bad) < len(cells):
        return "⚠ only " + ", ".join(bad)
    return "different paths"


def table(names: Sequence[str], runs: Mapping[str, Sequence[LiveRun]]) -> str:
    """A Markdown table: one row per sequence, one column per loop, and the difference when there
    are several loops."""
    cols = [column(n) for n in names]
    head = ["sequence", *cols] + (["difference"] if len(names) > 1 else [])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    first = runs[names[0]]
    for i, r in enumerate(first):
        cells = [runs[n][i].cell for n in names]
        row = [r.sequence.id, *(cell_text(runs[n][i].cell, r.sequence, len(runs[n][i].observed)).replace("|", "\\|")
                                for n in names)]
        if len(names) > 1:
            row.append(difference(cells))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


class ProgressLine:
    """``check``'s progress on a terminal: one line, rewritten as each run ends, with the runs done,
    the time so far and an estimate of the time left (the mean wall time a run has taken so far, times
    the runs to go); :meth:`end` closes it. Off a terminal ``check`` shows none (its stderr is a log)."""

    def __init__(self, total: int, write: Callable[[str], None], started: float, width: int = 100) -> None:
        self.total = total
        self.write = write
        self.started = started
        self.width = width
        self.done = 0

    def __call__(self, name: str, run: LiveRun, now: float) -> None:
        self.done += 1
        spent = now - self.started
        left = spent / self.done * (self.total - self.done)
        text = (f"[{self.done}/{self.total}] {spent:.0f} s, about {_duration(left)} left; "
                f"{column(name)} {run.sequence.id}: {run.cell.outcome}")
        self.write("\r" + text[:self.width - 1].ljust(self.width - 1))

    def end(self) -> None:
        if self.done:
            self.write("\n")


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _notes(cell: Cell) -> list[tuple[int, str]]:
    """(step, note) for each step the server served unasked (e.g. tool calls withheld)."""
    return [(s.step, note) for s in cell.steps if (note := getattr(s, "note", ""))]


def note_lines(name: str, runs: Sequence[LiveRun]) -> list[str]:
    """One line per step the server served otherwise than the sequence says, and why."""
    return [f"{column(name)} {r.cell.sequence}: step {step}: {stable(note)}" for r in runs for step, note in
            _notes(r.cell)]


def violation_lines(name: str, runs: Sequence[LiveRun]) -> list[str]:
    """One line per broken requirement (and per crashed cell): what the loop did in plain words,
    the requirement and its step, then the judge's detail."""
    out: list[str] = []
    for r in runs:
        c = r.cell
        if c.outcome == "crashed":
            served = len(r.observed)
            out.append(f"{column(name)} {c.sequence}: crashed after {served} request{'' if served == 1 else 's'} "
                       f"served: {stable(c.error or '')}")
        for v in c.violations:
            at = f" at step {v.step}" if v.step is not None else ""
            out.append(f"{column(name)} {c.sequence}: {violation_words(v, r.sequence, c)} "
                       f"(breaks {v.requirement}{at}): {v.detail}{GUESS if v.guess else ''}")
    return out


def cell_json(cell: Cell, observed: Sequence[Observed] = (), faults: Sequence[StepFault] = ()) -> dict[str, Any]:
    """One live cell in the JSON-lines form of ``stopbench run --json`` (``golden`` is ``live``).

    Each decision keeps what the judge reads besides the tools' names (``calls_run`` and
    ``calls_failed``: the indices of the turn's calls; ``changes``: what the next request changed),
    so a record re-judged by ``stopbench run`` gives the violations it was written with; and what
    the server noted (`observed`: its ``detail`` per step, how each answered call was known, and
    ``requests``, the model requests it answered, a crashed cell's dropped last one included); and
    ``injected``, what a fault recipe did to each step's answer (``check --faults``), which the
    verdict was judged with and a re-judging reads back."""
    notes = {o.step: stable(o.detail) for o in observed if o.detail}
    out = {
        "sequence": cell.sequence, "predicate": cell.predicate, "outcome": cell.outcome, "reason": cell.reason,
        "ok": cell.ok, "steps": cell.n_steps, "tools_run": list(cell.tools_run),
        "tools_failed": list(cell.tools_failed), "reminders": cell.reminders, "resends": cell.resends,
        "tokens": cell.tokens, "error": None if cell.error is None else stable(cell.error), "golden": LIVE,
        "violations": [violation_json(v) for v in cell.violations],
        "decisions": [_decision_json(s, notes.get(s.step, "")) for s in cell.steps],
    }
    if observed:
        out["requests"] = len(observed)
    if faults:
        out["injected"] = [f.as_json() for f in faults]
    return out


def violation_json(v: Violation) -> dict[str, Any]:
    """A violation as a record keeps it; ``guess`` only on one that rests on the wording fallback."""
    return {"requirement": v.requirement, "step": v.step, "detail": v.detail, **({"guess": True} if v.guess else {})}


def _decision_json(s: Step, detail: str) -> dict[str, Any]:
    d = s.decision
    out: dict[str, Any] = {
        "step": s.step, "turn": s.turn, "action": d.action, "reason": d.reason, "ok": d.ok, "rule": d.rule,
        "run": list(s.tools_run), "failed": list(s.tools_failed), "message": d.message,
        "calls_run": d.run if d.run == ALL else list(d.run),
        "calls_failed": d.failed if d.failed == ALL else list(d.failed),
        "changes": changes_data(d.changes)}
    known = getattr(s, "known", ())
    if known:
        out["known"] = [[i, how] for i, how in known]
    note = getattr(s, "note", "")
    if note:
        out["note"] = stable(note)
    texts = getattr(s, "texts", ())
    if texts:
        out["texts"] = [[i, text] for i, text in texts]
    if detail:
        out["detail"] = detail
    return out


def live_record(name: str, command: Sequence[str], runs: Sequence[LiveRun],
                trials: Sequence[Sequence[LiveRun]] = (), extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The live record of one check of one loop (see :func:`write_live`)."""
    record: dict[str, Any] = {"name": name, "column": column(name), "command": list(command),
                              "cells": [cell_json(r.cell, r.observed, r.faults) for r in runs]}
    if len(trials) > 1:
        from bench.check.trials import by_sequence, summary

        record["trials"] = [{"trial": t + 1, "cells": [cell_json(r.cell, r.observed, r.faults) for r in trial]}
                            for t, trial in enumerate(trials)]
        record["pass_k"] = summary(by_sequence(trials), len(trials))
    record.update(extra or {})
    return record


def write_live(folder: Path, name: str, command: Sequence[str], runs: Sequence[LiveRun],
               trials: Sequence[Sequence[LiveRun]] = (), extra: Mapping[str, Any] | None = None) -> Path:
    """Write ``folder/live/<name>.json`` atomically; returns its path.

    With `trials` (``check --trials K``: ``trials[t]`` the runs of trial t) the record also carries
    every trial's cells under ``trials`` and pass^k under ``pass_k`` (:mod:`bench.check.trials`);
    ``cells`` stays the first trial's, so a reader of one run per sequence reads it as before.
    `extra` adds top-level entries (the fault recipe and the trials' seeds)."""
    path = folder / LIVE / f"{name}.json"
    _write_record(path, live_record(name, command, runs, trials, extra))
    return path


def _write_record(path: Path, record: Mapping[str, Any]) -> None:
    write_atomically(path, json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


@dataclass(frozen=True, slots=True)
class Merged:
    """What :func:`merge_live` did: the record's path, the cells it kept from before, and why it
    started afresh instead (empty when it merged, or there was no record)."""

    path: Path
    kept: int
    afresh: str = ""


def merge_live(folder: Path, record: Mapping[str, Any], made: str) -> Merged:
    """Merge `record` (:func:`live_record` of a run of some sequences) into ``folder/live/<name>.json``:
    its cells replace those of the same sequences, the others are kept, and ``made`` says for every
    cell when it was made (`made`, an ISO time, for this run's; a kept cell of a record without
    ``made`` is dated by the file's modification time). The record's other entries are this run's.
    A record there made by another command or fault recipe, or that cannot be read, is replaced
    (:attr:`Merged.afresh` says why)."""
    path = folder / LIVE / f"{record['name']}.json"
    new = dict(record)
    new_ids = [c["sequence"] for c in new["cells"]]
    old, afresh = _previous(path, new)
    if old is None:
        _write_record(path, new)
        return Merged(path, 0, afresh)
    made_then = old.get("made")
    before: dict[str, Any] = made_then if isinstance(made_then, dict) else {}
    stamp = _mtime(path)
    kept = [c for c in old["cells"] if c.get("sequence") not in new_ids]
    by_id = {c["sequence"]: c for c in new["cells"]}
    new["cells"] = [by_id.pop(c["sequence"], c) for c in old["cells"]] + [by_id[i] for i in new_ids if i in by_id]
    new["made"] = {str(c["sequence"]): made if c["sequence"] in new_ids else str(before.get(c["sequence"], stamp))
                   for c in new["cells"]}
    _write_record(path, new)
    return Merged(path, len(kept))


def _previous(path: Path, new: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The record at `path` to merge into, or None and why not (empty: there is none)."""
    if not path.is_file():
        return None, ""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(old, dict) or not all(isinstance(c, dict) and isinstance(c.get("sequence"), str)
                                                for c in old["cells"]):
            raise ValueError("cells: not a list of cells")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"{path} could not be read ({exc}): started afresh"
    if old.get("command") != new["command"]:
        return None, f"{path} was made by another command ({' '.join(map(str, old.get('command') or ()))}): " \
                     "started afresh"
    if old.get("faults") != new.get("faults"):
        return None, f"{path} was made with other injected faults: started afresh"
    return old, ""


def _mtime(path: Path) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class LiveCell:
    """One live cell of a record, judged against its sequence as it is now (``stopbench show --live``)."""

    path: Path
    command: tuple[str, ...]
    cell: Cell
    details: dict[int, str]
    """What the server noted on a step it could not read plainly, by step."""
    requests: int | None
    """Model requests the server answered (None in a record that does not say)."""


def read_live_cell(folder: Path, name: str, sequence: SequenceModel) -> LiveCell:
    """The cell of `sequence` in ``folder/live/<name>.json``, judged again as ``stopbench run`` does;
    :class:`UnusableInput` (one line) when there is no such record or cell, or the cell does not
    fit the sequence as it is now. A cell a fault recipe was injected into is judged knowing it
    (:mod:`bench.check.faulted`)."""

    path = folder / LIVE / f"{name}.json"
    if not path.is_file():
        raise UnusableInput(f"no live record {path} (stopbench check --name {name} -- COMMAND writes it)")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        found = [c for c in record["cells"] if c.get("sequence") == sequence.id]
        if not found:
            raise UnusableInput(f"{path} has no cell for {sequence.id} (not run, or run on another catalogue)")
        data = found[0]
        cell = cell_from_json(data, sequence)
        command = tuple(str(a) for a in record.get("command", ()))
        details = {int(d["step"]): str(d["detail"]) for d in data["decisions"] if d.get("detail")}
        requests = data.get("requests")
        faults = tuple(StepFault.from_json(f) for f in data.get("injected", ()))
    except OSError as exc:
        raise UnusableInput(f"{path}: cannot read a live record: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnusableInput(f"{path}: not a live record: {exc}") from None
    if not live_cell_fits(sequence, cell):
        raise UnusableInput(f"{path}: the cell for {sequence.id} does not fit the sequence as it is now (changed "
                            "since the check; run stopbench check again)")
    return LiveCell(path, command, cell.with_violations(judge_faulted(sequence, cell, faults)), details,
                    requests if isinstance(requests, int) else None)


def load_live(folder: Path, sequences: Mapping[str, SequenceModel] | None = None) -> dict[str, list[Cell]]:
    """Every ``folder/live/*.json`` as ``{column: cells}`` (the cells judged as when written).

    A record written before decisions kept their call indices names only the tools: with
    `sequences` given, each name is matched to the first call of that name in its turn not matched
    yet (ambiguous only when a turn calls one tool twice with different arguments)."""
    out: dict[str, list[Cell]] = {}
    for path in sorted((folder / LIVE).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            out[str(record["column"])] = [cell_from_json(c, (sequences or {}).get(c.get("sequence")))
                                          for c in record["cells"]]
        except OSError as exc:  # a folder named like a record, a file that cannot be read
            raise UnusableInput(f"{path}: cannot read a live record: {exc.strerror or exc}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UnusableInput(f"{path}: not a live record: {exc}") from None
    return out


def recorded_faults(path: Path) -> dict[str, tuple[StepFault, ...]]:
    """What a fault recipe injected into each cell of the live record at `path`, by sequence (cells
    without faults left out), so a re-judging judges as ``check`` did (:func:`bench.check.faulted.judge_faulted`).
    :class:`UnusableInput` naming the file for a record whose ``injected`` cannot be read."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return {str(c["sequence"]): tuple(StepFault.from_json(f) for f in c["injected"])
                for c in record["cells"] if c.get("injected")}
    except OSError as exc:
        raise UnusableInput(f"{path}: cannot read a live record: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnusableInput(f"{path}: not a live record: {exc}") from None


def _indices(d: dict[str, Any], key: str, names: str, seq: SequenceModel | None) -> Any:
    """A decision's call indices (``calls_run``/``calls_failed``), or for an older record the ones
    its tool names stand for (see :func:`load_live`)."""
    if key in d:
        value = d[key]
        return ALL if value == ALL else tuple(int(i) for i in value)
    if seq is None or not 0 <= d["turn"] < len(seq.turns):
        return ()
    calls = seq.turns[d["turn"]].tool_calls
    used: list[int] = []
    for name in d[names]:
        i = next((i for i, c in enumerate(calls) if c.name == name and i not in used), None)
        if i is not None:
            used.append(i)
    return tuple(used)


def cell_from_json(c: dict[str, Any], seq: SequenceModel | None = None) -> Cell:
    """A cell as a live record writes it (its JSON), read back; `seq` maps the calls it names to its turns."""
    steps = tuple(Step(d["step"], d["turn"],
                       Decision(d["action"], d["rule"], reason=d["reason"], ok=d["ok"], message=d.get("message"),
                                run=_indices(d, "calls_run", "run", seq),
                                failed=_indices(d, "calls_failed", "failed", seq),
                                changes=changes_from(d.get("changes"), "changes")),
                       tuple(d["run"]), tuple(d["failed"]), **_observed_fields(d))
                  for d in c["decisions"])
    return Cell(c["sequence"], c["predicate"], c["outcome"], steps, c["reason"], c["ok"], tuple(c["tools_run"]),
                tuple(c["tools_failed"]), c["reminders"], c["resends"], c["tokens"], c["error"],
                tuple(Violation(v["requirement"], v["step"], v["detail"], bool(v.get("guess")))
                      for v in c["violations"]))


def _observed_fields(d: dict[str, Any]) -> dict[str, Any]:
    """How each answered call was known and the server's note, for a Step that has those fields."""
    out: dict[str, Any] = {}
    if "known" in d and "known" in Step.__dataclass_fields__:
        out["known"] = tuple((int(i), str(how)) for i, how in d["known"])
    if "note" in d and "note" in Step.__dataclass_fields__:
        out["note"] = str(d["note"])
    if "texts" in d and "texts" in Step.__dataclass_fields__:
        out["texts"] = tuple((int(i), str(text)) for i, text in d["texts"])
    return out


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
