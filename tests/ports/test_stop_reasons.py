"""The stop reasons users hit, read by the ports as their pinned sources read them (issue 23 item 2):
the rules a new reason reaches, pinned where a port needed a line of its own."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Turn
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, seq


def _load(name: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


@pytest.mark.parametrize("reason", ["steered", "max_messages"])
def test_codex_fails_the_turn_on_a_response_incomplete_for_any_reason_but_content_filter(reason: str) -> None:
    # 0.169.0 formats every incomplete reason into "Incomplete response returned, reason: " (bin/codex
    # @380429) and fails the turn unretried; only content_filter is a retried stream error
    turn = Turn("unknown", f"incomplete/{reason}", content="The repository has three services: api, worker and")
    cell = replay(replace(seq(turn, then="repeat"), dialect="openai-responses"), _load("codex"))
    assert [f"{s.decision.action} {s.decision.rule}" for s in cell.steps] == ["stop incomplete-response"]
    assert (cell.reason, cell.ok) == ("error", False)
