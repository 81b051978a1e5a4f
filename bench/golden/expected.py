"""Golden expectations: what each predicate is expected to do on each sequence, reviewed by a person.

``expected/<predicate>.yaml`` holds a header (``derived``: how the expectations were derived, the
pins and any disagreement with the reference material), ``covers`` (how many cells the file holds
and their sequence ids, so a file cut short at a cell boundary is an error rather than silently
fewer reviewed cells) and one entry per sequence. Each entry says what it rests on
(:data:`Basis`): ``source``, ``observed`` or ``rule``.

Files are read by the project's one YAML reader (:mod:`bench.catalogue.yaml_read`). A normal run only
compares. :func:`accept` is the one place that writes, through :func:`dump_golden` (the project's
YAML writer, :mod:`bench.catalogue.yaml_write`) and :func:`bench.catalogue.files.write_atomically`, and only for the
cells it is asked to. The layout is canonical: reading a file and writing it back gives the same bytes,
so accepting one cell changes only that cell's lines (and the ``covers`` list when it is new).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.catalogue.files import display_path, folder_lock, write_atomically
from bench.catalogue.load import describe_validation_error
from bench.catalogue.yaml_read import YamlError, read_yaml
from bench.catalogue.yaml_write import dump
from bench.engine.changes import step_text
from bench.engine.model import Cell, Outcome
from bench.errors import UnusableInput

__all__ = ["BASES", "Accepted", "Basis", "ExpectedCell", "Golden", "GoldenError", "GoldenFile", "Mismatch",
           "accept", "cell_data", "compare", "dump_golden", "expand", "expected_of", "golden_data", "load_golden",
           "path_of", "plan_accept", "read_golden_file", "shown_value", "write_atomically"]

Basis: TypeAlias = Literal["source", "observed", "rule"]
"""What a golden cell rests on.

``source``: derived by hand from the pinned source lines the predicate cites. ``observed``: changed
(or confirmed) after driving the original loop (``stopbench conform``); the cell's note says what
was seen. ``rule``: the predicate is its own specification (a seed's criterion, ``finish_only``,
``reference``), so the cell guards the bench's engine rather than a port.
"""

BASES: tuple[Basis, ...] = ("source", "observed", "rule")


class GoldenError(UnusableInput):
    """A golden file that cannot be used: one line naming the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ExpectedCell(_Strict):
    """One reviewed cell. `path` is the decision path: ``"<action> <rule>"`` per step, followed by
    the step's request changes when it has some (``"resend length-tools-resend +max_tokens=8192"``,
    :func:`bench.engine.changes.step_text`), with a run of identical steps written once as ``"... xN"``."""

    basis: Basis
    outcome: Outcome
    reason: str | None = None
    ok: bool | None = None
    steps: int = Field(ge=0)
    tools_run: list[str] = []
    tools_failed: list[str] = []
    path: list[str]
    note: str | None = None


class GoldenFile(_Strict):
    """A golden file's content. Its ``covers`` block is computed from `cells` when written."""

    predicate: str
    derived: str = Field(min_length=1)
    cells: dict[str, ExpectedCell] = {}


class Covers(_Strict):
    """What a golden file says it holds: checked against its cells when the file is read."""

    count: int = Field(ge=0)
    sequences: list[str]


class _GoldenFileIn(_Strict):
    predicate: str
    derived: str = Field(min_length=1)
    covers: Covers
    cells: dict[str, ExpectedCell] = {}


# ---------------------------------------------------------------- decision paths


def path_of(cell: Cell) -> list[str]:
    """A cell's decision path, run-length encoded: identical consecutive steps become ``... xN``."""
    runs = ((text, len(list(same))) for text, same in groupby(step_text(s) for s in cell.steps))
    return [text if n == 1 else f"{text} x{n}" for text, n in runs]


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


