"""Golden expectations: what each predicate is expected to do on each sequence, reviewed by a person.

``expected/<predicate>.yaml`` holds a header (how the expectations were derived) and one entry per
sequence. A normal run only compares; :func:`accept` is the one place that writes, atomically
(temporary file, then rename), and only for the cells it is asked to.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.catalogue import describe_validation_error, display_path, load_yaml, yaml_error_line
from bench.errors import UnusableInput
from bench.model import Cell, Outcome


class GoldenError(UnusableInput):
    """A golden file that cannot be used: one line naming the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ExpectedCell(_Strict):
    """One reviewed cell. `path` is the decision path: ``"<action> <rule>"`` per step, with a run
    of identical steps written once as ``"<action> <rule> xN"``."""

    outcome: Outcome
    reason: str | None = None
    ok: bool | None = None
    steps: int = Field(ge=0)
    tools_run: list[str] = []
    tools_failed: list[str] = []
    path: list[str]
    note: str | None = None


class GoldenFile(_Strict):
    predicate: str
    derived: str = Field(min_length=1)
    cells: dict[str, ExpectedCell] = {}


# ---------------------------------------------------------------- decision paths


def path_of(cell: Cell) -> list[str]:
    """A cell's decision path, run-length encoded: identical consecutive steps become ``... xN``."""
    out: list[str] = []
    prev: str | None = None
    count = 0
    for s in cell.steps:
        key = f"{s.decision.action} {s.decision.rule}"
        if key == prev:
            count += 1
            continue
        if prev is not None:
            out.append(prev if count == 1 else f"{prev} x{count}")
        prev, count = key, 1
    if prev is not None:
        out.append(prev if count == 1 else f"{prev} x{count}")
    return out


def expand(path: list[str]) -> list[str]:
    """Undo the run-length encoding of a decision path."""
    out: list[str] = []
    for entry in path:
        head, sep, tail = entry.rpartition(" x")
        if sep and tail.isdigit():
            out.extend([head] * int(tail))
        else:
            out.append(entry)
    return out


def expected_of(cell: Cell, note: str | None = None) -> ExpectedCell:
    """The expectation that `cell` would satisfy exactly (used by accept, after review)."""
    return ExpectedCell(outcome=cell.outcome, reason=cell.reason, ok=cell.ok, steps=cell.n_steps,
                        tools_run=list(cell.tools_run), tools_failed=list(cell.tools_failed),
                        path=path_of(cell), note=note)


