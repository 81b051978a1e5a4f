"""The conformance report: each original loop's observed cells beside its port's, per sequence.

A run of one driver is kept as a *record* (``reports/conformance/<driver>.json``): per sequence the
port's cell label, the original's (``<port>@original``), the original's observed steps
(``original_steps``: turn, action, tools run and failed as the server inferred them; a record
written before they were kept has none, and still loads), the first difference (None: the same)
and the driver's error, or why the sequence was not run. ``reports/conformance.md`` is rebuilt
from every record there, so running one loop leaves the others' columns as their last run wrote
them. A difference is *explained* when the port says why in its declaration,
``@predicate(explained=CONFORMANCE_EXPLAINED)`` with ``CONFORMANCE_EXPLAINED = {"sequence-id": "why,
with the source lines"}``, carried on the :class:`~bench.engine.predicate.Predicate` (so a port from
an entry point explains itself as one from a file does); explanations are read when the Markdown is
written, so they never go stale in the record. A sequence the driver cannot produce for a loop at
all (a steer that a one-shot command line cannot inject) is *not driven*: the port says why in
``not_driven=CONFORMANCE_NOT_DRIVEN`` (``{"sequence-id": "why"}``), the sequence is not run, and its
row says ``not driven`` (never counted as explained: nothing was compared). Each step
keeps its request changes (``changes``) where it has some, and a difference in them is a difference.
A driven row keeps its ``key`` (what it depends on, hashed: :mod:`bench.conform.keys`); a row a CI
run reused instead of driving the loop again says ``reused`` (:mod:`bench.conform.reuse`), and the
record keeps the loop-wide parts of the keys (``key_parts``). Everything is a pure function of the
records and the explanations: no times, no paths of temporary directories.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tabulate import tabulate

from bench.catalogue.files import write_atomically
from bench.conform.runner import ConformResult, Driver
from bench.engine.changes import changes_data
from bench.engine.discovery import Loaded
from bench.engine.model import Cell
from bench.engine.predicate import Predicate
from bench.report.labels import label

EXPLAINED_ATTR = "CONFORMANCE_EXPLAINED"
"""The name the report gives a port's explanations (the mapping each port declares as ``explained=``)."""
NOT_DRIVEN_ATTR = "CONFORMANCE_NOT_DRIVEN"
"""The name the report gives a port's sequences not driven (declared as ``not_driven=``)."""
RECORD_VERSION = 1
"""Still 1 with ``original_steps``, ``key``, ``reused`` and ``key_parts``: each is optional, so records
written before them stay readable."""
REUSED = "reused"
"""A row's mark (true) when the run that wrote the record reused it instead of driving the loop."""
KEY_PARTS = "key_parts"
"""A record's loop-wide key parts (pin, driver, port, server) when it was written."""


def steps_json(cell: Cell) -> list[dict[str, Any]]:
    """A cell's steps as a record keeps them: turn, action, tool names run and failed, and on a stop
    its reason and ok. The page compares the port's steps with the original's in this form."""
    out: list[dict[str, Any]] = []
    for s in cell.steps:
        d = s.decision
        step: dict[str, Any] = {"turn": s.turn, "action": d.action, "run": list(s.tools_run),
                                "failed": list(s.tools_failed)}
        changed = changes_data(d.changes)
        if changed:
            step["changes"] = changed
        if d.action == "stop":
            step["reason"] = d.reason
            step["ok"] = d.ok
        out.append(step)
    return out


def first_step_difference(port: Sequence[Mapping[str, Any]], original: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the first step where the port and the original differ, as
    :func:`bench.conform.runner.compare_cells` compares them (turn, action, tools run and failed,
    request changes; only turn and action on the port's final stop, whose tools a server cannot
    see); the index of the first extra step when one made more requests; None when the steps agree."""
    for i, (p, o) in enumerate(zip(port, original, strict=False)):
        last = i == len(port) - 1 and p.get("action") == "stop"
        keys = ("turn", "action") if last else ("turn", "action", "run", "failed", "changes")
        if any(p.get(k) != o.get(k) for k in keys):
            return i
    if len(port) != len(original):
        return min(len(port), len(original))
    return None


@dataclass(frozen=True, slots=True)
class Row:
    """One sequence of one driver's record."""

    port: str | None = None
    original: str | None = None
    difference: str | None = None
    driver_error: str | None = None
    not_run: str | None = None
    original_steps: list[dict[str, Any]] | None = None
    not_driven: str | None = None
    retried: str | None = None
    """Why the sequence was run again: its first run timed out (the row is the second run's)."""
    key: str | None = None
    """What the row depends on, hashed when the loop was driven (bench/conform/keys.py)."""

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in (("port", self.port), ("original", self.original),
                                  ("original_steps", self.original_steps),
                                  ("difference", self.difference), ("driver_error", self.driver_error),
                                  ("not_run", self.not_run), ("not_driven", self.not_driven),
                                  ("retried", self.retried), ("key", self.key)) if v is not None}


