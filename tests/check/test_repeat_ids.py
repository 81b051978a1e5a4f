"""`stopbench check` serves a turn served again (``then: repeat``, or a turn an ``after:`` route goes
back to) with fresh call ids, as a real provider mints a new id in every response; a sequence about
call ids (tagged ``tool-call-id``) keeps its ids.

Served the same id again, a loop that keys its history by id (Mastra, the OpenAI Agents SDK) takes
the repeat for a call it already answered and ends: its verdict would be the replay's, not its own."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.catalogue.load import parse_sequence
from bench.check.runner import run_all, run_program
from bench.engine.model import Sequence

PROGRAM = Path(__file__).parent / "programs" / "id_keyed.py"
CALL = {"finish": "tool_calls", "content": None, "tool_calls": [{"id": "call_1", "name": "bash", "arguments": "{}"}]}


def repeating(tags: list[str] | None = None) -> Sequence:
    data: dict[str, object] = {"title": "one call, repeated", "kind": "constructed", "dialect": "openai-chat",
                               "source": "tests/check", "then": "repeat", "turns": [CALL],
                               "require": {"stops_within": 3}, "tags": tags or []}
    return parse_sequence(data, "repeat-one-call")


def served_ids(tmp_path: Path, seq: Sequence, *, parallel: bool) -> list[str]:
    log = tmp_path / "ids.txt"
    command = [sys.executable, str(PROGRAM), str(log)]
    if parallel:
        run_all([seq], command, name="keyed", jobs=2, timeout=30)
    else:
        run_program(seq, command, name="keyed", timeout=30)
    return log.read_text(encoding="utf-8").split()


def test_check_serves_each_repeat_with_a_fresh_call_id(tmp_path: Path) -> None:
    assert served_ids(tmp_path, repeating(), parallel=False) == ["call_1", "call_1-r1", "call_1-r2", "call_1-r3"]


def test_check_with_jobs_serves_fresh_ids_too(tmp_path: Path) -> None:
    assert served_ids(tmp_path, repeating(), parallel=True) == ["call_1", "call_1-r1", "call_1-r2", "call_1-r3"]


def test_a_sequence_about_call_ids_keeps_them_on_repeats(tmp_path: Path) -> None:
    assert served_ids(tmp_path, repeating(["tool-call-id"]), parallel=False) == ["call_1", "call_1"]


def test_the_judge_counts_every_repeat_served_with_fresh_ids_as_run(tmp_path: Path) -> None:
    run = run_program(repeating(), [sys.executable, str(PROGRAM), str(tmp_path / "ids.txt")], name="keyed",
                      timeout=30)
    # four requests: the results of the first three went back to the model (the fourth's never did)
    assert run.cell.tools_run == ("bash",) * 3
    assert [v.requirement for v in run.cell.violations] == ["stops_within: 3"]


def cycling(tags: list[str] | None = None) -> Sequence:
    """Turn 0 and turn 1 in a cycle: after turn 1, a continue goes back to turn 0 (guard-ab-cycle)."""
    other = {**CALL, "tool_calls": [{"id": "call_2", "name": "bash", "arguments": '{"n": 2}'}],
             "after": {"continue": 0, "resend": 1, "remind": 0}}
    data: dict[str, object] = {"title": "two rounds in a cycle", "kind": "constructed", "dialect": "openai-chat",
                               "source": "tests/check", "then": "end", "turns": [CALL, other],
                               "require": {"stops_within": 3}, "tags": tags or []}
    return parse_sequence(data, "cycle-two-calls")


def test_check_serves_a_turn_an_after_route_goes_back_to_with_a_fresh_call_id(tmp_path: Path) -> None:
    """The OpenAI Agents SDK for JavaScript (0.20.0, agents-core runner/turnResolution.js
    preflightToolInvocations) suppresses a call whose id it completed before: served call_1 again, it
    ran nothing, and guard-ab-cycle read as dropped calls."""
    assert served_ids(tmp_path, cycling(), parallel=False) == ["call_1", "call_2", "call_1-r1", "call_2-r1"]


def test_a_sequence_about_call_ids_keeps_them_on_an_after_route(tmp_path: Path) -> None:
    assert served_ids(tmp_path, cycling(["tool-call-id"]), parallel=False) == ["call_1", "call_2", "call_1"]