def expected_of(cell: Cell, basis: Basis, note: str | None = None) -> ExpectedCell:
    """The expectation that `cell` would satisfy exactly (used by accept, after review)."""
    return ExpectedCell(basis=basis, outcome=cell.outcome, reason=cell.reason, ok=cell.ok, steps=cell.n_steps,
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
    got_path = [step_text(s) for s in cell.steps]
    want_path = expand(exp.path)

    def mismatch(what: str, expected: object, actual: object) -> Mismatch:
        return Mismatch(cell.sequence, cell.predicate, what, shown_value(expected), shown_value(actual))

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


def shown_value(value: object) -> str:
    """A field value as the golden file writes it (``null``, ``true``, ``[a, b]``), not a Python repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown_value(v) for v in value) + "]"
    return str(value)


def _stop_suffix(cell: Cell, i: int) -> str:
    d = cell.steps[i].decision
    return f" -> {d.reason}, ok={shown_value(d.ok)}" if d.action == "stop" else ""


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
    """Read and check one golden file; every problem is a :class:`GoldenError` naming the file.

    The project's YAML reader refuses aliases (a small alias bomb would otherwise expand to
    gigabytes), unhashable and duplicate keys and non-UTF-8 bytes, each as one line."""
    shown = display_path(path)
    try:
        data = read_yaml(path, shown=shown)
    except YamlError as exc:
        raise GoldenError(str(exc)) from None
    try:
        gf = _GoldenFileIn.model_validate(data)
    except ValidationError as exc:
        raise GoldenError(f"{shown}: {describe_validation_error(exc)}") from None
    if gf.predicate != path.stem:
        raise GoldenError(f"{shown}: predicate: says {gf.predicate!r}, but the file is for {path.stem!r}")
    _check_covers(shown, gf)
    return GoldenFile(predicate=gf.predicate, derived=gf.derived, cells=gf.cells)


def _check_covers(shown: str, gf: _GoldenFileIn) -> None:
    listed = gf.covers.sequences
    if len(set(listed)) != len(listed):
        dup = sorted({s for s in listed if listed.count(s) > 1})
        raise GoldenError(f"{shown}: covers.sequences: lists {_some(dup)} twice")
    if gf.covers.count != len(listed):
        raise GoldenError(f"{shown}: covers.count: says {gf.covers.count}, but covers.sequences lists "
                          f"{len(listed)}")
    missing = sorted(set(listed) - set(gf.cells))
    if missing:
        raise GoldenError(f"{shown}: cells: {len(missing)} of the {len(listed)} covered cells are missing "
                          f"(the file was cut short or edited by hand): {_some(missing)}")
    extra = sorted(set(gf.cells) - set(listed))
    if extra:
        raise GoldenError(f"{shown}: covers.sequences: does not list {_some(extra)}, which has a cell "
                          "(cells are added by stopbench accept)")


def _some(ids: list[str], shown: int = 3) -> str:
    head = ", ".join(ids[:shown])
    return head if len(ids) <= shown else f"{head} (and {len(ids) - shown} more)"


def golden_data(gf: GoldenFile) -> dict[str, Any]:
    """The plain data of a golden file, in the canonical order: header, covers, cells sorted by id;
    in a cell, basis first, tools_failed only when some failed, note only when there is one."""
    cells = {seq: cell_data(gf.cells[seq]) for seq in sorted(gf.cells)}
    return {"predicate": gf.predicate, "derived": gf.derived,
            "covers": {"count": len(cells), "sequences": list(cells)}, "cells": cells}


def cell_data(c: ExpectedCell) -> dict[str, Any]:
    """One cell's entry as the golden file writes it (basis first; tools_failed and note only when set)."""
    entry: dict[str, Any] = {"basis": c.basis, "outcome": c.outcome, "reason": c.reason, "ok": c.ok,
                             "steps": c.steps, "tools_run": c.tools_run}
    if c.tools_failed:
        entry["tools_failed"] = c.tools_failed
    entry["path"] = c.path
    if c.note:
        entry["note"] = c.note
    return entry


def dump_golden(gf: GoldenFile) -> str:
    """The text of a golden file: :func:`golden_data` through the project's YAML writer."""
    return dump(golden_data(gf))


# ---------------------------------------------------------------- accepting


AcceptMode = Literal["new", "all"]


@dataclass(frozen=True, slots=True)
class Accepted:
    """What one accept does to one golden file, planned before anything is written.

    `added` and `replaced`: sequence ids whose expectation is new or overwritten; `pruned`: ids
    removed because their sequence is gone; `refused`: one line per cell that cannot be accepted
    (a crashed cell is never a reviewed expectation); `header`: whether the header is written or
    replaced; `text`: the file's new content, or None when nothing changes (the file is not touched).
    """

    path: Path
    added: list[str]
    replaced: list[str]
    pruned: list[str]
    refused: list[str]
    header: bool
    text: str | None

    def write(self) -> None:
        """Write the planned file atomically; nothing happens when nothing changes."""
        if self.text is not None:
            write_atomically(self.path, self.text)


