"""The scorecard's rows, from the framework records (``reports/frameworks/<name>.json``).

:func:`row_of` reads one record into a :class:`ScorecardRow`: the sequences run, how many meet
every requirement, what broke by class (what the cells did, in plain words, with the requirements
that says they broke and how many sequences), each cell's verdict in those words, the footing and
the command that reproduces it. :func:`build_scorecard` reads them all, in a fixed order (frameworks
by name, then version; classes by sequences broken then words; examples in catalogue order).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.check.explain import GUESS
from bench.check.report import cell_from_json  # the live record's cell format, read back
from bench.engine.model import Cell
from bench.errors import UnusableInput
from bench.report.labels import label
from bench.scorecard.framework import Citation

CLASS_WORDS: dict[str, str] = {
    "ok: false": "reported success on a reply that is not an answer (cut off, filtered, failed, or with no call "
                 "where one was announced)",
    "ok: true": "did not end with success on a sequence that ends in an answer",
    "stops_within": "did not stop within the requests the sequence allows",
    "no_dropped_calls": "dropped tool calls of a reply: neither ran them nor answered them with an error",
    "no_truncated_runs": "ran a tool call taken from a cut-off (length) reply",
    "answer_after_tools": "reported success on a reply that carries tool calls, whose results the model never saw",
    "no_malformed_runs": "ran a tool call whose arguments are not valid JSON",
    "answer_on": "reported success on a turn that is not the sequence's answer",
    "progress": "ran the same calls again with the same results, changing nothing",
    "crashed": "no verdict: the program died, hung past the time limit, or wrote a bad result file",
}
"""A requirement kind in plain words, for a record that keeps no words of its own (``words``: what each cell
did, naming the served turn, written when the record is made)."""

PARAMETRIC = frozenset({"stops_within"})
"""Kinds whose recorded words carry the sequence's parameter ("within 10 requests"): classed by the kind's words."""

MET = "met every requirement"
"""A cell's verdict in words when it broke nothing."""

EXAMPLES = 3
"""Example sequences kept per class."""

LABEL_LIMIT = 160
DETAIL_LIMIT = 200


def kind_of(requirement: str) -> str:
    """A violation's class: its requirement without the parameter (``stops_within: 4`` ->
    ``stops_within``), but ``ok: true`` and ``ok: false`` apart (they say opposite things)."""
    kind = requirement.split(":", 1)[0].strip()
    return requirement.strip() if kind == "ok" else kind


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Example:
    sequence: str
    cell: str
    detail: str


@dataclass(frozen=True, slots=True)
class BrokenClass:
    """What cells did, in plain words (the class), the requirement kinds that says they broke, and how many."""

    key: str
    words: str
    sequences: int
    examples: tuple[Example, ...]


@dataclass(frozen=True, slots=True)
class ScorecardRow:
    """One framework at one version, as its record says."""

    name: str
    title: str
    version: str
    language: str
    dialects: tuple[str, ...]
    docs: str
    notes: str
    run: int
    met: int
    catalogue: int
    """Sequences in the catalogue the record was made on (those of the framework's wires ran)."""
    classes: tuple[BrokenClass, ...]
    make: str
    check: str
    guessed: tuple[str, ...] = ()
    """Sequences whose verdict rests on the wording fallback (the record's ``guessed``, and every cell
    with a violation marked ``guess``): said as guesses, not counted as certain."""
    guessed_only: int = 0
    """Cells that break requirements only on a guess: not counted as certain failures."""
    footing: str = ""
    """The digest of the sequence files it ran (:mod:`bench.scorecard.footing`; empty for an older record)."""
    beside: str = ""
    """For a release recorded beside the pinned one (``stopbench scorecard bump``): the pinned version."""
    verdicts: tuple[tuple[str, str], ...] = ()
    """``(sequence, what it did in the classes' words, or MET)`` per cell: what versions are compared on."""
    citations: tuple[Citation, ...] = ()
    """The framework's source lines behind its broken classes (its ``framework.json``'s ``citations``)."""

    @property
    def broken(self) -> int:
        """Cells that break a requirement for certain, or have no verdict."""
        return self.run - self.met - self.guessed_only


