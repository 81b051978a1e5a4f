"""Live fuzzing: the reference properties read off observed cells, a bounded shrink that keeps the
smallest failing example, the failure saved as a sequence file that reproduces it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
from click.testing import CliRunner

from bench.catalogue.load import load_sequence
from bench.check.fuzz import assert_no_finding, distinct_ids, fuzz_loop, live_failure, search
from bench.check.served import Served
from bench.cli import cli
from bench.engine.discovery import load_file
from bench.engine.model import Cell, Decision, Sequence, Step
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.loops.clients import conversation
from bench.loops.naive import run_naive
from bench.loops.reference import run
from tests.check.conftest import ANSWER, CALL, fake, small_sequence
from tests.helpers import ROOT

FINISH_ONLY = load_file(ROOT / "predicates" / "finish_only.py")
assert isinstance(FINISH_ONLY, Predicate)


def stopped(seq: Sequence, ok: bool, steps: list[tuple[int, str, tuple[str, ...]]]) -> Cell:
    made = tuple(Step(i + 1, turn, Decision(action, "observed", reason="r" if action == "stop" else None,  # type: ignore[arg-type]
                                                 ok=ok if action == "stop" else None), run)
                 for i, (turn, action, run) in enumerate(steps))
    return Cell(seq.id, "loop@live", "stopped", made, "r", ok, tools_run=tuple(n for s in made for n in s.tools_run))


def test_success_on_a_truncated_turn_or_one_carrying_calls_breaks_no_false_ok() -> None:
    cut = small_sequence("cut", [{"finish": "length", "content": "The"}])
    calls = small_sequence("calls", [CALL, ANSWER])
    assert live_failure(cut, stopped(cut, True, [(0, "stop", ())]))[0] == "no-false-ok"  # type: ignore[index]
    assert live_failure(cut, stopped(cut, False, [(0, "stop", ())])) is None
    found = live_failure(calls, stopped(calls, True, [(0, "stop", ())]))
    assert found is not None and "results never reached the model" in found[1]
    assert live_failure(calls, stopped(calls, True, [(0, "continue", ("read_file",)), (1, "stop", ())])) is None


def test_a_call_neither_run_nor_failed_breaks_keeps_calls_and_capped_breaks_within_cap() -> None:
    calls = small_sequence("calls", [CALL, ANSWER])
    dropped = stopped(calls, True, [(0, "continue", ()), (1, "stop", ())])
    assert live_failure(calls, dropped)[0] == "keeps-calls"  # type: ignore[index]
    capped = Cell(calls.id, "loop@live", "capped", dropped.steps)
    assert live_failure(calls, capped)[0] == "within-cap"  # type: ignore[index]


def test_the_search_shrinks_to_one_turn_and_answers_a_replayed_example_from_its_cache() -> None:
    runs: list[Sequence] = []

    def judge(seq: Sequence) -> tuple[tuple[str, str] | None, Cell]:
        runs.append(seq)
        cell = replay(seq, FINISH_ONLY)
        return live_failure(seq, cell), cell

    out = search(judge, 60, seed=1, dialects=("openai-chat",), shrink_time=30)
    assert out.finding is not None and out.examples == len(runs)
    assert len(out.finding.sequence.turns) == 1  # finish_only takes a cut or filtered reply as the answer
    assert out.failing_seen >= 1 and not out.shrink_stopped


def test_past_its_shrink_budget_the_search_keeps_the_smallest_failure_seen() -> None:
    def judge(seq: Sequence) -> tuple[tuple[str, str] | None, Cell]:
        cell = replay(seq, FINISH_ONLY)
        return live_failure(seq, cell), cell

    out = search(judge, 60, seed=1, dialects=("openai-chat",), shrink_time=0)
    assert out.finding is not None and out.shrink_stopped


def _client(s: Served) -> Any:
    return openai.OpenAI(base_url=s.openai_base_url, api_key=s.api_key, timeout=10)


def test_the_in_process_helper_finds_the_naive_loop_and_passes_the_reference_loop() -> None:
    def naive(s: Served) -> tuple[bool, str]:
        r = run_naive(conversation("openai-chat", _client(s), s.model, s.prompt, s.tools), lambda n, a: "ok")
        return r.ok, r.reason

    def reference(s: Served) -> tuple[bool, str]:
        r = run(_client(s), api="openai-chat", model=s.model, prompt=s.prompt, tools=s.tools,
                execute=lambda n, a: "ok")
        return r.ok, r.reason

    bad = fuzz_loop(naive, 40, dialects=("openai-chat",), shrink_time=20)
    assert bad.finding is not None and bad.finding.prop == "no-false-ok"
    try:
        assert_no_finding(bad)
    except AssertionError as exc:
        assert "breaks no-false-ok" in str(exc) and "dialect: openai-chat" in str(exc)
    else:
        raise AssertionError("assert_no_finding passed a finding")
    assert_no_finding(fuzz_loop(reference, 25, dialects=("openai-chat",), shrink_time=20))


def test_check_fuzz_writes_a_sequence_that_reproduces_the_failure(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["check", "--fuzz", "25", "--shrink-time", "15", "--dialect", "openai-chat",
                                 "--save", str(tmp_path), "--", *fake("answer")])
    assert r.exit_code == 1, r.output
    assert "program run(s): the first failure after" in r.stdout and "wall time" in r.stdout
    [path] = list(tmp_path.glob("found-live-fake_loop-*.yaml"))
    seq = load_sequence(path)
    assert seq.tags == ("found", "fuzz", "live", seq.tags[3]) and not seq.require.is_empty()
    again = CliRunner().invoke(cli, ["check", "--sequences", str(tmp_path), "--no-report", "--", *fake("answer")])
    assert again.exit_code == 1 and "⚠" in again.stdout


def test_call_ids_are_made_distinct_within_a_turn_even_when_a_suffix_collides() -> None:
    seq = small_sequence("ids", [{"finish": "tool_calls", "content": None, "tool_calls": [
        {"id": "call_1", "name": "a", "arguments": "{}"}, {"id": "", "name": "b", "arguments": "{}"},
        {"id": "call_1", "name": "c", "arguments": "{}"}]}])
    ids = [c.id for c in distinct_ids(seq).turns[0].tool_calls]
    assert ids[0] == "call_1" and len(set(ids)) == 3 and all(ids)
