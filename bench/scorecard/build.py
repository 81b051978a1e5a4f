"""The scorecard, built from the framework records alone (``reports/frameworks/<name>.json``).

Per framework and version: the sequences run, how many meet every requirement of their sequence,
what broke, by class (the requirement, in plain words, with how many sequences break it), a few
example rows, and the command that reproduces it. :func:`build_scorecard` is a pure function of the
records and :func:`scorecard_markdown` of its rows: every list is in a fixed order (frameworks by
name, classes by sequences broken then name, examples in catalogue order), nothing reads the clock
or the machine, so the same records give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.check.explain import GUESS
from bench.check.report import cell_from_json  # the live record's cell format, read back
from bench.engine.model import Cell
from bench.errors import UnusableInput
from bench.report.labels import label

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

    @property
    def broken(self) -> int:
        """Cells that break a requirement for certain, or have no verdict."""
        return self.run - self.met - self.guessed_only


def row_of(record: Mapping[str, Any]) -> ScorecardRow:
    """The scorecard row of one record (raises KeyError, TypeError or ValueError on a malformed one)."""
    fw = record["framework"]
    cells: list[Cell] = [cell_from_json(c) for c in record["cells"]]
    recorded_words: dict[str, list[str]] = record.get("words", {})
    by_class: dict[str, list[Example]] = {}
    kinds: dict[str, set[str]] = {}
    met = guessed_only = 0
    guessed = set(record.get("guessed", []))
    for cell in cells:
        said: dict[str, str] = {}
        if cell.outcome == "crashed":
            said[CLASS_WORDS["crashed"]] = cell.error or ""
            kinds.setdefault(CLASS_WORDS["crashed"], set()).add("crashed")
        words = recorded_words.get(cell.sequence, [])
        for i, v in enumerate(cell.violations):
            kind = kind_of(v.requirement)
            what = words[i] if i < len(words) and kind not in PARAMETRIC else CLASS_WORDS.get(kind, kind)
            what += GUESS if v.guess else ""
            said.setdefault(what, v.detail)
            kinds.setdefault(what, set()).add(kind)
        if any(v.guess for v in cell.violations):
            guessed.add(cell.sequence)
        if not said:
            met += 1
        elif cell.outcome != "crashed" and all(v.guess for v in cell.violations):
            guessed_only += 1
        for what, detail in said.items():
            by_class.setdefault(what, []).append(
                Example(cell.sequence, _clip(label(cell), LABEL_LIMIT), _clip(" ".join(detail.split()), DETAIL_LIMIT)))
    classes = tuple(BrokenClass(", ".join(sorted(kinds[w])), w, len(ex), tuple(ex[:EXAMPLES]))
                    for w, ex in sorted(by_class.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    return ScorecardRow(name=str(record["name"]), title=str(fw["title"]), version=str(fw["version"]),
                        language=str(fw["language"]), dialects=tuple(fw["dialects"]), docs=str(fw["docs"]),
                        notes=str(fw.get("notes", "")), run=len(cells), met=met,
                        catalogue=int(record.get("catalogue", {}).get("sequences", 0)),
                        classes=classes, make=str(record["reproduce"]["make"]),
                        check=str(record["reproduce"]["check"]),
                        guessed=tuple(c.sequence for c in cells if c.sequence in guessed), guessed_only=guessed_only)


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


def build_scorecard(records: Iterable[Mapping[str, Any]]) -> list[ScorecardRow]:
    """The rows of the scorecard, by framework name then version."""
    rows = []
    for record in records:
        try:
            rows.append(row_of(record))
        except (KeyError, TypeError, ValueError) as exc:
            raise UnusableInput(f"framework record {record.get('name', '?')!r}: malformed: {exc!r}") from None
    return sorted(rows, key=lambda r: (r.name, r.version))


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _main_classes(row: ScorecardRow, n: int = 3) -> str:
    return "; ".join(f"{c.words} ({c.sequences})" for c in row.classes[:n]) or "none"


def summary_table(rows: Iterable[ScorecardRow]) -> str:
    """The one-table summary: a row per framework and version."""
    lines = ["| framework | version | language | wires | sequences run | meet every requirement | "
             "verdicts on a guess | main broken classes (sequences) | reproduce |", "|" + " --- |" * 9]
    for r in rows:
        lines.append(f"| [{_md(r.title)}](#{r.name}) | {_md(r.version)} | {r.language} | {', '.join(r.dialects)} | "
                     f"{r.run} | {r.met} | {len(r.guessed)} | {_md(_main_classes(r))} | `{r.make}` |")
    return "\n".join(lines) + "\n"


def framework_section(r: ScorecardRow) -> str:
    """One framework's part of the scorecard: its classes and example rows."""
    out = [f'<a id="{r.name}"></a>', f"## {_md(r.title)} {_md(r.version)}", "",
           f"{r.met} of {r.run} sequences meet every requirement ({r.language}; the {r.run} of the catalogue's "
           f"{r.catalogue} on its wires: {', '.join(r.dialects)}). "
           f"Program written after [its docs]({r.docs}). {_md(r.notes)}", "",
           f"Reproduce: `{r.make}`, or `{r.check}`; one cell as a folder to hand over: "
           f"`stopbench scorecard repro {r.name} SEQUENCE --out DIR`.", ""]
    if r.guessed:
        rest = "s rest" if len(r.guessed) > 1 else " rests"
        out += [f"{len(r.guessed)} verdict{rest} on a guess (a tool result read by "
                f"its wording, not seen run or failed on the bench's tools; {r.guessed_only} of them break "
                f"requirements only so, not counted as certain): "
                + ", ".join(f"`{s}`" for s in r.guessed) + ".", ""]
    if not r.classes:
        out += ["Nothing broken.", ""]
        return "\n".join(out)
    out += ["| what it did | requirement broken | sequences | examples |", "| --- | --- | --- | --- |"]
    for c in r.classes:
        out.append(f"| {_md(c.words)} | `{c.key}` | {c.sequences} | "
                   f"{', '.join(f'`{e.sequence}`' for e in c.examples)} |")
    out += ["", "| sequence | the framework's cell | what it did | at which step |", "| --- | --- | --- | --- |"]
    for c in r.classes:
        for e in c.examples:
            out.append(f"| `{e.sequence}` | `{_md(e.cell)}` | {_md(c.words)} | {_md(e.detail)} |")
    out.append("")
    return "\n".join(out)


