"""Record a framework: ``stopbench check`` on its program, kept as ``reports/frameworks/<name>.json``.

The check runs in the framework's folder with the framework's own interpreter (:mod:`.install`),
on the sequences of the dialects it speaks, two at a time by default. The record is the check's
live record (``name``, ``column``, ``command``, ``cells``: ``bench.check.report.write_live``) plus
``framework`` (the folder's ``framework.json`` fields), ``catalogue`` (how many sequences the
catalogue holds: the record runs those of the framework's wires) and ``reproduce`` (the make target
and the check command line). The check runs with ``--bench-tools``: a framework program takes the
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.catalogue.files import write_atomically
from bench.errors import UnusableInput
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
             a.replace(where, f"{PLACEHOLDER}/{fw.name}", 1) if a.startswith(where) else a) for a in argv]


def catalogue_size(project: Path) -> int:
    """How many sequences the project's catalogue holds."""
    from bench.catalogue.load import load_catalogue
    return len(load_catalogue(project / "sequences").sequences)


def violation_words(cells: Sequence[dict[str, Any]], project: Path) -> dict[str, list[str]]:
    """``{sequence: [what the cell did, per violation, in plain words]}`` for the cells that break
    requirements (:func:`bench.check.explain.violation_words`, which names the served turn: "reported
    success on a cut-off reply"). Kept in the record, so the scorecard needs no catalogue."""
    from bench.catalogue.load import load_catalogue
    from bench.check.explain import violation_words as words_of
    from bench.check.report import cell_from_json
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
    from bench.check.report import cell_from_json
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
    from bench.check.report import cell_from_json, violation_json
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


def make_record(live: dict[str, Any], fw: Framework, argv: Sequence[str], framework_dir: Path, catalogue: int,
                project: Path, python: str = sys.executable) -> dict[str, Any]:
    """The framework record from the check's live record `live` and the check line `argv` that made it
    (run from the framework's folder, written relative to `project`)."""
    shown = portable(argv, fw, framework_dir, python)
    cut = shown.index("--")
    shown = [*shown[:cut], "--no-report", *shown[cut:]]
    folder = Path(os.path.relpath(fw.folder.resolve(), project.resolve())).as_posix()
    return {**live, "command": portable(live["command"], fw, framework_dir, python),
            "version": RECORD_VERSION, "framework": fw.metadata(), "catalogue": {"sequences": catalogue},
            "words": violation_words(live["cells"], project), "guessed": guessed_sequences(live["cells"], project),
            "reproduce": {"make": f"make scorecard-{fw.name}",
                          "check": f"cd {shlex.quote(folder)} && {shell_line(shown)}"}}


def shell_line(argv: Sequence[str]) -> str:
    """`argv` as a shell line, each argument quoted but ``$FRAMEWORK_DIR`` left for the shell to expand."""
    mark = PLACEHOLDER + "/"
    return " ".join(f'"{PLACEHOLDER}"/{shlex.quote(a[len(mark):])}' if a.startswith(mark) else shlex.quote(a)
                    for a in argv)


def record_text(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def updated_cells(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`old`'s cells with those of `new`'s sequences replaced in place (a sequence `old` lacks is added
    at the end)."""
    by_sequence = {c["sequence"]: c for c in new}
    out = [by_sequence.pop(c["sequence"], c) for c in old]
    return out + [c for c in new if c["sequence"] in by_sequence]


def run_record(fw: Framework, framework_dir: Path, project: Path, *, jobs: int = 2, timeout: float = 60.0,
               ids: Sequence[str] = (), out: Path | None = None, update: bool = False) -> tuple[Path, int]:
    """Run the check and write the record (to `out`, default ``reports/frameworks/<name>.json``);
    returns its path and the check's exit status (0 every requirement met, 1 some broken).

    With `update`, only the sequences `ids` are run and their cells replace theirs in the record
    at `out` (after a bench change that serves those sequences otherwise); the others are kept, and
    the record still names the command that reproduces all of it."""
    if not is_installed(framework_dir, fw):
        raise UnusableInput(f"{fw.name} is not installed under {framework_dir}: make framework-install "
                            f"FRAMEWORK={fw.name} FRAMEWORK_DIR={framework_dir}")
    path = out or project / RECORDS / f"{fw.name}.json"
    old: dict[str, Any] | None = None
    if update:
        if not ids:
            raise UnusableInput("--update re-records the sequences given with -s: give at least one")
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise UnusableInput(f"no record to update at {path}: record {fw.name} whole first") from None
    argv = check_argv(fw, framework_dir, project, jobs=jobs, timeout=timeout, ids=ids)
    with tempfile.TemporaryDirectory(prefix=f"stopbench-scorecard-{fw.name}-") as tmp:
        run = [sys.executable, "-m", "bench", *argv[1:2], "--reports", tmp, *argv[2:]]
        status = subprocess.run(run, cwd=fw.folder, check=False).returncode
        live_path = Path(tmp) / "live" / f"{fw.name}.json"
        if status not in (0, 1) or not live_path.is_file():
            raise UnusableInput(f"stopbench check on {fw.name} gave no record (exit {status})")
        live = json.loads(live_path.read_text(encoding="utf-8"))
    catalogue = catalogue_size(project)
    if old is not None:
        kept = old.get("cells") or []
        live = {**live, "cells": updated_cells(kept, live["cells"])}
        argv = check_argv(fw, framework_dir, project, jobs=jobs, timeout=timeout)  # the whole record's line
        before = old.get("catalogue", {}).get("sequences") if isinstance(old.get("catalogue"), dict) else None
        if isinstance(before, int):  # the catalogue the kept cells were run on, and the sequences added to it
            catalogue = before + len({c["sequence"] for c in live["cells"]} - {c["sequence"] for c in kept})
    record = make_record(live, fw, argv, framework_dir, catalogue, project)
    write_atomically(path, record_text(record))
    return path, status