# ---------------------------------------------------------------- comparison


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A reviewed cell that the replay no longer matches, at its first difference."""

    sequence: str
    predicate: str
    what: str
    expected: str
    actual: str

    def __str__(self) -> str:
        return (f"MISMATCH {self.sequence} x {self.predicate}: {self.what}\n"
                f"    expected: {self.expected}\n"
                f"    actual:   {self.actual}")


def compare(cell: Cell, exp: ExpectedCell) -> Mismatch | None:
    """The first difference between a cell and its expectation, or None when they agree exactly."""
    got_path = [f"{s.decision.action} {s.decision.rule}" for s in cell.steps]
    want_path = expand(exp.path)

    def mismatch(what: str, expected: object, actual: object) -> Mismatch:
        return Mismatch(cell.sequence, cell.predicate, what, str(expected), str(actual))

    for i, (want, got) in enumerate(zip(want_path, got_path, strict=False)):
        if want != got:
            s = cell.steps[i]
            return mismatch(f"step {s.step} (turn {s.turn}) differs", want,
                            f"{got}{_stop_suffix(cell, i)}")
    if len(want_path) != len(got_path):
        n = min(len(want_path), len(got_path))
        want = want_path[n] if n < len(want_path) else "(no step: the loop had ended)"
        got = f"{got_path[n]}{_stop_suffix(cell, n)}" if n < len(got_path) else "(no step: the loop had ended)"
        return mismatch(f"step {n + 1} differs", want, got)
    checks: list[tuple[str, object, object]] = [
        ("outcome", exp.outcome, cell.outcome),
        ("reason", exp.reason, cell.reason),
        ("ok", exp.ok, cell.ok),
        ("steps", exp.steps, cell.n_steps),
        ("tools_run", exp.tools_run, list(cell.tools_run)),
        ("tools_failed", exp.tools_failed, list(cell.tools_failed)),
    ]
    for name, want_v, got_v in checks:
        if want_v != got_v:
            where = f" (step {cell.n_steps})" if cell.steps else ""
            return mismatch(f"{name} differs{where}", want_v, got_v)
    return None


def _stop_suffix(cell: Cell, i: int) -> str:
    d = cell.steps[i].decision
    return f" -> {d.reason}, ok={d.ok}" if d.action == "stop" else ""


# ---------------------------------------------------------------- files


@dataclass(slots=True)
class Golden:
    """All golden files of a folder, by predicate name; `problems` lists unusable files."""

    folder: Path
    files: dict[str, GoldenFile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def expectation(self, predicate: str, sequence: str) -> ExpectedCell | None:
        gf = self.files.get(predicate)
        return gf.cells.get(sequence) if gf else None


def load_golden(folder: Path) -> Golden:
    """Read every ``<predicate>.yaml`` in `folder`; a bad file becomes a one-line problem."""
    golden = Golden(folder)
    if not folder.is_dir():
        return golden
    for path in sorted(folder.glob("*.yaml")):
        try:
            golden.files[path.stem] = read_golden_file(path)
        except GoldenError as exc:
            golden.problems.append(str(exc))
    return golden


def read_golden_file(path: Path) -> GoldenFile:
    shown = display_path(path)
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise GoldenError(f"{shown}: not valid YAML: {yaml_error_line(exc)}") from None
    except OSError as exc:
        raise GoldenError(f"{shown}: cannot be read: {exc}") from None
    try:
        gf = GoldenFile.model_validate(data)
    except ValidationError as exc:
        raise GoldenError(f"{shown}: {describe_validation_error(exc)}") from None
    if gf.predicate != path.stem:
        raise GoldenError(f"{shown}: predicate: says {gf.predicate!r}, but the file is for {path.stem!r}")
    return gf


def dump_golden(gf: GoldenFile) -> str:
    """Deterministic YAML for a golden file: header first, cells sorted by sequence id."""
    cells: dict[str, Any] = {}
    for seq in sorted(gf.cells):
        c = gf.cells[seq]
        entry: dict[str, Any] = {"outcome": c.outcome, "reason": c.reason, "ok": c.ok, "steps": c.steps,
                                 "tools_run": c.tools_run}
        if c.tools_failed:
            entry["tools_failed"] = c.tools_failed
        entry["path"] = c.path
        if c.note:
            entry["note"] = c.note
        cells[seq] = entry
    doc = {"predicate": gf.predicate, "derived": gf.derived, "cells": cells}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=None)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


AcceptMode = Literal["new", "all"]


def accept(folder: Path, predicate: str, cells: list[Cell], *, derived: str | None,
           mode: AcceptMode = "new", sequences: set[str] | None = None) -> list[str]:
    """Write the expectations of `cells` into ``folder/<predicate>.yaml`` and return what changed.

    mode ``new`` adds only cells with no expectation; ``all`` also replaces mismatching ones.
    `derived` is required for a new file and replaces the header when given.
    """
    path = folder / f"{predicate}.yaml"
    existing = read_golden_file(path) if path.exists() else None
    if existing is None and not derived:
        raise GoldenError(f"{display_path(path)}: new golden file needs a header: say how the "
                          "expectations were derived (--derived)")
    header = derived or (existing.derived if existing else "")
    table = dict(existing.cells) if existing else {}
    changed: list[str] = []
    for cell in cells:
        if sequences is not None and cell.sequence not in sequences:
            continue
        old = table.get(cell.sequence)
        if old is not None and (mode == "new" or compare(cell, old) is None):
            continue
        note = old.note if old is not None else None
        table[cell.sequence] = expected_of(cell, note)
        changed.append(cell.sequence)
    if changed or existing is None or (derived and existing and derived != existing.derived):
        write_atomically(path, dump_golden(GoldenFile(predicate=predicate, derived=header, cells=table)))
    return changed
