"""Record a framework: ``stopbench check`` on its program, kept as ``reports/frameworks/<name>.json``.

The check runs in the framework's folder with the framework's own interpreter (:mod:`.install`),
on the sequences of the dialects it speaks, two at a time by default. The record is the check's
live record (``name``, ``column``, ``command``, ``cells``: ``bench.check.report.write_live``) plus
``framework`` (the folder's ``framework.json`` fields), ``catalogue`` (the footing: each sequence
run by its file's digest, :mod:`bench.scorecard.footing`) and ``reproduce`` (the make target and the
check command line). The check runs with ``--bench-tools``: a framework program takes the
bench's tools (MCP or the tool endpoint), so the sequences that script their tool results run too.
Paths under ``FRAMEWORK_DIR`` are written as ``$FRAMEWORK_DIR/...`` and the record has no times, so
a deterministic program gives the same bytes on every machine.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.catalogue.files import write_atomically
from bench.errors import UnusableInput
from bench.scorecard.footing import drift, footing, recorded_files, wire_files
from bench.scorecard.framework import Framework
from bench.scorecard.install import install_dir, interpreter, is_installed

RECORDS = Path("reports/frameworks")
"""Where the records and the scorecard are, relative to the project root."""

RECORD_VERSION = 1
PLACEHOLDER = "$FRAMEWORK_DIR"


def program_argv(fw: Framework, framework_dir: Path, python: str = sys.executable) -> list[str]:
    """The program ``check`` runs, from the framework's folder: its interpreter, then the rest of
    ``command``; behind :mod:`.launch` when the framework sets variables of its own."""
    argv = [interpreter(framework_dir, fw), *fw.command[1:]]
    if fw.env:
        argv = [python, "-m", "bench.scorecard.launch", *(f"{k}={v}" for k, v in fw.env), "--", *argv]
    return argv


def check_argv(fw: Framework, framework_dir: Path, project: Path, *, jobs: int, timeout: float,
               ids: Sequence[str] = (), python: str = sys.executable) -> list[str]:
    """``stopbench check`` for the framework, as run from its folder (no report option: the caller adds one)."""
    sequences = os.path.relpath(project.resolve() / "sequences", fw.folder.resolve())
    argv = ["stopbench", "check", "--name", fw.name, "--sequences", sequences]
    for d in fw.dialects:
        argv += ["--dialect", d]
    for i in ids:
        argv += ["-s", i]
    if fw.virtual_clock:
        argv.append("--virtual-clock")
    argv += ["--bench-tools", "-j", str(jobs), "--timeout", f"{timeout:g}", "--",
             *program_argv(fw, framework_dir, python)]
    return argv


def portable(argv: Sequence[str], fw: Framework, framework_dir: Path, python: str = sys.executable) -> list[str]:
    """`argv` without this machine's paths: the install folder as ``$FRAMEWORK_DIR/<name>``, the
    bench's own interpreter as ``python``."""
    where = str(install_dir(framework_dir, fw))
    return [("python" if a == python else
             a.replace(where, f"{PLACEHOLDER}/{fw.key}", 1) if a.startswith(where) else a) for a in argv]


def violation_words(cells: Sequence[dict[str, Any]], project: Path) -> dict[str, list[str]]:
    """``{sequence: [what the cell did, per violation, in plain words]}`` for the cells that break
    requirements (:func:`bench.check.explain.violation_words`, which names the served turn: "reported
    success on a cut-off reply"). Kept in the record, so the scorecard needs no catalogue."""
    from bench.catalogue.load import load_catalogue
    from bench.check import cell_from_json
    from bench.check import violation_words as words_of
    by_id = {s.id: s for s in load_catalogue(project / "sequences").sequences}
    out: dict[str, list[str]] = {}
    for c in cells:
        cell = cell_from_json(c)
        if cell.violations:
            out[cell.sequence] = [words_of(v, by_id.get(cell.sequence), cell) for v in cell.violations]
    return out


def guessed_sequences(cells: Sequence[dict[str, Any]], project: Path) -> list[str]:
    """The sequences whose cell's verdict rests on the wording fallback
    (:func:`bench.engine.judge.rests_on_a_guess`): read the other way, the calls judged by their
    result's words would give other requirements broken. Kept in the record, as ``words`` is."""
    from bench.catalogue.load import load_catalogue
    from bench.check import cell_from_json
    from bench.engine.judge import rests_on_a_guess
    by_id = {s.id: s for s in load_catalogue(project / "sequences").sequences}
    return [c["sequence"] for c in cells
            if (seq := by_id.get(c["sequence"])) is not None and rests_on_a_guess(seq, cell_from_json(c))]


