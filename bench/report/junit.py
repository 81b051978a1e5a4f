"""JUnit XML for ``stopbench run --junit`` and ``stopbench check --junit``: one testcase per cell.

CI systems (GitLab, Jenkins, Azure, GitHub through a reporter action) show a JUnit file as tests, so a
cell is a test: its class is the column (``stopbench.run.<predicate>``, ``stopbench.check.<name>@live``),
its name the sequence id. What fails it follows the command's own verdict:

* ``run``: a mismatch with the golden file is a ``<failure type="mismatch">``; a crashed cell an
  ``<error type="crashed">``; an unreviewed cell is ``<skipped>`` (a ``<failure type="unreviewed">``
  with ``--strict``); a broken requirement is a ``<failure type="violation">`` with
  ``--fail-on-violations``, otherwise it is listed in the case's ``<system-out>``, as the run does
  not fail on it.
* ``check``: a broken requirement is a ``<failure type="violation">``; a program that crashed, hung
  or wrote a bad result an ``<error type="crashed">``.

The output is deterministic: cases sorted by class and name, no timestamps, no durations, no host
name, so the same cells give the same bytes. It is written with
:func:`bench.catalogue.files.write_atomically`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias
from xml.sax.saxutils import escape, quoteattr

from bench.catalogue.files import write_atomically
from bench.engine.model import Cell
from bench.golden.run import Result
from bench.report.labels import label

Verdict: TypeAlias = Literal["passed", "failure", "error", "skipped"]
"""What a testcase says: JUnit's three ways not to pass, or passing."""


@dataclass(frozen=True, slots=True)
class Case:
    """One testcase: a cell as JUnit shows it."""

    classname: str
    name: str
    verdict: Verdict = "passed"
    kind: str = ""
    """The failure's or error's ``type`` (mismatch, violation, crashed, unreviewed)."""
    message: str = ""
    text: str = ""
    """The body of the failure, error or skipped element."""
    out: str = ""
    """``<system-out>``: the cell's label and anything worth reading that does not fail it."""


def violation_text(cell: Cell) -> str:
    return "\n".join(f"{v.requirement}{'' if v.step is None else f' at step {v.step}'}: {v.detail}"
                     for v in cell.violations)


def run_case(result: Result, *, strict: bool = False, fail_on_violations: bool = False) -> Case:
    """A ``stopbench run`` cell as a testcase (see the module docstring)."""
    cell = result.cell
    base = Case(f"stopbench.run.{cell.predicate}", cell.sequence, out=label(cell))
    violations = violation_text(cell)
    if cell.outcome == "crashed":
        return _with(base, "error", "crashed", cell.error or "crashed", cell.error or "")
    if result.status == "mismatch" and result.mismatch is not None:
        m = result.mismatch
        return _with(base, "failure", "mismatch", m.what, f"expected: {m.expected}\nactual:   {m.actual}")
    if violations and fail_on_violations:
        return _with(base, "failure", "violation", f"{len(cell.violations)} requirement(s) broken", violations)
    out = f"{base.out}\nrequirements broken (not failing this run):\n{violations}" if violations else base.out
    base = Case(base.classname, base.name, out=out)
    if result.status == "unreviewed":
        if strict:
            return _with(base, "failure", "unreviewed", "no expectation in the golden file", "")
        return _with(base, "skipped", "unreviewed", "no expectation in the golden file (stopbench accept)", "")
    return base


def check_case(cell: Cell) -> Case:
    """A ``stopbench check`` live cell as a testcase: failing on a broken requirement or a crash."""
    base = Case(f"stopbench.check.{cell.predicate}", cell.sequence, out=label(cell))
    if cell.outcome == "crashed":
        return _with(base, "error", "crashed", cell.error or "the program gave no verdict", cell.error or "")
    if cell.violations:
        return _with(base, "failure", "violation", f"{len(cell.violations)} requirement(s) broken",
                     violation_text(cell))
    return base


def _with(case: Case, verdict: Verdict, kind: str, message: str, text: str) -> Case:
    return Case(case.classname, case.name, verdict, kind, message.splitlines()[0] if message else "", text,
                case.out)


def junit_xml(suite: str, cases: Iterable[Case]) -> str:
    """The JUnit XML document: one ``<testsuite>`` per class, cases sorted, counts in each element."""
    by_class: dict[str, list[Case]] = {}
    for case in sorted(cases, key=lambda c: (c.classname, c.name)):
        by_class.setdefault(case.classname, []).append(case)
    every = [c for group in by_class.values() for c in group]
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f"<testsuites name={quoteattr(suite)}{_counts(every)}>"]
    for classname, group in by_class.items():
        lines.append(f"  <testsuite name={quoteattr(classname)}{_counts(group)}>")
        for case in group:
            lines.append(f"    <testcase classname={quoteattr(case.classname)} name={quoteattr(case.name)}>")
            if case.verdict != "passed":
                tag = case.verdict
                lines.append(f"      <{tag} type={quoteattr(case.kind)} message={quoteattr(_xml_text(case.message))}>"
                             f"{escape(_xml_text(case.text))}</{tag}>")
            if case.out:
                lines.append(f"      <system-out>{escape(_xml_text(case.out))}</system-out>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def _counts(cases: list[Case]) -> str:
    n = {v: sum(c.verdict == v for c in cases) for v in ("failure", "error", "skipped")}
    return (f' tests="{len(cases)}" failures="{n["failure"]}" errors="{n["error"]}" '
            f'skipped="{n["skipped"]}"')


def _xml_text(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (control characters but tab and newline)."""
    return "".join(ch for ch in text if ch in "\t\n\r" or (ord(ch) >= 0x20 and ch not in "\ufffe\uffff"))


def write_junit(path: Path, suite: str, cases: Iterable[Case]) -> Path:
    """Write the document to `path` atomically (the old file or the new one, never half)."""
    write_atomically(path, junit_xml(suite, cases))
    return path