HEADER = ("# Framework scorecard\n\n"
          "Each framework's own agent loop, written the way its docs write an agent with tools "
          "(`examples/frameworks/<name>/`), run by `stopbench check` on every sequence of the wires it speaks, "
          "and judged against each sequence's requirements. Built by `stopbench scorecard build` from the records "
          "in this folder (`<name>.json`); do not edit by hand. How to add a framework: `docs/frameworks.md`.\n\n")


def scorecard_markdown(rows: list[ScorecardRow]) -> str:
    """``reports/frameworks/scorecard.md``."""
    if not rows:
        return HEADER + "No framework recorded yet.\n"
    return HEADER + summary_table(rows) + "\n" + "\n".join(framework_section(r) for r in rows)


def scorecard_data(rows: Iterable[ScorecardRow]) -> list[dict[str, Any]]:
    """The rows as plain JSON values (what the HTML page gets)."""
    return [{"name": r.name, "title": r.title, "version": r.version, "language": r.language,
             "dialects": list(r.dialects), "docs": r.docs, "notes": r.notes, "run": r.run, "met": r.met,
             "catalogue": r.catalogue, "make": r.make, "check": r.check, "guessed": list(r.guessed),
             "guessed_only": r.guessed_only,
             "classes": [{"key": c.key, "words": c.words, "sequences": c.sequences,
                          "examples": [{"sequence": e.sequence, "cell": e.cell, "detail": e.detail}
                                       for e in c.examples]} for c in r.classes]} for r in rows]


BEGIN, END = "<!-- scorecard:begin (stopbench scorecard build) -->", "<!-- scorecard:end -->"
README_BEGIN = "<!-- scorecard:readme:begin (stopbench scorecard build) -->"
README_END = "<!-- scorecard:readme:end -->"


def _with_between(doc: str, begin: str, end: str, body: str, what: str) -> str:
    if begin not in doc or end not in doc:
        raise UnusableInput(f"{what}: the markers {begin} and {end} are missing")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}{end}{tail}"


def with_block(doc: str, rows: list[ScorecardRow]) -> str:
    """`doc` (``docs/frameworks.md``) with the block between its markers replaced by the summary table
    (links pointing into ``reports/frameworks/scorecard.md``). Raises :class:`UnusableInput` when a
    marker is missing."""
    table = summary_table(rows).replace("](#", "](../reports/frameworks/scorecard.md#") if rows else \
        "No framework recorded yet.\n"
    return _with_between(doc, BEGIN, END, table, "docs/frameworks.md")


def readme_table(rows: Iterable[ScorecardRow]) -> str:
    """The README's short form: a row per framework and version, how many sequences it meets, and
    what it got wrong most often (the full scorecard is linked from each name)."""
    lines = ["| framework | version | meets every requirement | what it got wrong most often |",
             "| --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| [{_md(r.title)}](reports/frameworks/scorecard.md#{r.name}) | {_md(r.version)} | "
                     f"{r.met} of {r.run} | {_md(_main_classes(r, 1))} |")
    return "\n".join(lines) + "\n"


def with_readme_block(doc: str, rows: list[ScorecardRow]) -> str:
    """`doc` (``README.md``) with its scorecard block replaced by :func:`readme_table`. Raises
    :class:`UnusableInput` when a marker is missing."""
    return _with_between(doc, README_BEGIN, README_END, readme_table(rows) if rows else
                         "No framework recorded yet.\n", "README.md")