def rejudge_record(record: dict[str, Any], project: Path) -> tuple[dict[str, Any], list[str]]:
    """The record with each cell's violations judged again on the catalogue (marking those that rest
    on a guess), its ``words`` and ``guessed`` rebuilt, and no run of the framework; a cell whose
    requirements broken would differ is kept as recorded and named in the lines returned (its
    sequence or the judge changed since: record it again)."""
    from bench.catalogue.load import load_catalogue
    from bench.check import cell_from_json, violation_json
    from bench.engine.judge import judge
    by_id = {s.id: s for s in load_catalogue(project / "sequences").sequences}
    cells: list[dict[str, Any]] = []
    kept: list[str] = []
    for c in record["cells"]:
        seq = by_id.get(c["sequence"])
        if seq is None:
            cells.append(c)
            kept.append(f"{c['sequence']}: not in the catalogue, kept as recorded")
            continue
        found = judge(seq, cell_from_json(c)) if c["outcome"] != "crashed" else ()
        if [v.requirement for v in found] != [v["requirement"] for v in c["violations"]]:
            cells.append(c)
            kept.append(f"{c['sequence']}: judged now {[v.requirement for v in found]}, recorded "
                        f"{[v['requirement'] for v in c['violations']]}: kept as recorded (record it again)")
            continue
        cells.append({**c, "violations": [violation_json(v) for v in found]})
    out = {**record, "cells": cells, "words": violation_words(cells, project),
           "guessed": guessed_sequences(cells, project)}
    return out, kept


def steady(cell: dict[str, Any]) -> dict[str, Any]:
    """`cell` with a capped run's ``requests`` as its steps kept plus one (the request past the cap):
    how many more arrive before the program is stopped is the machine's timing, not the framework's."""
    steps, requests = cell.get("steps"), cell.get("requests")
    if cell.get("outcome") == "capped" and isinstance(steps, int) and isinstance(requests, int):
        return {**cell, "requests": min(requests, steps + 1)}
    return cell


def make_record(live: dict[str, Any], fw: Framework, argv: Sequence[str], framework_dir: Path,
                catalogue: dict[str, Any], project: Path, python: str = sys.executable) -> dict[str, Any]:
    """The framework record from the check's live record `live`, the check line `argv` that made it
    (run from the framework's folder, written relative to `project`) and its footing `catalogue`
    (:func:`bench.scorecard.footing.footing`)."""
    shown = portable(argv, fw, framework_dir, python)
    cut = shown.index("--")
    options = [a for i, a in enumerate(shown[:cut]) if a != "-j" and (i == 0 or shown[i - 1] != "-j")]
    shown = [*options, "--no-report", *shown[cut:]]  # no -j: how many ran at a time is the machine's, not the record's
    folder = Path(os.path.relpath(fw.folder.resolve(), project.resolve())).as_posix()
    make = f"make scorecard FRAMEWORK={fw.name} RELEASE={fw.version}" if fw.beside else f"make scorecard-{fw.name}"
    return {**live, "cells": [steady(c) for c in live["cells"]],
            "command": portable(live["command"], fw, framework_dir, python),
            "version": RECORD_VERSION, "framework": fw.metadata(), "catalogue": catalogue,
            "words": violation_words(live["cells"], project), "guessed": guessed_sequences(live["cells"], project),
            "reproduce": {"make": make, "check": f"cd {shlex.quote(folder)} && {shell_line(shown)}"}}


def shell_line(argv: Sequence[str]) -> str:
    """`argv` as a shell line, each argument quoted but ``$FRAMEWORK_DIR`` left for the shell to expand."""
    mark = PLACEHOLDER + "/"
    return " ".join(f'"{PLACEHOLDER}"/{shlex.quote(a[len(mark):])}' if a.startswith(mark) else shlex.quote(a)
                    for a in argv)


