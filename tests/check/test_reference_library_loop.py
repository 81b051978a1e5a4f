"""The reference loop as client code (bench/loops/reference.py) against predicates/reference.py, step
by step, on every sequence of the catalogue it can speak; the naive loop beside it breaks them.

The library runs in this process over the official openai and anthropic clients (Bedrock Converse over
an httpx client), against the same
replay server and inference as ``stopbench check`` and ``stopbench conform``; its observed cell is
compared with the predicate's replayed cell by the conformance comparison (turn, action, tools run
and failed per step; outcome, reason and ok).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from bench.catalogue.load import load_catalogue
from bench.check.served import Served, served
from bench.conform.runner import compare_cells
from bench.engine.discovery import load_file
from bench.engine.model import Sequence
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.loops.clients import Api, conversation
from bench.loops.naive import run_naive
from bench.loops.reference import LoopResult, run
from tests.check.conftest import ANSWER, CALL, small_sequence
from tests.helpers import ROOT

CATALOGUE = load_catalogue(ROOT / "sequences")
PREDICATE = load_file(ROOT / "predicates" / "reference.py")
assert isinstance(PREDICATE, Predicate)

GEMINI_ON_CHAT = ("the library loop is written over the openai and anthropic clients only, so a Gemini sequence is "
                  "served to it on Chat Completions (as `python -m bench.loops` does); Gemini's {} is no Chat "
                  "finish string, so the library reads it as an unknown finish (stop unknown_finish), where the "
                  "predicate reads the Gemini table (finish error)")
CANNOT = {"gemini-malformed-function-call": GEMINI_ON_CHAT.format("MALFORMED_FUNCTION_CALL"),
          "gemini-too-many-tool-calls": GEMINI_ON_CHAT.format("TOO_MANY_TOOL_CALLS"),
          "gemini-unexpected-tool-call": GEMINI_ON_CHAT.format("UNEXPECTED_TOOL_CALL"),
          "gemini-malformed-response": GEMINI_ON_CHAT.format("MALFORMED_RESPONSE"),
          "gemini-missing-thought-signature": GEMINI_ON_CHAT.format("MISSING_THOUGHT_SIGNATURE"),
          **{sid: "the tool results a live loop sees are its own tools' (here the test's stub, the same every "
                  "round), never the sequence's ToolCall.result, which the server cannot serve: the library sees "
                  "no progress where the results move, and reminds at the 4th identical poll"
             for sid in ("chat-polling-progress", "chat-polling-stalls", "guard-poll-moves", "guard-poll-flips",
                         "guard-same-call-new-results")}}
"""Sequences the library cannot take the predicate's steps on, with why; every other one must match."""

SPOKEN = [s for s in CATALOGUE.sequences if s.id not in CANNOT]


def api_of(sequence: Sequence) -> Api:
    return "openai-chat" if sequence.dialect == "gemini" else sequence.dialect  # type: ignore[return-value]


def client(s: Served, api: str) -> Any:
    if api == "anthropic":
        return anthropic.Anthropic(base_url=s.anthropic_base_url, api_key=s.api_key, timeout=10)
    if api in ("bedrock-converse", "ollama", "cohere"):  # their clients are httpx.Clients on the server's root
        return httpx.Client(base_url=s.url, timeout=10)
    return openai.OpenAI(base_url=s.openai_base_url, api_key=s.api_key, timeout=10)


def stub(name: str, arguments: Any) -> str:
    return f"ok: {name} ran"


def run_reference(s: Served) -> LoopResult:
    api = api_of(s.sequence)
    return run(client(s, api), api=api, model=s.model, prompt=s.prompt, tools=s.tools, execute=stub,
               steer=s.steers.get)


@pytest.fixture(scope="module")
def server() -> Iterator[Served]:
    with served(SPOKEN[0], name="reference@live") as s:
        yield s


