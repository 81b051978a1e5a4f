"""Write ``reports/``: the decision table, every cell as CSV, and the page, all or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.catalogue.files import write_all_or_nothing
from bench.conform.report import explained_by
from bench.engine.discovery import Loaded
from bench.engine.model import Sequence as SequenceModel
from bench.engine.predicate import Predicate
from bench.golden.expected import Golden
from bench.golden.run import Result
from bench.report.coverage import markdown_section as coverage_markdown
from bench.report.coverage import rule_coverage
from bench.report.guards import guard_scores, markdown_section
from bench.report.page import build_page, load_conformance
from bench.report.page.scorecard import load_scorecard
from bench.report.tables import cells_frame, decision_table


def write_reports(folder: Path, results: list[Result], sequences: list[str], predicates: list[str],
                  titles: dict[str, str] | None = None, *, catalogue: Sequence[SequenceModel] | None = None,
                  loaded: Sequence[Loaded] | None = None, golden: Golden | None = None) -> list[Path]:
    """Write ``decision-table.md`` and ``cells.csv`` into `folder`, and ``index.html`` when the
    sequences (`catalogue`) and predicates (`loaded`) themselves are given; return their paths.

    The set is written all or nothing (:func:`bench.catalogue.files.write_all_or_nothing`): every report is
    rendered first, then all replace the old ones together, so a failure (a report that raises, a
    folder that cannot be written) leaves the previous set whole. Add a report with one entry below.
    """
    sections = [coverage_section(results, loaded)] if loaded is not None else []
    if catalogue is not None:  # the loop-guard score, on the sequences tagged repeat (bench.report.guards)
        sections.append(markdown_section(guard_scores(results, catalogue, predicates), loaded or ()))
    files = {
        folder / "decision-table.md": decision_table(results, sequences, predicates, titles, sections),
        folder / "cells.csv": cells_frame(results).to_csv(index=False, lineterminator="\n"),
    }
    if catalogue is not None and loaded is not None:
        files[folder / "index.html"] = page_html(folder, results, catalogue, loaded, golden)
    write_all_or_nothing(files)
    return list(files)


def coverage_section(results: list[Result], loaded: Sequence[Loaded]) -> str:
    """The ``## Rule coverage`` section of the decision table (:mod:`bench.report.coverage`): which
    declared rules of each loaded predicate fire on at least one cell of `results`."""
    return coverage_markdown(rule_coverage([p for p in loaded if isinstance(p, Predicate)],
                                          (r.cell for r in results)))


def page_html(folder: Path, results: list[Result], catalogue: Sequence[SequenceModel],
              loaded: Sequence[Loaded], golden: Golden | None = None) -> str:
    """``index.html``: the page of :mod:`bench.report.page`, with the conformance records of
    ``folder/conformance/``, each port's conformance explanations and the golden cells' basis."""
    explained = explained_by(loaded)
    return build_page(results, catalogue, loaded, load_conformance(folder), explained, golden,
                      scorecard=load_scorecard(folder))
