"""A turn cut at the recording's output limit is served at the request's own limit, on every wire:
each wire says where its limit is (``Wire.max_tokens``), and the server reads it there."""

from __future__ import annotations

from typing import Any

import pytest

from bench.engine.model import Turn, Usage
from bench.serve.render import at_request_limit

CUT = Turn("length", "max_tokens", content="The capital of France is", usage=Usage(13, 5))

ASKED_40: dict[str, dict[str, Any]] = {
    "openai-chat": {"max_completion_tokens": 40},
    "anthropic": {"max_tokens": 40},
    "openai-responses": {"max_output_tokens": 40},
    "gemini": {"generationConfig": {"maxOutputTokens": 40}},
    "bedrock-converse": {"inferenceConfig": {"maxTokens": 40}},
}


@pytest.mark.parametrize("wire", sorted(ASKED_40))
def test_a_cut_at_the_recorded_limit_is_served_at_the_requests_own_limit(wire: str) -> None:
    served = at_request_limit(CUT, 5, wire, ASKED_40[wire])
    assert served.usage == Usage(13, 40)


@pytest.mark.parametrize("wire", sorted(ASKED_40))
def test_a_request_without_a_limit_or_a_turn_not_at_the_limit_is_served_as_recorded(wire: str) -> None:
    assert at_request_limit(CUT, 5, wire, {}) is CUT
    assert at_request_limit(CUT, 6, wire, ASKED_40[wire]) is CUT
    assert at_request_limit(CUT, None, wire, ASKED_40[wire]) is CUT


@pytest.mark.parametrize("request_body", [{"inferenceConfig": {"maxTokens": 0}},
                                          {"inferenceConfig": {"maxTokens": True}},
                                          {"inferenceConfig": {"maxTokens": "40"}}, {"inferenceConfig": 40}])
def test_a_limit_that_is_not_a_positive_integer_is_no_limit(request_body: dict[str, Any]) -> None:
    assert at_request_limit(CUT, 5, "bedrock-converse", request_body) is CUT
