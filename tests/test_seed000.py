"""Seed 000's table, reproduced exactly: steps and tools per scenario and criterion.

The expected values are typed in from the article (循环的终止判据写错，Agent 会把同一个响应跑满上限,
section 1 and the corrected loop), not taken from the bench's output.
"""

from __future__ import annotations

import pytest

from bench.catalogue.load import load_catalogue
from bench.engine.discovery import discover
from bench.engine.model import Cell
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT

# (sequence, predicate) -> (steps, tools run, stopped on the cap?, reason, ok)
ARTICLE = {
    ("seed000-tool-tool-answer", "seed000_content"): (3, ["read_file", "count_lines"], False, None, True),
    ("seed000-tool-tool-answer", "seed000_finish"): (3, ["read_file", "count_lines"], False, None, True),
    ("seed000-tool-tool-answer", "seed000_tool_calls"): (3, ["read_file", "count_lines"], False, None, True),
    ("seed000-tool-tool-answer", "seed000_fixed"): (3, ["read_file", "count_lines"], False, None, True),
    ("seed000-tool-call-with-text", "seed000_content"): (1, ["read_file"], False, None, True),
    ("seed000-tool-call-with-text", "seed000_finish"): (2, ["read_file"], False, None, True),
    ("seed000-tool-call-with-text", "seed000_tool_calls"): (2, ["read_file"], False, None, True),
    ("seed000-tool-call-with-text", "seed000_fixed"): (2, ["read_file"], False, None, True),
    ("seed000-truncated-max-tokens", "seed000_content"): (8, [], True, "max_steps", False),
    ("seed000-truncated-max-tokens", "seed000_finish"): (8, [], True, "max_steps", False),
    # '1 步就收工，但收工的理由是空回答': the empty reply taken as the answer, ok.
    ("seed000-truncated-max-tokens", "seed000_tool_calls"): (1, [], False, "no_tool_calls", True),
    # the corrected loop throws on length before anything else
    ("seed000-truncated-max-tokens", "seed000_fixed"): (1, [], False, "length", False),
    ("seed000-talk-only", "seed000_content"): (1, [], False, None, True),
    ("seed000-talk-only", "seed000_finish"): (1, [], False, None, True),
    ("seed000-talk-only", "seed000_tool_calls"): (1, [], False, None, True),
    ("seed000-talk-only", "seed000_fixed"): (1, [], False, None, True),
}


@pytest.fixture(scope="module")
def cells() -> dict[tuple[str, str], Cell]:
    cat = load_catalogue(ROOT / "sequences" / "seed000")
    preds = [p for p in discover(ROOT / "predicates", entry_points_too=False)
             if isinstance(p, Predicate) and p.name.startswith("seed000_")]
    assert not cat.problems
    assert sorted(p.name for p in preds) == ["seed000_content", "seed000_finish", "seed000_fixed",
                                             "seed000_tool_calls"]
    return {(s.id, p.name): replay(s, p) for s in cat.sequences for p in preds}


@pytest.mark.parametrize(("sequence", "pred"), sorted(ARTICLE))
def test_seed000_table_cell_matches_the_article(cells: dict[tuple[str, str], Cell], sequence: str,
                                                pred: str) -> None:
    steps, tools, capped, reason, ok = ARTICLE[(sequence, pred)]
    cell = cells[(sequence, pred)]
    assert cell.outcome == "stopped"
    assert cell.n_steps == steps
    assert list(cell.tools_run) == tools
    assert (cell.steps[-1].decision.rule == "cap") is capped
    if reason is not None:
        assert cell.reason == reason
    assert cell.ok is ok
