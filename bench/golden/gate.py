"""The golden gate: the shipped catalogue through the shipped predicates against the shipped golden files.

The decision matrix checked against ``expected/`` is what the bench promises, so ``make test``
fails unless every cell matches its reviewed expectation. :func:`gate` replays every sequence of
a catalogue through every predicate of a folder (no entry points: only what is shipped), in one
process, and lists each problem with the command that reviews it:

* a cell that mismatches its golden cell (its first differing step, as ``stopbench run`` prints it);
* a cell with no golden cell (unreviewed);
* a crashed cell (a predicate that raised, exited, hung or did not load): fixed in the
  predicate, never accepted;
* a golden file that expects a sequence no longer in the catalogue, or that names no predicate;
* a sequence or golden file that cannot be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.catalogue.load import load_catalogue
from bench.engine.discovery import discover
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.golden.expected import Golden, load_golden
from bench.golden.run import run
from bench.report.labels import label


@dataclass(slots=True)
class GateReport:
    """What the gate found: `cells` checked, and one entry per problem (empty when the gate passes)."""

    cells: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.passed:
            return f"golden gate: {self.cells} cells, all match their reviewed expectations"
        return (f"golden gate: {len(self.problems)} problem(s) in {self.cells} cells\n\n"
                + "\n\n".join(self.problems))


def gate(sequences_dir: Path, predicates_dir: Path, expected_dir: Path,
         safety_cap: int = DEFAULT_SAFETY_CAP) -> GateReport:
    """Replay `sequences_dir` through the predicates of `predicates_dir` and compare every cell with
    `expected_dir`; see the module docstring for what counts as a problem."""
    report = GateReport()
    catalogue = load_catalogue(sequences_dir)
    report.problems += [f"BAD SEQUENCE {p}" for p in catalogue.problems]
    golden = load_golden(expected_dir)
    report.problems += [f"BAD GOLDEN FILE {p}" for p in golden.problems]
    predicates = discover(predicates_dir, entry_points_too=False)
    for result in run(catalogue.sequences, predicates, golden, safety_cap):
        report.cells += 1
        cell = result.cell
        seq, pred = cell.sequence, cell.predicate
        if cell.outcome == "crashed":
            report.problems.append(f"CRASHED {seq} x {pred}: {cell.error}\n"
                                   f"    review: stopbench show {seq} -p {pred}; fix predicates/{pred}.py "
                                   "(a crashed cell is never accepted)")
        elif result.mismatch is not None:
            report.problems.append(f"{result.mismatch}\n"
                                   f"    review: stopbench show {seq} -p {pred}, then, if the new decision is "
                                   f"right: stopbench accept {pred} -s {seq} --replace")
        elif result.status == "unreviewed":
            report.problems.append(f"UNREVIEWED {seq} x {pred}: {label(cell)}\n"
                                   f"    review: stopbench show {seq} -p {pred}, then: stopbench accept {pred} "
                                   f"-s {seq} --basis {_usual_basis(golden, pred)}")
    seq_ids = {s.id for s in catalogue.sequences}
    pred_names = {p.name for p in predicates}
    for name, gf in sorted(golden.files.items()):
        if name not in pred_names:
            report.problems.append(f"ORPHAN GOLDEN FILE {expected_dir / (name + '.yaml')}: no predicate {name} "
                                   f"in {predicates_dir}")
            continue
        if catalogue.problems:
            continue  # a sequence that did not load is not gone; its expectations are not stale
        for seq in sorted(set(gf.cells) - seq_ids):
            report.problems.append(f"STALE {seq} x {name}: expected, but there is no such sequence\n"
                                   f"    review: stopbench accept {name} --prune")
    return report


def _usual_basis(golden: Golden, predicate: str) -> str:
    """The basis every cell of the predicate's golden file shares (``rule`` for a predicate that is
    its own rule), or the three choices when they differ or there is no file yet."""
    gf = golden.files.get(predicate)
    bases = {c.basis for c in gf.cells.values()} if gf else set()
    return bases.pop() if len(bases) == 1 else "source|observed|rule"
