"""The interactive report, ``reports/index.html``: one self-contained page built from a run's results.

:func:`build_page` is a pure function of its inputs (results, sequences, predicates, conformance
records and explanations) to an HTML string: the template, our own CSS and script, and the data are
inlined, nothing is fetched, and nothing varies between runs (no times, sorted keys, ids made from
sequence and predicate names). The matrix, the summary and the charts are rendered here, so the page
reads without scripts; the script adds the filters, the drill-down and the stepper from the embedded
data. :func:`load_conformance` reads the records the page shows beside the ports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence as Seq
from pathlib import Path
from typing import Any

import jinja2

from bench.conform.report import RECORD_VERSION
from bench.engine.discovery import Loaded
from bench.engine.model import Sequence
from bench.golden.expected import Golden
from bench.golden.run import Result
from bench.report.guards import guard_scores, html_section
from bench.report.labels import GLYPHS, VERDICT_WORDS, VERDICTS, verdict_table
from bench.report.page.data import by_reference, page_data
from bench.report.page.scorecard import scorecard_section
from bench.report.page.svg import bar_chart, heat_map

ASSETS = Path(__file__).parent / "assets"

CONFORMANCE_GLYPHS = {"same": "=", "explained": "≈", "differs": "≠", "not driven": "∅", "not run": "–"}
"""The marker of a port's conformance status on a sequence, after an ``o`` (the original loop)."""


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ASSETS), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    return env


def embed_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">`` element: sorted keys, and every ``<`` escaped
    so that no string in the data can close the element."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _inline_script(text: str) -> str:
    if "</script" in text.lower():
        raise ValueError("page.js must not contain '</script'")
    return text


def build_page(results: Seq[Result], sequences: Seq[Sequence], predicates: Seq[Loaded],
               records: Mapping[str, Mapping[str, Any]] | None = None,
               explained: Mapping[str, Mapping[str, str]] | None = None, golden: Golden | None = None,
               scorecard: Seq[Mapping[str, Any]] = ()) -> str:
    """The whole page as one HTML string. `records` maps a port's predicate name to its conformance
    record, `explained` a predicate name to its ``CONFORMANCE_EXPLAINED`` mapping; `golden` (the
    expected/ files) gives each reviewed cell's basis and note; `scorecard` is the framework
    scorecard's data (:func:`bench.scorecard.build.scorecard_data`), shown in a section of its own."""
    data = page_data(results, sequences, predicates, records or {}, explained or {}, golden)
    data["verdicts"] = verdict_table()  # the script's glyphs and words, as the matrix and legend use them
    names = [p["name"] for p in data["predicates"]]
    template = _env().get_template("index.html.j2")
    return template.render(
        data_json=embed_json(by_reference(data)), css=(ASSETS / "page.css").read_text(encoding="utf-8"),
        script=_inline_script((ASSETS / "page.js").read_text(encoding="utf-8")),
        rows=_matrix_rows(data), predicates=data["predicates"], summary=data["summary"], totals=_totals(data),
        facets=_facets(data), glyphs=GLYPHS, verdicts=VERDICTS, verdict_words=VERDICT_WORDS,
        conformance_glyphs=CONFORMANCE_GLYPHS, bar_svg=bar_chart(data["summary"]["rows"]),
        heat_svg=heat_map(data["summary"]["kinds"], data["summary"]["rows"]),
        record_version=RECORD_VERSION, scorecard_html=scorecard_section(scorecard),
        guards_html=html_section(guard_scores(results, sequences, names), predicates),
    )


def _matrix_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The matrix's rows, in the page data's sequence order: a heading row at each new group and at
    each new first tag within it, then one row per sequence with its cell for each predicate and
    whether its verdicts disagree."""
    rows: list[dict[str, Any]] = []
    last_group = last_tag = None
    names = [p["name"] for p in data["predicates"]]
    for s in data["sequences"]:
        tag = s["tags"][0] if s["tags"] else "(no tag)"
        if s["group"] != last_group:
            n = sum(1 for t in data["sequences"] if t["group"] == s["group"])
            rows.append({"type": "group", "group": s["group"], "n": n})
            last_group, last_tag = s["group"], None
        if tag != last_tag:
            rows.append({"type": "tag", "group": s["group"], "tag": tag})
            last_tag = tag
        cells = []
        for p in names:
            key = f"{s['id']}\t{p}"
            c = data["cells"].get(key)
            cells.append({"pred": p, "cell": c, "label": c["label"] if c else ""})
        verdicts = {c["cell"]["v"] for c in cells if c["cell"] is not None}
        rows.append({"type": "seq", "seq": s, "cells": cells, "disagree": len(verdicts) > 1})
    return rows


def _totals(data: Mapping[str, Any]) -> dict[str, Any]:
    """The summary's counts: sequences, predicates, cells, cells by golden status, crashed cells,
    violations and the cells with any, live columns."""
    cells = data["cells"].values()
    return {
        "sequences": len(data["sequences"]), "predicates": len(data["predicates"]), "cells": len(data["cells"]),
        "golden": {g: sum(c["golden"] == g for c in cells) for g in ("match", "mismatch", "unreviewed")},
        "crashed": sum(c["v"] == "crashed" for c in cells),
        "violations": sum(len(c["violations"]) for c in cells),
        "cells_violating": sum(bool(c["violations"]) for c in cells),
        "live": sum(bool(p.get("live")) for p in data["predicates"]),
    }


def _facets(data: Mapping[str, Any]) -> dict[str, list[str]]:
    """The filters' choices: the dialects, the groups in their order, the tags."""
    return {
        "dialects": sorted({s["dialect"] for s in data["sequences"]}),
        "groups": list(dict.fromkeys(s["group"] for s in data["sequences"])),
        "tags": sorted({t for s in data["sequences"] for t in s["tags"]}),
    }


def load_conformance(folder: Path) -> dict[str, dict[str, Any]]:
    """The conformance records in ``folder/conformance/*.json``, keyed by the port (predicate) they
    compare. A file that is not a record of the current version is left out: the page then shows
    that port's cells as not run, as ``conformance.md`` does."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "conformance").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("version") == RECORD_VERSION and isinstance(data.get("port"), str):
            out[data["port"]] = data
    return out
