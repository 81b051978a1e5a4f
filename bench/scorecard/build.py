"""The scorecard as Markdown, from its rows alone (:mod:`bench.scorecard.rows`).

``reports/frameworks/scorecard.md`` (a summary table, the versions recorded side by side, then per
framework its classes, example rows, the source lines cited behind them and the command that
reproduces it), the block of ``docs/frameworks.md`` and the README's short table. Every function
here is a pure function of the rows: nothing reads the clock or the machine, so the same records
give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.check.explain import GUESS
from bench.errors import UnusableInput
from bench.scorecard.rows import (
    BrokenClass,
    ScorecardRow,
    build_scorecard,
    load_records,
    row_of,
)
from bench.scorecard.versions import Step, version_steps

__all__ = ["BEGIN", "END", "README_BEGIN", "README_END", "BrokenClass", "ScorecardRow", "build_scorecard",
           "load_records", "readme_table", "row_of", "scorecard_data", "scorecard_markdown", "summary_table",
           "with_block", "with_readme_block"]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _main_classes(row: ScorecardRow, n: int = 3) -> str:
    return "; ".join(f"{c.words} ({c.sequences})" for c in row.classes[:n]) or "none"


def pinned(rows: Iterable[ScorecardRow]) -> list[ScorecardRow]:
    """The rows of the pinned versions (a release recorded beside its pin shows under "Versions side by side")."""
    return [r for r in rows if not r.beside]


def summary_table(rows: Iterable[ScorecardRow]) -> str:
    """The one-table summary: a row per framework, at its pinned version."""
    lines = ["| framework | version | language | wires | footing | sequences run | meet every requirement | "
             "verdicts on a guess | main broken classes (sequences) | reproduce |", "|" + " --- |" * 10]
    for r in pinned(rows):
        lines.append(f"| [{_md(r.title)}](#{r.name}) | {_md(r.version)} | {r.language} | {', '.join(r.dialects)} | "
                     f"{_footing(r)} | {r.run} | {r.met} | {len(r.guessed)} | {_md(_main_classes(r))} | "
                     f"`{r.make}` |")
    return "\n".join(lines) + "\n"


def _footing(r: ScorecardRow) -> str:
    return f"`{r.footing}`" if r.footing else "none kept"


def _guesses(r: ScorecardRow) -> list[str]:
    if not r.guessed:
        return []
    rest = "s rest" if len(r.guessed) > 1 else " rests"
    return [f"{len(r.guessed)} verdict{rest} on a guess (a tool result read by "
            f"its wording, not seen run or failed on the bench's tools; {r.guessed_only} of them break "
            f"requirements only so, not counted as certain): " + ", ".join(f"`{s}`" for s in r.guessed) + ".", ""]


def citations_part(r: ScorecardRow) -> list[str]:
    """Per broken class, the framework's own source lines behind it (its ``framework.json``'s
    ``citations``); a citation whose class no sequence of the record shows is said so."""
    if not r.citations:
        return []
    shown = {c.words for c in r.classes}
    out = ["Behind these classes, in the framework's own source:", ""]
    for c in r.citations:
        absent = "" if c.label in shown or c.label + GUESS in shown else " (no sequence of this record shows it)"
        out.append(f"- {_md(c.label)}{absent}: [`{c.path}` {c.lines}]({c.url}) ({c.repo} {c.release}): {_md(c.says)}")
    return [*out, ""]


def framework_section(r: ScorecardRow, others: Iterable[ScorecardRow] = ()) -> str:
    """One framework's part of the scorecard: its classes and example rows, the source lines cited
    behind them, and the other versions recorded (`others`)."""
    also = ", ".join(f"{_md(o.version)} ({o.met} of {o.run})" for o in others)
    out = [f'<a id="{r.name}"></a>', f"## {_md(r.title)} {_md(r.version)}", "",
           f"{r.met} of {r.run} sequences meet every requirement ({r.language}; the {r.run} sequences of its "
           f"wires, {', '.join(r.dialects)}, of the catalogue's {r.catalogue}; footing {_footing(r)}). "
           f"Program written after [its docs]({r.docs}). {_md(r.notes)}", "",
           f"Reproduce: `{r.make}`, or `{r.check}`; one cell as a folder to hand over: "
           f"`stopbench scorecard repro {r.name} SEQUENCE --out DIR`.", "",
           *([f"Also recorded at {also}: [what changed](#{r.name}-versions).", ""] if also else []),
           *_guesses(r)]
    if not r.classes:
        return "\n".join([*out, "Nothing broken.", "", *citations_part(r)])
    out += ["| what it did | requirement broken | sequences | examples |", "| --- | --- | --- | --- |"]
    for c in r.classes:
        out.append(f"| {_md(c.words)} | `{c.key}` | {c.sequences} | "
                   f"{', '.join(f'`{e.sequence}`' for e in c.examples)} |")
    out += ["", "| sequence | the framework's cell | what it did | at which step |", "| --- | --- | --- | --- |"]
    for c in r.classes:
        for e in c.examples:
            out.append(f"| `{e.sequence}` | `{_md(e.cell)}` | {_md(c.words)} | {_md(e.detail)} |")
    return "\n".join([*out, "", *citations_part(r)])


VERSIONS_INTRO = ("Each framework recorded at more than one release (`stopbench scorecard bump` records a newer "
                  "release of its main packages beside the pinned one), from each release to the next: the "
                  "sequences whose verdict changed, in words.\n")


def step_part(step: Step, heading: str, anchor: bool) -> list[str]:
    """One framework from one recorded release to the next: both counts, then each verdict that changed."""
    old, new = step.older, step.newer
    out = [*([f'<a id="{old.name}-versions"></a>'] if anchor else []),
           f"{heading} {_md(old.title)}: {_md(old.version)} to {_md(new.version)}", "",
           f"At {_md(old.version)}, {old.met} of {old.run} meet every requirement (footing {_footing(old)}); at "
           f"{_md(new.version)}, {new.met} of {new.run} (footing {_footing(new)}; `{new.make}`)."
           + (f" {step.only_one} sequence(s) ran at one of the two only, not compared." if step.only_one else ""), ""]
    if not step.moved:
        return [*out, "No sequence's verdict changed.", ""]
    out += [f"{len(step.moved)} sequence(s) changed verdict:", "",
            f"| sequence | at {_md(old.version)} | at {_md(new.version)} |", "| --- | --- | --- |"]
    out += [f"| `{c.sequence}` | {_md(c.before)} | {_md(c.after)} |" for c in step.moved]
    return [*out, ""]


def versions_markdown(rows: Iterable[ScorecardRow], heading: str = "##", anchors: bool = True) -> str:
    """The "Versions side by side" part under a `heading` of that level (empty when no framework is
    recorded at two versions); `anchors` gives each framework's first step its ``<name>-versions`` id."""
    steps = version_steps(rows)
    if not steps:
        return ""
    out = [f"{heading} Versions side by side", "", VERSIONS_INTRO]
    for its_steps in steps.values():
        for i, step in enumerate(its_steps):
            out += step_part(step, heading + "#", anchors and i == 0)
    return "\n".join(out)