def said_of(cell: Cell, words: Sequence[str]) -> dict[str, tuple[str, set[str]]]:
    """``{what the cell did, in its class's words: (the step's detail, the requirement kinds)}``,
    one entry per class it falls in (empty when it met every requirement). `words` are the record's
    words for the cell."""
    said: dict[str, tuple[str, set[str]]] = {}
    if cell.outcome == "crashed":
        said[CLASS_WORDS["crashed"]] = (cell.error or "", {"crashed"})
    for i, v in enumerate(cell.violations):
        kind = kind_of(v.requirement)
        what = words[i] if i < len(words) and kind not in PARAMETRIC else CLASS_WORDS.get(kind, kind)
        said.setdefault(what + (GUESS if v.guess else ""), (v.detail, set()))[1].add(kind)
    return said


def row_of(record: Mapping[str, Any], citations: Sequence[Citation] = ()) -> ScorecardRow:
    """The scorecard row of one record (raises KeyError, TypeError or ValueError on a malformed one)."""
    fw = record["framework"]
    cells: list[Cell] = [cell_from_json(c) for c in record["cells"]]
    recorded_words: dict[str, list[str]] = record.get("words", {})
    by_class: dict[str, list[Example]] = {}
    kinds: dict[str, set[str]] = {}
    verdicts: list[tuple[str, str]] = []
    met = guessed_only = 0
    guessed = set(record.get("guessed", []))
    for cell in cells:
        said = said_of(cell, recorded_words.get(cell.sequence, []))
        if any(v.guess for v in cell.violations):
            guessed.add(cell.sequence)
        if not said:
            met += 1
        elif cell.outcome != "crashed" and all(v.guess for v in cell.violations):
            guessed_only += 1
        verdicts.append((cell.sequence, "; ".join(said) or MET))
        for what, (detail, its_kinds) in said.items():
            kinds.setdefault(what, set()).update(its_kinds)
            by_class.setdefault(what, []).append(
                Example(cell.sequence, _clip(label(cell), LABEL_LIMIT), _clip(" ".join(detail.split()), DETAIL_LIMIT)))
    classes = tuple(BrokenClass(", ".join(sorted(kinds[w])), w, len(ex), tuple(ex[:EXAMPLES]))
                    for w, ex in sorted(by_class.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    catalogue = record.get("catalogue", {})
    return ScorecardRow(name=str(record["name"]), title=str(fw["title"]), version=str(fw["version"]),
                        language=str(fw["language"]), dialects=tuple(fw["dialects"]), docs=str(fw["docs"]),
                        notes=str(fw.get("notes", "")), run=len(cells), met=met,
                        catalogue=int(catalogue.get("sequences", 0)), footing=str(catalogue.get("digest", "")),
                        classes=classes, make=str(record["reproduce"]["make"]),
                        check=str(record["reproduce"]["check"]),
                        guessed=tuple(c.sequence for c in cells if c.sequence in guessed), guessed_only=guessed_only,
                        beside=str(fw.get("beside", "")), verdicts=tuple(verdicts), citations=tuple(citations))


def load_records(folder: Path) -> list[dict[str, Any]]:
    """Every ``folder/*.json`` record, by file name. Raises :class:`UnusableInput` naming a bad file."""
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(record, dict) or "framework" not in record or "cells" not in record:
                raise ValueError("no framework or cells")
        except (OSError, ValueError) as exc:
            raise UnusableInput(f"{path}: not a framework record: {exc}") from None
        out.append(record)
    return out


def build_scorecard(records: Iterable[Mapping[str, Any]],
                    citations: Mapping[str, Sequence[Citation]] | None = None) -> list[ScorecardRow]:
    """The rows of the scorecard, by framework name then version; `citations` are each framework's
    (by name: its ``framework.json``'s, read by the caller)."""
    rows = []
    for record in records:
        try:
            rows.append(row_of(record, (citations or {}).get(str(record.get("name")), ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise UnusableInput(f"framework record {record.get('name', '?')!r}: malformed: {exc!r}") from None
    return sorted(rows, key=lambda r: (r.name, r.version))