def row_of(res: ConformResult) -> Row:
    driver_error = res.result.get("error") if res.result.get("reason") == "driver_failed" else None
    steps = steps_json(res.observed)
    if res.port is None:
        return Row(None, label(res.observed), None, driver_error, "no port to compare with", steps)
    return Row(label(res.port), label(res.observed), res.difference, driver_error, original_steps=steps)


def make_record(driver: Driver, results: Iterable[ConformResult], not_run: Mapping[str, str],
                previous: Mapping[str, Any] | None = None, keep: Iterable[str] = (),
                not_driven: Mapping[str, str] | None = None,
                retried: Mapping[str, str] | None = None, *, keys: Mapping[str, str] | None = None,
                reused: Mapping[str, str] | None = None,
                key_parts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A driver's record: the rows of `results`, `not_run` and `not_driven`, plus the rows of
    `previous` for the sequence ids in `keep` (sequences of the catalogue this run did not touch)
    and in `reused` (rows this run reused because their key is unchanged: marked ``reused``); a
    result's row says ``retried`` when `retried` has its sequence (run again after a timeout) and
    keeps its key from `keys`. `key_parts` (the loop-wide parts of the keys) are kept in the record,
    or the previous record's when none are given."""
    rows: dict[str, dict[str, Any]] = {}
    old = (previous or {}).get("sequences", {})
    for seq in keep:
        if isinstance(old.get(seq), dict):
            rows[seq] = old[seq]
    for seq in reused or {}:
        if isinstance(old.get(seq), dict):
            rows[seq] = {**old[seq], REUSED: True}
    for seq, why in not_run.items():
        rows[seq] = Row(not_run=why).as_json()
    for seq, why in (not_driven or {}).items():
        rows[seq] = Row(not_driven=why).as_json()
    for res in results:
        row = row_of(res)
        if retried and res.sequence in retried:
            row = replace(row, retried=retried[res.sequence])
        if keys and res.sequence in keys:
            row = replace(row, key=keys[res.sequence])
        rows[res.sequence] = row.as_json()
    record: dict[str, Any] = {"version": RECORD_VERSION, "driver": driver.name, "port": driver.predicate,
                              "install": driver.install, "sequences": dict(sorted(rows.items()))}
    parts = key_parts if key_parts is not None else (previous or {}).get(KEY_PARTS)
    if parts:
        record[KEY_PARTS] = dict(parts)
    return record


def record_path(folder: Path, driver: str) -> Path:
    return folder / "conformance" / f"{driver}.json"


def read_record(folder: Path, driver: str) -> dict[str, Any] | None:
    path = record_path(folder, driver)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) and data.get("version") == RECORD_VERSION else None


def record_text(record: Mapping[str, Any]) -> str:
    """A record as its file's text (sorted keys: the same record, the same bytes)."""
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_record(folder: Path, record: Mapping[str, Any]) -> Path:
    path = record_path(folder, str(record["driver"]))
    write_atomically(path, record_text(record))
    return path


def explained_by(loaded: Iterable[Loaded]) -> dict[str, dict[str, str]]:
    """Each loaded predicate's conformance explanations (sequence id -> why), by name; a predicate
    that did not load explains nothing."""
    return {p.name: dict(p.explained) if isinstance(p, Predicate) else {} for p in loaded}


Status = str  # "same" | "explained" | "differs" | "not driven" | "not run"