HEADER = ("# Framework scorecard\n\n"
          "Each framework's own agent loop, written the way its docs write an agent with tools "
          "(`examples/frameworks/<name>/`), run by `stopbench check` on every sequence of the wires it speaks, "
          "and judged against each sequence's requirements. Built by `stopbench scorecard build` from the records "
          "in this folder (`<name>.json`, and `<name>@<version>.json` for a release recorded beside the pin); "
          "do not edit by hand. A record's footing is the digest of the sequence files it ran "
          "(`docs/frameworks.md`), the same for two records of the same wires on the same catalogue. "
          "How to add a framework: `docs/frameworks.md`.\n\n")


def scorecard_markdown(rows: list[ScorecardRow]) -> str:
    """``reports/frameworks/scorecard.md``."""
    if not rows:
        return HEADER + "No framework recorded yet.\n"
    by_name: dict[str, list[ScorecardRow]] = {}
    for r in rows:
        by_name.setdefault(r.name, []).append(r)
    versions = versions_markdown(rows)
    return (HEADER + summary_table(rows) + "\n" + (versions + "\n" if versions else "")
            + "\n".join(framework_section(r, [o for o in by_name[r.name] if o is not r]) for r in pinned(rows)))


def scorecard_data(rows: Iterable[ScorecardRow]) -> list[dict[str, Any]]:
    """The pinned rows as plain JSON values (what the HTML page gets)."""
    return [{"name": r.name, "title": r.title, "version": r.version, "language": r.language,
             "dialects": list(r.dialects), "docs": r.docs, "notes": r.notes, "run": r.run, "met": r.met,
             "catalogue": r.catalogue, "footing": r.footing, "make": r.make, "check": r.check,
             "guessed": list(r.guessed), "guessed_only": r.guessed_only,
             "classes": [{"key": c.key, "words": c.words, "sequences": c.sequences,
                          "examples": [{"sequence": e.sequence, "cell": e.cell, "detail": e.detail}
                                       for e in c.examples]} for c in r.classes]} for r in pinned(rows)]


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
    (links pointing into ``reports/frameworks/scorecard.md``) and the versions side by side. Raises
    :class:`UnusableInput` when a marker is missing."""
    versions = versions_markdown(rows, "###", anchors=False)
    table = summary_table(rows).replace("](#", "](../reports/frameworks/scorecard.md#") if rows else \
        "No framework recorded yet.\n"
    return _with_between(doc, BEGIN, END, table + ("\n" + versions if versions else ""), "docs/frameworks.md")


def readme_table(rows: Iterable[ScorecardRow]) -> str:
    """The README's short form: a row per framework at its pinned version, how many sequences it
    meets, and what it got wrong most often (the full scorecard is linked from each name)."""
    lines = ["| framework | version | meets every requirement | what it got wrong most often |",
             "| --- | --- | --- | --- |"]
    for r in pinned(rows):
        lines.append(f"| [{_md(r.title)}](reports/frameworks/scorecard.md#{r.name}) | {_md(r.version)} | "
                     f"{r.met} of {r.run} | {_md(_main_classes(r, 1))} |")
    return "\n".join(lines) + "\n"


def with_readme_block(doc: str, rows: list[ScorecardRow]) -> str:
    """`doc` (``README.md``) with its scorecard block replaced by :func:`readme_table`. Raises
    :class:`UnusableInput` when a marker is missing."""
    return _with_between(doc, README_BEGIN, README_END, readme_table(rows) if rows else
                         "No framework recorded yet.\n", "README.md")
