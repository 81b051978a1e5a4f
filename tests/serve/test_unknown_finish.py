"""An unknown finish is served as its raw string, never as a finish that means something else
(Anthropic's pause_turn means 'resume the turn'); Gemini's OTHER says 'unknown reason' and stays."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx
import pytest

from bench.catalogue.load import load_catalogue
from bench.serve.render import WIRES, finish_for
from bench.wires.dialects import TABLES, canonical
from tests.serve.serving import make_sequence, serving

OTHER_TURN = {"finish": "unknown", "finish_raw": "other", "content": "partial answer"}


def test_the_anthropic_client_gets_the_raw_string_not_pause_turn() -> None:
    seq = make_sequence([OTHER_TURN], "openai-chat", then="repeat")
    with serving(seq) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=10)
        message = client.messages.create(model="m", max_tokens=50, messages=[{"role": "user", "content": "go"}])
        with client.messages.stream(model="m", max_tokens=50, messages=[{"role": "user", "content": "go"}]) as s:
            streamed = s.get_final_message()
    assert (message.stop_reason, streamed.stop_reason) == ("other", "other")


def test_the_gemini_wire_says_other_for_an_unknown_finish() -> None:
    seq = make_sequence([OTHER_TURN], "openai-chat")
    with serving(seq) as srv:
        got = httpx.post(srv.url + "/v1beta/models/m:generateContent",
                         json={"contents": [{"role": "user", "parts": [{"text": "go"}]}]}, timeout=10).json()
    assert got["candidates"][0]["finishReason"] == "OTHER"


@pytest.mark.parametrize("wire", WIRES)
def test_no_unknown_finish_of_the_catalogue_goes_out_as_a_finish_that_means_something_else(wire: str) -> None:
    catalogue = load_catalogue(Path("sequences"))
    for seq in catalogue.sequences:
        for turn in seq.turns:
            if turn.finish != "unknown" or turn.finish_raw is None or turn.refusal is not None:
                continue
            sent = finish_for(wire, seq.dialect, turn)  # type: ignore[arg-type]
            # what the wire's client reads it as: unknown (a string of its own table says so) or
            # not in its table at all
            assert sent not in TABLES[wire] or canonical(wire, sent) == "unknown", (seq.id, sent)  # type: ignore[arg-type]
            assert sent in (turn.finish_raw, "OTHER"), (seq.id, wire, sent)
            if wire == "anthropic":
                assert sent != "pause_turn" or turn.finish_raw == "pause_turn", seq.id
