"""A reproduction a framework's maintainer can run: one recorded cell of the scorecard, as a folder.

``stopbench scorecard repro FRAMEWORK SEQUENCE --out DIR`` writes, from the committed record
(``reports/frameworks/<name>.json``), the framework's folder (``examples/frameworks/<name>/``) and the
catalogue alone:

* ``program/``: the framework's program and its ``framework.json`` (with ``package.json`` and
  ``package-lock.json`` for Node), as the record ran it;
* ``sequences/<SEQUENCE>.yaml``: the sequence file;
* ``exchange.json``: per step, the answer the server sent (the sequence's turn rendered on its wire, as
  one JSON body) and what the loop did next, as the record observed it (its requests' bodies are not
  kept by the record: ``run.sh`` sends them again);
* ``verdict.txt``: the verdict in words (:func:`bench.check.explain.explain`);
* ``run.sh``: the one command that replays it: installs the framework's pins once in ``.venv`` (or
  ``npm ci``), then ``stopbench check`` on the folder's sequence with the record's flags;
* ``README.md``: a write-up an upstream issue can start from.

The folder is written into a temporary folder beside ``--out`` and renamed onto it, so an error
leaves nothing half written. Bad input (an unknown framework or sequence, a sequence the record
lacks, an ``--out`` that exists and is not empty, or cannot be written) raises
:class:`~bench.errors.UnusableInput` before anything is written.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.engine.model import Cell, Sequence
from bench.errors import UnusableInput
from bench.scorecard.framework import Framework

PROGRAM_FILES = ("framework.json", "package.json", "package-lock.json")
"""Files of a framework folder copied beside its program (the program is ``command``'s last word)."""


def record_cell(record: Mapping[str, Any], sequence_id: str, path: Path) -> dict[str, Any]:
    """The record's cell of `sequence_id`. Raises :class:`UnusableInput` naming the record when it has none."""
    cells = [c for c in record.get("cells") or [] if isinstance(c, dict) and c.get("sequence") == sequence_id]
    if not cells:
        raise UnusableInput(f"{path}: cells: no cell of {sequence_id!r} (the record runs the sequences of "
                            f"{', '.join(record.get('framework', {}).get('dialects', [])) or 'its wires'})")
    return cells[0]


def sequence_file(sequences: Path, sequence_id: str) -> Path:
    """The YAML file of `sequence_id` under `sequences` (sub-folders included)."""
    found = sorted(p for ext in ("yaml", "yml") for p in sequences.rglob(f"{sequence_id}.{ext}"))
    if not found:
        raise UnusableInput(f"no sequence {sequence_id!r} under {sequences}")
    return found[0]


def check_out(out: Path) -> None:
    """Refuse an `out` that exists and is not an empty folder, or whose parent cannot be written."""
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise UnusableInput(f"{out}: --out exists and is not an empty folder")
    parent = out.absolute().parent
    if not parent.is_dir():
        raise UnusableInput(f"{out}: --out's folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (out.is_dir() and not os.access(out, os.W_OK)):
        raise UnusableInput(f"{out}: --out cannot be written")


def install_line(fw: Framework) -> str:
    """The shell line that installs the framework's pins in the folder: a venv, or ``npm ci``."""
    if fw.language == "python":
        pins = " ".join(shlex.quote(p) for p in fw.pip)
        return f'python3 -m venv "$here/.venv" && "$here/.venv/bin/pip" install -q {pins}'
    return '(cd "$here/program" && npm ci --no-audit --no-fund)'


def replay_argv(fw: Framework, sequence: Sequence) -> list[str]:
    """The ``stopbench check`` that replays the cell, run from ``program/`` (``$here``: the folder)."""
    argv = ["stopbench", "check", "--name", fw.name, "--sequences", "../sequences", "--only-mine",
            "-s", sequence.id, "--dialect", sequence.dialect]
    if fw.virtual_clock:
        argv.append("--virtual-clock")
    argv += ["--bench-tools", "--timeout", "120", "--no-report", "--"]
    program = ['"$here/.venv/bin/python"' if fw.language == "python" else "node", *map(shlex.quote, fw.command[1:])]
    if fw.env:
        launch = ['"$stopbench_python"', "-m", "bench.scorecard.launch",
                  *(shlex.quote(f"{k}={v}") for k, v in fw.env), "--"]
        program = [*launch, *program]
    return [*map(shlex.quote, argv), *program]


def run_script(fw: Framework, sequence: Sequence) -> str:
    """``run.sh``: install once, then the check (exit 1 with the broken requirement: the verdict replayed)."""
    done = '[ -x "$here/.venv/bin/python" ]' if fw.language == "python" else '[ -d "$here/program/node_modules" ]'
    lines = ["#!/bin/sh",
             f"# {fw.title} {fw.version} on {sequence.id}: the verdict of reports/frameworks/{fw.name}.json replayed.",
             "# Needs stopbench on PATH (pip install stopbench) and network for the install, once.",
             "set -eu",
             'here=$(cd "$(dirname "$0")" && pwd)',
             f"{done} || {{ {install_line(fw)}; }}"]
    if fw.env:
        lines.append('stopbench_python=$(dirname "$(command -v stopbench)")/python')
    lines += ['cd "$here/program"', "exec " + " ".join(replay_argv(fw, sequence))]
    return "\n".join(lines) + "\n"


def exchange(sequence: Sequence, cell: Mapping[str, Any]) -> dict[str, Any]:
    """Per step of the record: the answer served (the turn rendered as one JSON body on its wire) and
    the loop's decision after it, as recorded."""
    from bench.wires import registry
    from bench.wires.base import Context
    wire = registry.wire(sequence.dialect)
    steps = []
    for d in cell.get("decisions") or []:
        turn = sequence.turns[d["turn"]]
        ctx = Context(response_id=f"resp-{d['step']}", model=wire.default_model, finish_raw=turn.finish_raw)
        answer = wire.render(turn, ctx, stream=False)
        body: Any = answer.body if answer.body is not None else b"".join(answer.frames).decode("utf-8", "replace")
        steps.append({"step": d["step"], "turn": d["turn"], "answer": {"status": answer.status, "body": body},
                      "loop": {k: v for k, v in d.items() if k not in ("step", "turn")}})
    return {"sequence": sequence.id, "dialect": sequence.dialect, "wire_path": wire.paths[0] if wire.paths else "",
            "requests": "not kept by the record: run.sh sends them again", "steps": steps}


def verdict_words(sequence: Sequence, cell: Cell) -> str:
    """The verdict in words: why the cell fails, or that it meets every requirement."""
    from bench.check.explain import explain
    return explain(sequence, cell) or f"{cell.predicate} on {sequence.id}: meets every requirement"


def write_up(fw: Framework, sequence: Sequence, cell: Cell, record: Mapping[str, Any]) -> str:
    """``README.md``: what the sequence serves, what the framework did, what it should have done, the
    version, how to reproduce."""
    from bench.check.explain import GUESS, REQUIREMENTS, step_text, turn_text, violation_words
    words = [violation_words(v, sequence, cell) + (GUESS if v.guess else "") for v in cell.violations]
    title = f"{fw.title} {fw.version} {words[0] if words else 'meets every requirement'} (`{sequence.id}`)"
    served = [f"- {turn_text(t, i)}" for i, t in enumerate(sequence.turns)]
    did = [f"- step {s.step} (served turn {s.turn}): {step_text(s)}" for s in cell.steps] or ["- (no request)"]
    kinds = {v.requirement.split(":", 1)[0].strip() for v in cell.violations}
    should = [f"- `{v.requirement}`: {REQUIREMENTS[k].definition}" if (k := v.requirement.split(":", 1)[0].strip())
              in REQUIREMENTS else f"- `{v.requirement}`" for v in cell.violations] or ["- (nothing: it met them)"]
    pins = ", ".join(f"`{p}`" for p in fw.install) if isinstance(fw.install, list) else \
        ", ".join(f"`{k}@{v}`" for k, v in fw.install.items())
    return "\n".join([
        f"# {title}", "",
        f"Found by stopbench's framework scorecard (`pip install stopbench`): the sequence "
        f"`{sequence.id}` ({sequence.title}) replays a model on the {sequence.dialect} wire that answers as below; "
        f"{fw.title}'s own loop ({fw.docs}) ran against it.", "",
        "## What the sequence serves", "", *served, "",
        f"## What {fw.title} did", "", *did, "",
        "## What it should have done", "", *should, "",
        "## Verdict", "", "```", verdict_words(sequence, cell), "```", "",
        "## Version", "", f"{fw.title} {fw.version}; installed from {pins}.", "",
        "## Reproduce", "",
        "`./run.sh` (stopbench on PATH): installs the pins once, then runs the program on the sequence; it "
        f"exits 1 and names the broken requirement{'s' if len(kinds) > 1 else ''} when the verdict holds. "
        "`program/` is the program, `sequences/` the sequence, `exchange.json` the answers served and what "
        f"the loop did after each (recorded in `reports/frameworks/{fw.name}.json`, column {record.get('column')}).",
        ""])


def write_repro(fw: Framework, record: Mapping[str, Any], record_path: Path, sequences: Path, sequence_id: str,
                out: Path) -> Path:
    """Write the reproduction folder of `sequence_id` to `out` (module docstring); returns `out`."""
    from bench.catalogue.load import load_sequence
    from bench.check.report import cell_from_json
    check_out(out)
    path = sequence_file(sequences, sequence_id)
    raw = record_cell(record, sequence_id, record_path)
    sequence = load_sequence(path)
    cell = cell_from_json(raw)
    files: dict[str, str | Path] = {
        f"sequences/{path.name}": path,
        "exchange.json": json.dumps(exchange(sequence, raw), ensure_ascii=False, indent=1) + "\n",
        "verdict.txt": verdict_words(sequence, cell) + "\n",
        "run.sh": run_script(fw, sequence),
        "README.md": write_up(fw, sequence, cell, record),
    }
    for name in (*PROGRAM_FILES, fw.command[-1]):
        if (fw.folder / name).is_file():
            files[f"program/{name}"] = fw.folder / name
    _write_folder(out, files)
    return out


def _write_folder(out: Path, files: Mapping[str, str | Path]) -> None:
    """Write `files` (text, or a file to copy) into a temporary folder beside `out`, then rename it onto `out`."""
    parent = out.absolute().parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        for name, what in files.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(what, Path):
                shutil.copyfile(what, target)
            else:
                target.write_text(what, encoding="utf-8")
        (tmp / "run.sh").chmod(0o755)
        tmp.chmod(0o755)
        if out.is_dir():
            out.rmdir()  # empty (check_out)
        tmp.rename(out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UnusableInput(f"{out}: cannot write the reproduction: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
