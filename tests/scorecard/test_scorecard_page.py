"""The scorecard's section of the HTML page: from the data alone, escaped, the same bytes every time."""

from __future__ import annotations

from bench.report.page.scorecard import scorecard_section
from bench.scorecard.build import build_scorecard, scorecard_data
from tests.scorecard.conftest import cell, record


def test_section_lists_each_framework_with_classes_and_examples() -> None:
    rows = scorecard_data(build_scorecard([record("beta", [cell("s1", [("no_dropped_calls", "<b>dropped</b>")])]),
                                           record("alpha", [cell("s1")])]))
    html = scorecard_section(rows)
    assert html == scorecard_section(rows)
    assert html.index('id="sc-alpha"') < html.index('id="sc-beta"')
    assert "make scorecard-beta" in html and "<code>no_dropped_calls</code>" in html
    assert "&lt;b&gt;dropped&lt;/b&gt;" in html and "<b>dropped</b>" not in html
    assert "Nothing broken." in html


def test_no_record_no_section() -> None:
    assert scorecard_section([]) == ""


def test_the_page_carries_the_section_after_the_summary() -> None:
    from bench.report.page import build_page
    from tests.page.test_page_data import SEQS, TOY, results
    rows = scorecard_data(build_scorecard([record("alpha", [cell("s1")])]))
    html = build_page(results(), SEQS, [TOY], scorecard=rows)
    assert html.index('id="summary"') < html.index('id="scorecard"') < html.index("</main>")
    assert 'id="scorecard"' not in build_page(results(), SEQS, [TOY])
