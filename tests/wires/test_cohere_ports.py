"""The ports whose loops reach a Cohere or Ollama sequence on Chat Completions (they have no provider
for either native API) read it as the replay server serves it there: Cohere's TOOL_CALL as tool_calls,
COMPLETE as stop, MAX_TOKENS as length, ERROR and TIMEOUT as their raw strings; each cell is the cell
of the sequence's Chat twin (the same turns with the finish strings the server sends on Chat)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.catalogue.load import load_sequence
from bench.engine.discovery import load_file
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.wires.registry import wire
from tests.helpers import ROOT

PORTS = ("pi", "opencode", "hermes")
SEQUENCES = ("cohere-tool-rounds", "cohere-error-then-answer", "cohere-max-tokens-text-cut", "ollama-load-empty")


def _port(name: str) -> Predicate:
    loaded = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


@pytest.mark.parametrize("sid", SEQUENCES)
@pytest.mark.parametrize("name", PORTS)
def test_a_sequence_of_a_dialect_the_loop_has_no_provider_for_reads_as_served_on_chat(name: str, sid: str) -> None:
    seq = load_sequence(ROOT / "sequences" / "constructed" / f"{sid}.yaml")
    chat = wire("openai-chat")
    twin = replace(seq, dialect="openai-chat", turns=tuple(
        replace(t, finish_raw=chat.finish_for(seq.dialect, t)) for t in seq.turns))
    port = _port(name)
    got, want = replay(seq, port), replay(twin, port)
    assert (got.outcome, got.reason, got.ok, [(s.decision.action, s.decision.rule) for s in got.steps]) == (
        want.outcome, want.reason, want.ok, [(s.decision.action, s.decision.rule) for s in want.steps])