def record_text(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


@dataclass(frozen=True, slots=True)
class Recorded:
    """What :func:`run_record` did."""

    path: Path
    status: int
    """The check's exit status (0 every requirement met, 1 some broken; 0 when nothing ran)."""
    ran: tuple[str, ...]
    """The sequences run (every one of the framework's wires, unless `ids` or ``--changed`` chose)."""
    dropped: tuple[str, ...] = ()
    """The cells left out of the record: their sequences are on none of its wires any more."""
    before: dict[str, Any] | None = None
    """The record it updated (``--update`` or ``--changed``), to say which verdicts moved."""


def run_check(fw: Framework, framework_dir: Path, project: Path, *, jobs: int, timeout: float,
              ids: Sequence[str]) -> tuple[dict[str, Any], int]:
    """``stopbench check`` on the framework from its folder: its live record and exit status."""
    argv = check_argv(fw, framework_dir, project, jobs=jobs, timeout=timeout, ids=ids)
    with tempfile.TemporaryDirectory(prefix=f"stopbench-scorecard-{fw.name}-") as tmp:
        run = [sys.executable, "-m", "bench", *argv[1:2], "--reports", tmp, *argv[2:]]
        status = _wait_ending_it_on_interrupt(subprocess.Popen(run, cwd=fw.folder))
        live_path = Path(tmp) / "live" / f"{fw.name}.json"
        if status not in (0, 1) or not live_path.is_file():
            raise UnusableInput(f"stopbench check on {fw.name} gave no record (exit {status})")
        return json.loads(live_path.read_text(encoding="utf-8")), status


CHECK_GRACE = 30.0
"""Seconds the check is given to end its runs (each program's process group) after SIGTERM, before it is killed."""


def _wait_ending_it_on_interrupt(check: subprocess.Popen[bytes]) -> int:
    """`check`'s exit status. On Ctrl-C or SIGTERM (:class:`bench.check.Terminated`) while it runs,
    it is sent SIGTERM, which ends its runs and the programs they started (``stopbench check``'s own
    stop), and waited for, so nothing it started outlives the command; then the interrupt goes on."""
    try:
        return check.wait()
    except BaseException:
        check.terminate()
        try:
            check.wait(timeout=CHECK_GRACE)
        except subprocess.TimeoutExpired:
            check.kill()
            check.wait()
        raise


def read_record(path: Path, fw: Framework) -> dict[str, Any]:
    """The record at `path`, for updating it. Raises :class:`UnusableInput` when there is none."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UnusableInput(f"no record to update at {path}: record {fw.key} whole first") from None
    if not isinstance(record, dict) or not isinstance(record.get("cells"), list):
        raise UnusableInput(f"{path}: cells: expected a framework record's list of cells")
    return record


def merged(old: dict[str, Any], live: dict[str, Any] | None, files: Mapping[str, str],
           dropped: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """`old`'s cells with `live`'s put in their place (and `dropped` left out), in a whole record's
    order (by sequence), and the file digests they ran on: `files` for the cells run now, the old
    record's for the others (none for a cell an older record kept without one)."""
    gone = set(dropped)
    by_sequence = {c["sequence"]: c for c in old["cells"] if c["sequence"] not in gone}
    ran = {c["sequence"]: c for c in (live or {}).get("cells", [])}
    by_sequence.update(ran)
    kept = {sid: d for sid, d in recorded_files(old).items() if sid in by_sequence and sid not in ran}
    base = live if live is not None else {k: old[k] for k in ("name", "column", "command")}
    return ({**base, "cells": [by_sequence[s] for s in sorted(by_sequence)]},
            {**kept, **{sid: files[sid] for sid in ran if sid in files}})


def require_installed(fw: Framework, framework_dir: Path) -> None:
    """Raises :class:`UnusableInput` saying how to install `fw` when it is not installed."""
    if not is_installed(framework_dir, fw):
        how = (f"stopbench scorecard install {fw.name} --release {fw.version}" if fw.beside else
               f"make framework-install FRAMEWORK={fw.name}")
        raise UnusableInput(f"{fw.key} is not installed under {framework_dir}: {how} FRAMEWORK_DIR={framework_dir}")


def fresh(live: dict[str, Any] | None, files: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """A whole (or sample) record's cells as run, and the file digests of their sequences."""
    assert live is not None  # a record not updating one always runs
    return live, {c["sequence"]: files[c["sequence"]] for c in live["cells"] if c["sequence"] in files}


def run_record(fw: Framework, framework_dir: Path, project: Path, *, jobs: int = 2, timeout: float = 60.0,
               ids: Sequence[str] = (), out: Path | None = None, update: bool = False,
               changed: bool = False) -> Recorded:
    """Run the check and write the record (to `out`, default ``reports/frameworks/<key>.json``).

    With `update`, only the sequences `ids` are run and their cells replace theirs in the record at
    `out` (after a bench change that serves those sequences otherwise); the others are kept. With
    `changed`, the record's :func:`~bench.scorecard.footing.drift` from the catalogue chooses: the
    sequences added to its wires or changed since are run, the cells of those removed are dropped,
    the rest kept; nothing is run or written when there is no drift. Either way the record still
    names the command that reproduces all of it."""
    require_installed(fw, framework_dir)
    if update and not ids:
        raise UnusableInput("--update re-records the sequences given with -s: give at least one")
    path = out or project / RECORDS / f"{fw.key}.json"
    old = read_record(path, fw) if update or changed else None
    from bench.catalogue.load import load_catalogue
    sequences = load_catalogue(project / "sequences").sequences
    files = wire_files(sequences, fw.dialects)
    dropped: tuple[str, ...] = ()
    if changed and old is not None:
        found = drift(old, files)
        if not found:
            return Recorded(path, 0, (), before=old)
        ids, dropped = found.to_run, found.removed
    live, status = (None, 0) if old is not None and not ids else \
        run_check(fw, framework_dir, project, jobs=jobs, timeout=timeout, ids=ids)
    live, files = merged(old, live, files, dropped) if old is not None else fresh(live, files)
    argv = check_argv(fw, framework_dir, project, jobs=jobs, timeout=timeout,
                      ids=ids if old is None else ())  # an update names the whole record's line
    record = make_record(live, fw, argv, framework_dir, footing(files, len(sequences)), project)
    write_atomically(path, record_text(record))
    ran = tuple(c["sequence"] for c in live["cells"]) if old is None else tuple(ids)
    return Recorded(path, status, ran, dropped, old)
