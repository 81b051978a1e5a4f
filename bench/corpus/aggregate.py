"""Decide and count one shard of a corpus: every sequence through every predicate, nothing kept but counts.

A :class:`Partial` holds only counters and, per finding, the few smallest sequence ids that show
it, so its size does not grow with the corpus (memory flat: decode, decide, drop). Partials merge
by adding counts and keeping the smallest ids of the union, which is associative and commutative:
merging the shards' partials in any order, on one core or on a Dask cluster, gives the same
aggregate, bit for bit.

The findings are what a recorded trace supports on its own (the replay is open loop: request *i*
is answered by turn *i*, and a corpus sequence ends where its recording ended, ``then: end``):

* ``truncated_as_success``, ``filtered_as_success``, ``errored_as_success``: the loop reported
  success on a cut-off (``length``), filtered (``content_filter``) or errored turn;
* ``calls_dropped``: a step silently dropped tool calls of its turn (:func:`bench.engine.judge.first_dropped_calls`);
* ``stop_calls_run`` and ``stop_calls_not_run``: a turn that said stop yet carried calls
  (:func:`bench.corpus.tags.stop_with_calls`) had some of its calls run, or none run nor failed;
* ``stopped_at_cap``: the loop's own cap ended it before the recording ended (the recorded loop
  went on past that cap);
* ``safety_capped``: the bench's safety cap ended a loop that never stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus.record import Traced
from bench.corpus.tags import EDGE_TAGS, stop_with_calls, turn_tags
from bench.engine.discovery import Loaded
from bench.engine.judge import first_dropped_calls
from bench.engine.model import Cell, Sequence
from bench.engine.predicate import Predicate
from bench.golden.run import cells

__all__ = ["EDGE_TAGS", "EXAMPLES", "FINDINGS", "Partial", "cell_findings", "count_records", "load_predicates"]

EXAMPLES = 3
"""Example sequence ids kept per finding: the smallest ids (so any merge order keeps the same ones)."""

FINDINGS: tuple[str, ...] = ("truncated_as_success", "filtered_as_success", "errored_as_success", "calls_dropped",
                             "stop_calls_run", "stop_calls_not_run", "stopped_at_cap", "safety_capped")
"""The findings, in report order (see the module docstring)."""

_SUCCESS_ON = {"length": "truncated_as_success", "content_filter": "filtered_as_success",
               "error": "errored_as_success"}


@dataclass(slots=True)
class Partial:
    """The counts of one shard (or of several, merged). Plain dicts of tuples and ints: picklable."""

    sequences: int = 0
    turns: int = 0
    predicates: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(predicate, outcome, ok as "true"/"false"/"") -> cells."""
    decisions: dict[str, int] = field(default_factory=dict)
    """predicate -> decisions made (steps)."""
    findings: dict[tuple[str, str], int] = field(default_factory=dict)
    """(predicate, finding) -> cells showing it."""
    examples: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(predicate, finding) -> the smallest sequence ids showing it, sorted, at most EXAMPLES."""
    groups: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """(provider, model) -> [sequences, turns]."""
    edges: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    """(provider, model, tag) -> [sequences with the tag, turns with the tag]."""

    def merge(self, other: Partial) -> Partial:
        """Add `other`'s counts to this one (in place) and return it."""
        self.sequences += other.sequences
        self.turns += other.turns
        if not self.predicates:
            self.predicates = list(other.predicates)
        for k, v in other.cells.items():
            self.cells[k] = self.cells.get(k, 0) + v
        for p, v in other.decisions.items():
            self.decisions[p] = self.decisions.get(p, 0) + v
        for f, v in other.findings.items():
            self.findings[f] = self.findings.get(f, 0) + v
        for f, ids in other.examples.items():
            self.examples[f] = sorted(set(self.examples.get(f, [])) | set(ids))[:EXAMPLES]
        for g, (s, t) in other.groups.items():
            mine = self.groups.setdefault(g, [0, 0])
            mine[0] += s
            mine[1] += t
        for e, (s, t) in other.edges.items():
            mine = self.edges.setdefault(e, [0, 0])
            mine[0] += s
            mine[1] += t
        return self