def plan_accept(folder: Path, predicate: str, cells: list[Cell], *, derived: str | None = None,
                replace_header: bool = False, mode: AcceptMode = "new", sequences: set[str] | None = None,
                basis: Basis | None = None, keep_only: set[str] | None = None,
                note: str | None = None) -> Accepted:
    """What accepting `cells` into ``folder/<predicate>.yaml`` would change; raises GoldenError when
    it cannot be done, before anything is written.

    mode ``new`` adds only cells with no expectation; ``all`` also replaces mismatching ones (a
    matching cell is never rewritten, so a no-op accept leaves the file byte-identical).
    `sequences` narrows the cells considered. `basis` is required for every new cell and replaces
    the basis of a replaced cell when given (otherwise the old basis is kept, with the old note);
    `note`, when given, is the note of every written cell (a replaced cell otherwise keeps its own);
    in mode ``all`` with a `note`, a matching cell whose note (or basis, when given) differs is
    rewritten with them, its expectation unchanged (without a note a matching cell is never touched).
    `derived` is required for a new file; on an existing file whose header differs it is refused
    unless `replace_header`. `keep_only`, when given, is the set of sequence ids that exist:
    expectations for any other id are removed (``--prune``). A crashed cell is never stored; it
    is listed in ``refused``.
    """
    path = folder / f"{predicate}.yaml"
    shown = display_path(path)
    existing = read_golden_file(path) if path.exists() else None
    header, header_changed = _accepted_header(shown, existing, derived, replace_header)
    table = dict(existing.cells) if existing else {}
    considered = [c for c in cells if sequences is None or c.sequence in sequences]
    added, replaced, refused = _accept_cells(table, considered, shown, predicate, mode=mode, basis=basis, note=note)
    pruned = sorted(s for s in table if keep_only is not None and s not in keep_only)
    for s in pruned:
        del table[s]
    changed = bool(added or replaced or pruned or header_changed)
    text = dump_golden(GoldenFile(predicate=predicate, derived=header, cells=table)) if changed else None
    return Accepted(path, added, replaced, pruned, refused, header_changed, text)


def _accepted_header(shown: str, existing: GoldenFile | None, derived: str | None,
                     replace_header: bool) -> tuple[str, bool]:
    """The header the file will have and whether it is written anew; refused when a new file has
    none, or an existing file's would change without `replace_header`."""
    if existing is None and not derived:
        raise GoldenError(f"{shown}: new golden file needs a header: say how the expectations were derived "
                          "(--derived)")
    header_changed = existing is None or (derived is not None and derived != existing.derived)
    if existing is not None and header_changed and not replace_header:
        raise GoldenError(f"{shown}: derived: the file already has a different header; pass --replace-header "
                          "to replace it (it records the pins and how the cells were derived)")
    header = derived if derived is not None else existing.derived if existing else ""
    return header, header_changed


def _accept_cells(table: dict[str, ExpectedCell], cells: list[Cell], shown: str, predicate: str, *,
                  mode: AcceptMode, basis: Basis | None, note: str | None) -> tuple[list[str], list[str], list[str]]:
    """Write into `table` the cells to accept (see :func:`plan_accept`); the ids added and replaced, and
    one line per crashed cell refused. Raises GoldenError when a new cell has no basis."""
    added: list[str] = []
    replaced: list[str] = []
    refused: list[str] = []
    unbased: list[str] = []
    for cell in cells:
        old = table.get(cell.sequence)
        if old is not None and not _rewritten(cell, old, mode, basis, note):
            continue
        if cell.outcome == "crashed":
            refused.append(f"{cell.sequence} x {predicate}: crashed, not accepted: {cell.error or 'no detail'}")
            continue
        chosen = basis or (old.basis if old is not None else None)
        if chosen is None:
            unbased.append(cell.sequence)
            continue
        table[cell.sequence] = expected_of(cell, chosen, note if note is not None
                                           else old.note if old is not None else None)
        (added if old is None else replaced).append(cell.sequence)
    if unbased:
        raise GoldenError(f"{shown}: basis: {len(unbased)} new cell(s) need one ({_some(unbased)}): pass "
                          "--basis source (from the pinned source), observed (from driving the original) "
                          "or rule (the predicate is its own rule)")
    return added, replaced, refused


def _rewritten(cell: Cell, old: ExpectedCell, mode: AcceptMode, basis: Basis | None, note: str | None) -> bool:
    """Whether mode ``all`` rewrites the existing expectation `old`: `cell` no longer matches it, or a
    given `note` (or `basis`) differs from its own."""
    relabel = note is not None and (note != old.note or (basis is not None and basis != old.basis))
    return mode != "new" and (compare(cell, old) is not None or relabel)


def accept(folder: Path, predicate: str, cells: list[Cell], *, derived: str | None = None,
           replace_header: bool = False, mode: AcceptMode = "new", sequences: set[str] | None = None,
           basis: Basis | None = None, keep_only: set[str] | None = None, note: str | None = None) -> Accepted:
    """:func:`plan_accept`, then write the file (atomically) when something changes, both under the
    folder's write lock (a concurrent accept into the same file is not lost)."""
    with folder_lock(folder):
        planned = plan_accept(folder, predicate, cells, derived=derived, replace_header=replace_header, mode=mode,
                              sequences=sequences, basis=basis, keep_only=keep_only, note=note)
        planned.write()
    return planned