def status_of(row: Mapping[str, Any] | None, explained: Mapping[str, str], seq: str) -> Status:
    if row is not None and row.get("not_driven"):
        return "not driven"
    if row is None or row.get("not_run") or row.get("original") is None:
        return "not run"
    if row.get("difference") is None and not row.get("driver_error"):
        return "same"
    if row.get("difference") is not None and not row.get("driver_error") and seq in explained:
        return "explained"
    return "differs"


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_INTRO = (
    "# stopbench conformance: original loops against their ports", "",
    "Each original agent loop was run against the replay server on every sequence "
    "(`stopbench conform`, `make conformance`), with stub tools that only record; its "
    "observed cell is the `<port>@original` column, beside the port's replayed cell "
    "(`<port>`, labels as in decision-table.md). A status is `same`, `differs: <first "
    "difference>`, `explained: <first difference>` (the port's file says why, in "
    f"`{EXPLAINED_ATTR}`; the reason is listed below), `not driven (why)` (a case the driver "
    f"cannot produce for that loop, said in `{NOT_DRIVEN_ATTR}`: nothing was compared, so it is "
    "not counted as explained) or `not run (why)`. A server cannot "
    "see the tools run in the step where a loop stops, so an original's final stop has no "
    "tools run; that alone is not a difference. A status ending `(reused: key K)` was not driven "
    "by the run that wrote the records: K, a hash of what the row depends on (the loop's pin, its "
    "driver's files, its port's files and cell, the sequence, the server's code; "
    "bench/conform/keys.py), was the key it was driven at, so `make conformance-ci` reused it; "
    "every other row was driven by the run that wrote its record.", "")
"""The report's title and how to read its matrix."""

_COUNTED = ("same", "explained", "differs", "not driven", "not run", "driver failed", "retried", REUSED)
"""What the summary counts per loop."""


@dataclass(slots=True)
class _Matrix:
    """The matrix's rows as they are built, and what its cells add to the summary and the lists below it."""

    counts: dict[str, dict[str, int]]
    """Per loop, how many of its cells are each of :data:`_COUNTED`."""
    rows: list[list[str]] = field(default_factory=list)
    diffs: list[list[str]] = field(default_factory=list)
    retries: list[list[str]] = field(default_factory=list)


def conformance_markdown(sequences: Sequence[str], drivers: Sequence[Driver],
                         records: Mapping[str, Mapping[str, Any] | None],
                         explained: Mapping[str, Mapping[str, str]],
                         missing: Mapping[str, str] | None = None) -> str:
    """The Markdown report. `records` maps a driver name to its record (None: never run);
    `explained` a driver name to its port's explanations; `missing` a driver name to why it has
    no record (e.g. its loop is not installed)."""
    matrix = _matrix(sequences, drivers, records, explained)
    headers = ["sequence"]
    for d in drivers:
        headers += [d.predicate, f"{d.predicate}@original", f"{d.name} status"]
    out = [*_INTRO, unpadded_table(matrix.rows, headers)]
    out += _summary(drivers, records, missing or {}, matrix.counts)
    out += _retried(matrix.retries)
    out += _differences(matrix.diffs)
    out += _stale_explanations(drivers, records, explained)
    return "\n".join(out) + "\n"


def _matrix(sequences: Sequence[str], drivers: Sequence[Driver], records: Mapping[str, Mapping[str, Any] | None],
            explained: Mapping[str, Mapping[str, str]]) -> _Matrix:
    """One row per sequence: its id, then per loop the port's label, the original's and the status."""
    matrix = _Matrix({d.name: dict.fromkeys(_COUNTED, 0) for d in drivers})
    for seq in sequences:
        row = [seq]
        for d in drivers:
            rec = records.get(d.name)
            r = (rec or {}).get("sequences", {}).get(seq) if rec else None
            row += _cells(matrix, seq, d, rec, r, explained.get(d.name, {}))
        matrix.rows.append(row)
    return matrix


