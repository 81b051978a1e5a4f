"""The framework scorecard's section of the HTML page, from :func:`bench.scorecard.build.scorecard_data`.

A pure function of that data (plain JSON values, frameworks in their order there) to an HTML
fragment: the summary table, then each framework's broken classes and example rows. Static HTML,
no script needed, escaped by the template engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

ASSETS = Path(__file__).parent / "assets"


def scorecard_section(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ``<section id="scorecard">`` of the page; empty when no framework is recorded."""
    if not rows:
        return ""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ASSETS), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    return env.get_template("scorecard.html.j2").render(rows=rows)


def load_scorecard(folder: Path) -> list[dict[str, Any]]:
    """The scorecard data of the records in ``folder/frameworks/`` (none: an empty list)."""
    from bench.scorecard.build import build_scorecard, load_records, scorecard_data
    return scorecard_data(build_scorecard(load_records(folder / "frameworks")))