def test_every_dialect_is_compared_and_only_the_listed_sequences_are_left_out() -> None:
    assert {s.dialect for s in SPOKEN} == {"openai-chat", "anthropic", "openai-responses", "gemini",
                                           "bedrock-converse", "ollama", "cohere"}
    assert set(CANNOT) <= {s.id for s in CATALOGUE.sequences}


@pytest.mark.parametrize("sid", sorted(CANNOT))
def test_a_sequence_listed_as_not_matching_really_does_not(server: Served, sid: str) -> None:
    seq = CATALOGUE.by_id(sid)
    assert seq is not None
    s = server.serve(seq)
    result = run_reference(s)
    assert compare_cells(replay(seq, PREDICATE), s.cell(result.ok, result.reason)) is not None
    assert result.reason == ("unknown_finish" if sid.startswith("gemini-") else "repeated_tool_call")


@pytest.mark.parametrize("sequence", SPOKEN, ids=lambda s: s.id)
def test_the_library_loop_takes_the_predicates_steps(server: Served, sequence: Sequence) -> None:
    s = server.serve(sequence)
    result = run_reference(s)
    cell = s.cell(result.ok, result.reason)
    port = replay(sequence, PREDICATE)
    assert compare_cells(port, cell) is None, [o.as_json() for o in s.observed()]
    # the same rule at every step; past the end of a `then: end` script the server answers 410 and
    # the library stops on that error, a step the replay (outcome running) does not have
    extra = 1 if port.outcome == "running" else 0
    assert len(result.steps) == len(port.steps) + extra
    assert [st.rule for st in result.steps[:len(port.steps)]] == [st.decision.rule for st in port.steps]


def test_the_naive_loop_breaks_requirements_the_reference_meets(server: Served) -> None:
    broken = []
    # it runs calls whatever the finish says (chat-stop-with-tool-calls is fine), but takes every
    # reply without calls as the answer: a cut text, a filtered one, an empty one, a dropped call
    for sid in ("chat-length-text-cut", "chat-stop-with-tool-calls", "chat-content-filter", "chat-empty-stop",
                "chat-dropped-calls-x3"):
        seq = CATALOGUE.by_id(sid)
        assert seq is not None
        s = server.serve(seq)
        result = run_naive(conversation("openai-chat", client(s, "openai-chat"), s.model, s.prompt, s.tools), stub)
        if s.cell(result.ok, result.reason).violations:
            broken.append(sid)
    assert broken == ["chat-length-text-cut", "chat-content-filter", "chat-empty-stop", "chat-dropped-calls-x3"]


@pytest.mark.parametrize("api", ["openai-chat", "anthropic", "openai-responses", "bedrock-converse"])
def test_a_failing_tool_is_an_error_result_and_the_loop_goes_on(api: Api) -> None:
    seq = small_sequence("tool-fails", [CALL, ANSWER], dialect=api if api in ("anthropic", "bedrock-converse")
                         else "openai-chat")
    with served(seq) as s:
        def broken(name: str, arguments: Any) -> str:
            raise OSError("disk on fire")
        result = run(client(s, api), api=api, model=s.model, prompt=s.prompt, tools=s.tools, execute=broken)
        cell = s.cell(result.ok, result.reason)
    assert (result.ok, result.reason) == (True, "no_tool_calls")
    assert cell.steps[0].tools_failed == ("read_file",) and cell.steps[0].tools_run == ()


@pytest.mark.parametrize("sid", ["chat-steer-mid-run", "anthropic-max-tokens-partial-tool-use",
                                 "responses-end-turn-false"])
def test_the_program_form_takes_the_predicates_steps_under_stopbench_check(sid: str) -> None:
    from bench.check import run_program
    seq = CATALOGUE.by_id(sid)
    assert seq is not None
    live = run_program(seq, [sys.executable, "-m", "bench.loops", "reference"], name="reference@live", cwd=ROOT)
    assert compare_cells(replay(seq, PREDICATE), live.cell) is None, live.stderr
    assert live.result is not None and live.exit_status == (0 if live.result.ok else 1)