def _cells(matrix: _Matrix, seq: str, d: Driver, rec: Mapping[str, Any] | None, r: Mapping[str, Any] | None,
           expl: Mapping[str, str]) -> list[str]:
    """Loop `d`'s three cells in the row of `seq` (`r`: its row in the record `rec`), counted."""
    st = status_of(r, expl, seq)
    counts = matrix.counts[d.name]
    counts[st] += 1
    if r is not None and r.get("driver_error"):
        counts["driver failed"] += 1
    if st in ("not driven", "not run"):
        return _not_compared(st, rec, r or {})
    assert r is not None
    if r.get("retried"):
        counts["retried"] += 1
        matrix.retries.append([seq, d.name, _esc(r["retried"])])
    text = "same"
    if st != "same":
        first = r.get("difference") or f"driver failed: {r.get('driver_error')}"
        text = f"{st}: {_esc(first)}"
        matrix.diffs.append([seq, d.name, st, _esc(first), _esc(expl.get(seq, "") if st == "explained" else
                                                                (r.get("driver_error") or ""))])
    if r.get("retried"):
        text += " (run again: the first run timed out)"
    if r.get(REUSED):
        counts[REUSED] += 1
        text += f" (reused: key {_esc(str(r.get('key')))})"
    return [_esc(r.get("port") or ""), _esc(r.get("original") or ""), text]


def _not_compared(st: Status, rec: Mapping[str, Any] | None, r: Mapping[str, Any]) -> list[str]:
    """The three cells of a sequence not driven or not run, with why."""
    if st == "not driven":
        why = r.get("not_driven") or ""
    else:  # a loop never run says why once, in the summary; its rows stay short
        why = r.get("not_run") or ("no record" if rec is None else "not in the last run")
    return [_esc(r.get("port") or ""), "", f"{st} ({_esc(why)})"]


def _summary(drivers: Sequence[Driver], records: Mapping[str, Mapping[str, Any] | None], missing: Mapping[str, str],
             counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The summary section: one line per loop with its counts, and the notes of loops whose record is reused."""
    summary = []
    for d in drivers:
        c = counts[d.name]
        state = "run" if records.get(d.name) is not None else f"not run ({missing.get(d.name, 'no record')})"
        summary.append([d.name, d.predicate, d.install, state, c["same"], c["explained"], c["differs"],
                        c["not driven"], c["not run"], c["driver failed"], c[REUSED], c["retried"]])
    table = tabulate(summary, headers=["loop", "port", "pin (install)", "state", "same", "explained",
                                       "differs", "not driven", "not run", "driver failed",
                                       "reused (key unchanged)", "run again after a timeout"], tablefmt="github")
    return ["", "## Summary", "", table, *[f"\n`{d.name}`: {d.reused}." for d in drivers if d.reused]]


def _retried(retries: list[list[str]]) -> list[str]:
    """The sequences run again after a timeout, if any."""
    if not retries:
        return []
    return ["", "Run again because the first run timed out (once at most; a loop that finished is never run "
            "again, so no difference is retried away; the row is the second run's):", "",
            tabulate(retries, headers=["sequence", "loop", "the first run"], tablefmt="github")]


def _differences(diffs: list[list[str]]) -> list[str]:
    """The differences section: every difference with why it is explained, or the driver's error."""
    if not diffs:
        return ["", "## Differences", "", "None."]
    return ["", "## Differences", "",
            tabulate(diffs, headers=["sequence", "loop", "status", "first difference (port; observed)",
                                     "why (explained) / driver error"], tablefmt="github")]


def _stale_explanations(drivers: Sequence[Driver], records: Mapping[str, Mapping[str, Any] | None],
                        explained: Mapping[str, Mapping[str, str]]) -> list[str]:
    """A note naming the explanations of run loops that explain no difference, if any."""
    stale = [f"`{d.name}` {seq}" for d in drivers if records.get(d.name) is not None
             for seq in sorted(explained.get(d.name, {}))
             if status_of((records[d.name] or {}).get("sequences", {}).get(seq), explained[d.name], seq)
             in ("same", "not run", "not driven")]
    if not stale:
        return []
    return ["", "Explanations in a port's file for a sequence that shows no difference (not run, or "
            "since fixed): " + ", ".join(stale) + "."]


def unpadded_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """A GitHub Markdown table whose cells are not padded to their column's widest cell: the matrix has
    three columns per loop, and one long first-difference text would otherwise widen every row (the
    padded file was 3.6 MB at 12 loops). The cells are already escaped."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def unexplained(results: Iterable[ConformResult], explained: Mapping[str, str]) -> list[ConformResult]:
    """The results of a run that fail it: a difference the port does not explain, or a failed driver."""
    bad = []
    for res in results:
        row = row_of(res)
        if row.driver_error or (row.difference is not None and res.sequence not in explained):
            bad.append(res)
    return bad
