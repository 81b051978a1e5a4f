"""The stop reasons users hit, read by the ports as their pinned sources read them (issue 23 item 2):
the rules a new reason reaches, pinned where a port needed a line of its own."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Turn, Usage
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


# A compatible provider's Chat finish_reason "model_context_window_exceeded" (GLM, earendil-works/pi#1869) is
# length in the bench's table, but each SDK below reads the string its endpoint sent, not the bench's meaning.
_WINDOW = Turn("length", "model_context_window_exceeded", content="", usage=Usage(203900, 0))


def test_openai_agents_raises_only_on_the_literal_length_so_a_window_finish_is_an_empty_final_output() -> None:
    # openai_chatcompletions.py L328-343 compare finish_reason == "length"
    cell = replay(seq(_WINDOW, then="repeat"), _load("openai_agents"))
    assert [f"{s.decision.action} {s.decision.rule}" for s in cell.steps] == ["stop final-output"]
    assert (cell.reason, cell.ok) == ("final_output", True)


def test_pydantic_ai_maps_a_window_finish_to_none_and_asks_again_for_output() -> None:
    # _chat_model.py L1124-1129: a key outside CHAT_FINISH_REASON_MAP is None, so no OutputTokenLimitExceeded
    cell = replay(seq(_WINDOW, then="repeat"), _load("pydantic_ai"))
    assert [f"{s.decision.action} {s.decision.rule}" for s in cell.steps] == [
        "remind no-output-retry", "stop output-retries-exceeded"]
    assert (cell.reason, cell.ok) == ("UnexpectedModelBehavior", False)


def test_opencode_reads_a_window_finish_on_chat_as_unknown_and_sends_the_request_again() -> None:
    # the openai-compatible mapper gives other, which OpenCode keeps as unknown (not the Anthropic mapper's length)
    cell = replay(seq(_WINDOW, then="repeat"), _load("opencode"))
    assert [f"{s.decision.action} {s.decision.rule}" for s in cell.steps[:3]] == ["resend unknown-finish"] * 3
    assert cell.outcome == "capped"
