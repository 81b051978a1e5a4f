"""``scorecard verify`` compares what the loop decided, not what the machine's speed or a race decided:
a loop that never stopped on the path both runs reached and the requirements broken (whether the
bench's request cap or the time limit ended it is the machine's), and one turn's calls run concurrently
as a set (their order is a race), and a call id the client made up at random not by its value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench.scorecard.verify import compare_cells


def step(n: int, tool: str = "read_file") -> dict[str, Any]:
    return {"action": "continue", "calls_run": [0], "known": [[0, "executed"]], "rule": "observed",
            "run": [tool], "step": n, "turn": n - 1, "texts": [[0, f"#{n}"]]}


def never_stopping(steps: int, outcome: str, *, tool_at: dict[int, str] | None = None,
                   broken: str = "stops_within: 10") -> dict[str, Any]:
    decisions = [step(n, (tool_at or {}).get(n, "read_file")) for n in range(1, steps + 1)]
    killed = f"still running after {steps + 1} requests, killed at the 120 s time limit"
    error = killed if outcome == "running" else None
    return {"sequence": "seed001-never-stops-capped", "predicate": "fw@live", "golden": "live", "ok": None,
            "reason": None, "outcome": outcome, "error": error, "requests": steps + 1, "steps": steps,
            "decisions": decisions, "tools_run": [d["run"][0] for d in decisions], "tools_failed": [],
            "reminders": 0, "resends": 0, "tokens": 0,
            "violations": [{"requirement": broken, "step": steps, "detail": f"the loop never stopped ({outcome})"}]}


def fields(committed: dict[str, Any], now: dict[str, Any]) -> list[str]:
    return [d.field for d in compare_cells({"cells": [committed]}, {"cells": [now]})]


def test_a_loop_cut_by_the_time_limit_matches_the_same_loop_cut_by_the_cap() -> None:
    assert fields(never_stopping(128, "running"), never_stopping(200, "capped")) == []
    assert fields(never_stopping(200, "capped"), never_stopping(181, "running")) == []


def test_a_never_stopping_loop_that_took_another_path_is_a_difference() -> None:
    assert fields(never_stopping(128, "running"), never_stopping(200, "capped", tool_at={40: "bash"})) == ["decisions"]


def test_a_step_past_what_both_reached_is_not_compared() -> None:
    assert fields(never_stopping(128, "running"), never_stopping(200, "capped", tool_at={150: "bash"})) == []


def test_a_never_stopping_loop_that_breaks_another_requirement_is_a_difference() -> None:
    now = never_stopping(200, "capped")
    now["violations"].append({"requirement": "progress: 3", "step": 4, "detail": "ran read_file again"})
    assert fields(never_stopping(128, "running"), now) == ["broken"]


def test_a_loop_that_now_stops_is_compared_whole() -> None:
    committed = never_stopping(3, "capped")
    stopped = {**committed, "outcome": "stopped", "ok": True, "reason": "stop", "violations": []}
    assert fields(committed, stopped) == ["ok"]  # compared whole: the first field that moved, sorted


def parallel_round(order: list[int]) -> dict[str, Any]:
    names = ["read_file", "grep", "bash"]
    return {"sequence": "chat-parallel-tool-calls", "predicate": "fw@live", "golden": "live", "ok": True,
            "reason": "stop", "outcome": "stopped", "error": None, "requests": 2, "steps": 2, "violations": [],
            "decisions": [{"action": "continue", "calls_run": order, "known": [[i, "executed"] for i in order],
                           "run": [names[i] for i in order], "step": 1, "turn": 0},
                          {"action": "stop", "calls_run": [], "run": [], "step": 2, "turn": 1}],
            "tools_run": [names[i] for i in order], "tools_failed": []}


def test_the_order_a_loop_ran_one_turns_calls_in_concurrently_is_not_compared() -> None:
    assert fields(parallel_round([1, 2, 0]), parallel_round([0, 1, 2])) == []


def test_a_call_of_the_turn_left_unrun_is_a_difference() -> None:
    assert fields(parallel_round([1, 2, 0]), parallel_round([0, 1])) == ["decisions"]


def with_detail(detail: str) -> dict[str, Any]:
    c = parallel_round([0])
    c["decisions"][0]["detail"] = detail
    return c


def test_a_call_id_the_client_made_up_is_not_compared_by_its_value() -> None:
    said = "result for unknown call id 'adk_tool_call_{}'; assistant echo only, nothing added"
    assert fields(with_detail(said.format("c29ca279")), with_detail(said.format("32c3e04e"))) == []


def test_a_detail_that_says_something_else_is_a_difference() -> None:
    assert fields(with_detail("result for unknown call id 'a'"),
                  with_detail("second result for call 'a'")) == ["decisions"]


def test_the_id_is_masked_in_the_servers_own_wording_as_a_record_holds_it() -> None:
    record = Path(__file__).resolve().parents[2] / "reports" / "frameworks" / "google_adk.json"
    cell = next(c for c in json.loads(record.read_text(encoding="utf-8"))["cells"]
                if c["sequence"] == "chat-tool-call-as-text")
    text = json.dumps(cell)
    assert re.search(r"unknown call id 'adk_tool_call_[0-9a-f]+'", text)
    other = json.loads(re.sub(r"adk_tool_call_[0-9a-f]+", "adk_tool_call_0123abcd", text))
    assert fields(cell, other) == []