def cell_findings(seq: Sequence, cell: Cell, pred: Loaded) -> list[str]:
    """The findings (:data:`FINDINGS`) one cell shows."""
    out: list[str] = []
    steps = cell.steps
    turns = seq.turns
    if cell.outcome == "stopped" and cell.ok and steps:
        last = turns[steps[-1].turn]
        finding = _SUCCESS_ON.get(last.finish)
        if finding is None and last.error is not None:
            finding = "errored_as_success"
        if finding is not None:
            out.append(finding)
    if first_dropped_calls(seq, cell) is not None:
        out.append("calls_dropped")
    ran = not_ran = False
    dialect = seq.dialect
    for s in steps:
        turn = turns[s.turn]
        if stop_with_calls(turn, dialect):
            if s.tools_run:
                ran = True
            elif not s.tools_failed:
                not_ran = True
    if ran:
        out.append("stop_calls_run")
    if not_ran:
        out.append("stop_calls_not_run")
    if (cell.outcome == "stopped" and isinstance(pred, Predicate) and pred.max_steps is not None and steps
            and len(steps) == pred.max_steps and steps[-1].decision.rule == pred.cap.rule):
        out.append("stopped_at_cap")
    if cell.outcome == "capped":
        out.append("safety_capped")
    return out


def _ok(cell: Cell) -> str:
    return "" if cell.ok is None else ("true" if cell.ok else "false")


def count_records(records: Iterable[Traced], predicates: list[Loaded], safety_cap: int,
                  progress: Callable[[int], None] | None = None) -> Partial:
    """Replay each record through every predicate and count; the records are dropped as they go."""
    part = Partial(predicates=[p.name for p in predicates])
    cells_count, decisions, findings, examples = part.cells, part.decisions, part.findings, part.examples
    groups, edges = part.groups, part.edges
    for rec in records:
        seq = rec.sequence
        part.sequences += 1
        n = len(seq.turns)
        part.turns += n
        g = groups.setdefault((rec.provider, rec.model), [0, 0])
        g[0] += 1
        g[1] += n
        tag_turns: dict[str, int] = {}
        dialect = seq.dialect
        for turn in seq.turns:
            for tag in turn_tags(turn, dialect):
                tag_turns[tag] = tag_turns.get(tag, 0) + 1
        if not tag_turns:
            tag_turns["normal"] = 0
        for tag, k in tag_turns.items():
            e = edges.setdefault((rec.provider, rec.model, tag), [0, 0])
            e[0] += 1
            e[1] += k
        for row in cells([seq], predicates, safety_cap):
            for pred, cell in zip(predicates, row, strict=True):
                key = (pred.name, cell.outcome, _ok(cell))
                cells_count[key] = cells_count.get(key, 0) + 1
                decisions[pred.name] = decisions.get(pred.name, 0) + len(cell.steps)
                for f in cell_findings(seq, cell, pred):
                    fk = (pred.name, f)
                    findings[fk] = findings.get(fk, 0) + 1
                    ids = examples.get(fk)
                    if ids is None:
                        examples[fk] = [seq.id]
                    elif (len(ids) < EXAMPLES or seq.id < ids[-1]) and seq.id not in ids:
                        ids.append(seq.id)
                        ids.sort()
                        del ids[EXAMPLES:]
        if progress is not None:
            progress(1)
    return part


_PREDICATES: dict[tuple[str, bool, tuple[str, ...]], list[Loaded]] = {}
"""Predicates loaded in this process, per (folder, entry points, only): a Dask worker loads them once."""


def load_predicates(folder: str, entry_points_too: bool, only: tuple[str, ...]) -> list[Loaded]:
    """The predicates of `folder` (and the entry-point group), narrowed to `only`; cached per process."""
    from bench.engine.discovery import discover

    key = (folder, entry_points_too, only)
    if key not in _PREDICATES:
        found = discover(Path(folder) if folder else None, entry_points_too=entry_points_too)
        _PREDICATES[key] = [p for p in found if not only or p.name in only]
    return _PREDICATES[key]

