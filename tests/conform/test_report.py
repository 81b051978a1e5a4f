"""reports/conformance.md and the explained-difference rule, with a fake driver (the bench's own Python)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench import Continue, Stop, predicate
from bench.cli import conform as conform_cli
from bench.conform.report import (
    conformance_markdown,
    first_step_difference,
    make_record,
    read_record,
    status_of,
    steps_json,
    unexplained,
    write_record,
)
from bench.conform.runner import ConformResult, Driver, compare_cells, run_conformance
from bench.engine.model import Decision, RequestChanges, Turn
from bench.engine.predicate import Predicate, State
from bench.engine.replay import replay
from bench.report.labels import label
from tests.helpers import call_then_answer_yaml
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
FAKE_SCRIPT = str(ROOT / "tests" / "serve" / "fake_driver.py")
FAKE = Driver("fake", "fakeport", FAKE_SCRIPT, "openai-chat", "pip install nothing")
OTHER = Driver("other", "otherport", FAKE_SCRIPT, "openai-chat", "pip install other==1.0")


@predicate(reasons=["done"], rules={"calls": "runs every call", "answer": "no calls"})
def like_fake(turn: Turn, state: State) -> Decision:
    if not turn.tool_calls:
        return Stop("done", ok=True, rule="answer")
    return Continue("calls")


@predicate(reasons=["done"], rules={"first": "stops at once"})
def stops_at_once(turn: Turn, state: State) -> Decision:
    return Stop("done", ok=True, rule="first")


TWO = make_sequence([{"finish": "tool_calls", "content": None,
                      "tool_calls": [{"id": "a", "name": "read_file", "arguments": '{"path": "x"}'}]},
                     {"finish": "stop", "content": "answer"}], sid="two-steps")
ONE = make_sequence([{"finish": "stop", "content": "only"}], sid="one-step")


@pytest.fixture(scope="module")
def driven_once() -> list[ConformResult]:
    """The fake loop driven once on TWO and ONE, shared by the tests that only compare it with ports."""
    return run_conformance(FAKE, [TWO, ONE], sys.executable, root=ROOT, timeout=60)


def against(results: list[ConformResult], port: Predicate, only: tuple[str, ...] = ()) -> list[ConformResult]:
    """`results` compared with `port` as run_conformance compares them (the port's replayed cell, the
    first difference); with `only`, the results of those sequences."""
    seqs = {s.id: s for s in (TWO, ONE)}
    out = []
    for res in results:
        if only and res.sequence not in only:
            continue
        cell = replay(seqs[res.sequence], port)
        out.append(dataclasses.replace(res, port=cell, difference=compare_cells(cell, res.observed)))
    return out


def test_each_loop_has_its_port_column_its_original_column_and_a_status() -> None:
    results = run_conformance(FAKE, [TWO, ONE], sys.executable, root=ROOT, port=like_fake, timeout=60)
    md = conformance_markdown(["two-steps", "one-step"], [FAKE], {"fake": make_record(FAKE, results, {})},
                              {"fake": {}})
    header = next(line for line in md.splitlines() if line.startswith("| sequence"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["sequence", "fakeport", "fakeport@original",
                                                                "fake status"]
    row = next(line for line in md.splitlines() if line.startswith("| two-steps"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == label(replay(TWO, like_fake))
    assert cells[2].startswith("stop:done@2 ok")  # the original's final stop shows no tools (unseen)
    assert cells[3] == "same"


def test_a_difference_shows_the_first_differing_step_with_both_sides_and_fails_the_run(
        driven_once: list[ConformResult]) -> None:
    [res] = against(driven_once, stops_at_once, ("two-steps",))
    md = conformance_markdown(["two-steps"], [FAKE], {"fake": make_record(FAKE, [res], {})}, {"fake": {}})
    row = next(line for line in md.splitlines() if line.startswith("| two-steps"))
    assert "differs: step 1: port stop [first]" in row and "observed continue" in row
    assert unexplained([res], {}) == [res]
    summary = next(line for line in md.splitlines() if line.startswith("| fake "))
    # loop, port, pin, state, same, explained, differs, not driven, not run, driver failed, reused, run again
    assert [c.strip() for c in summary.strip("|").split("|")][4:] == ["0", "0", "1", "0", "0", "0", "0", "0"]


def test_a_difference_the_port_explains_is_reported_as_explained_with_its_reason(
        driven_once: list[ConformResult]) -> None:
    [res] = against(driven_once, stops_at_once, ("two-steps",))
    why = {"two-steps": "the original runs the tools first: loop.py L10-12"}
    assert unexplained([res], why) == []
    md = conformance_markdown(["two-steps"], [FAKE], {"fake": make_record(FAKE, [res], {})}, {"fake": why})
    row = next(line for line in md.splitlines() if line.startswith("| two-steps"))
    assert "explained: step 1" in row
    assert "loop.py L10-12" in md.split("## Differences", 1)[1]


def test_an_explanation_for_another_sequence_explains_nothing_and_is_listed(driven_once: list[ConformResult]) -> None:
    results = against(driven_once, stops_at_once)
    [two] = [r for r in results if r.sequence == "two-steps"]
    assert unexplained(results, {"one-step": "about another sequence"}) == [two]
    md = conformance_markdown(["two-steps", "one-step"], [FAKE], {"fake": make_record(FAKE, results, {})},
                              {"fake": {"seq-gone": "an old reason"}})
    assert "shows no difference (not run, or since fixed): `fake` seq-gone." in md


def test_a_failed_driver_is_never_explained() -> None:
    broken = Driver("fake", "fakeport", str(ROOT / "tests" / "serve" / "no_such_driver.py"), "openai-chat", "x")
    [res] = run_conformance(broken, [ONE], sys.executable, root=ROOT, port=like_fake, timeout=60)
    assert unexplained([res], {"one-step": "whatever"}) == [res]
    rec = make_record(broken, [res], {})
    assert status_of(rec["sequences"]["one-step"], {"one-step": "whatever"}, "one-step") == "differs"


def test_sequences_and_loops_that_were_not_run_say_why(driven_once: list[ConformResult]) -> None:
    results = against(driven_once, like_fake, ("one-step",))
    rec = make_record(FAKE, results, {"two-steps": "the loop does not speak its wire"})
    md = conformance_markdown(["two-steps", "one-step"], [FAKE, OTHER], {"fake": rec, "other": None},
                              {"fake": {}, "other": {}}, {"other": "not installed: no Python at /x"})
    row = next(line for line in md.splitlines() if line.startswith("| two-steps"))
    assert "not run (the loop does not speak its wire)" in row
    assert "not run (no record)" in row
    summary = next(line for line in md.splitlines() if line.startswith("| other "))
    assert "pip install other==1.0" in summary and "not run (not installed: no Python at /x)" in summary


def test_a_partial_run_keeps_the_recorded_rows_of_the_other_sequences(
        tmp_path: Path, driven_once: list[ConformResult]) -> None:
    first = against(driven_once, stops_at_once)
    write_record(tmp_path, make_record(FAKE, first, {}))
    again = against(driven_once, like_fake, ("one-step",))
    rec = make_record(FAKE, again, {}, read_record(tmp_path, "fake"), keep=["two-steps"])
    assert rec["sequences"]["two-steps"] == make_record(FAKE, first, {})["sequences"]["two-steps"]
    assert "difference" not in rec["sequences"]["one-step"]


def test_the_report_is_the_same_text_for_the_same_records(tmp_path: Path) -> None:
    results = run_conformance(FAKE, [TWO, ONE], sys.executable, root=ROOT, port=stops_at_once, timeout=60)
    write_record(tmp_path, make_record(FAKE, results, {}))
    again = run_conformance(FAKE, [TWO, ONE], sys.executable, root=ROOT, port=stops_at_once, timeout=60)
    assert make_record(FAKE, again, {}) == read_record(tmp_path, "fake")
    args = (["two-steps", "one-step"], [FAKE], {"fake": read_record(tmp_path, "fake")}, {"fake": {}})
    assert conformance_markdown(*args) == conformance_markdown(*args)


def test_a_record_keeps_the_original_loops_observed_steps_and_reads_back(
        tmp_path: Path, driven_once: list[ConformResult]) -> None:
    [res] = against(driven_once, stops_at_once, ("two-steps",))
    write_record(tmp_path, make_record(FAKE, [res], {}))
    rec = read_record(tmp_path, "fake")
    assert rec is not None
    steps = rec["sequences"]["two-steps"]["original_steps"]
    # the fake loop runs the read_file call of turn 0, then stops on turn 1's answer
    assert [(s["turn"], s["action"], s["run"], s["failed"]) for s in steps] == [
        (0, "continue", ["read_file"], []), (1, "stop", [], [])]
    assert steps[1]["ok"] is True
    # the port stops at once: the steps differ at the first one
    assert first_step_difference(steps_json(replay(TWO, stops_at_once)), steps) == 0
    assert first_step_difference(steps_json(replay(TWO, like_fake)), steps) is None


def test_the_first_step_difference_follows_the_conformance_comparison() -> None:
    def step(turn: int, action: str, run: list[str] | None = None) -> dict[str, object]:
        return {"turn": turn, "action": action, "run": run or [], "failed": []}

    original = [step(0, "continue", ["a"]), step(1, "stop")]
    # the port's final stop is compared by turn and action only (a server cannot see its tools)
    assert first_step_difference([step(0, "continue", ["a"]), step(1, "stop", ["b"])], original) is None
    assert first_step_difference([step(0, "continue", ["b"]), step(1, "stop")], original) == 0
    assert first_step_difference([step(0, "continue", ["a"]), step(1, "continue"), step(2, "stop")], original) == 1
    assert first_step_difference([step(0, "continue", ["a"])], original) == 1


def test_a_record_written_before_steps_were_kept_still_loads(tmp_path: Path) -> None:
    old = {"version": 1, "driver": "fake", "port": "fakeport", "install": "pip install nothing",
           "sequences": {"two-steps": {"port": "stop:done@2 ok [read_file]", "original": "stop:done@2 ok []"}}}
    write_record(tmp_path, old)
    assert read_record(tmp_path, "fake") == old
    md = conformance_markdown(["two-steps"], [FAKE], {"fake": read_record(tmp_path, "fake")}, {"fake": {}})
    assert "| two-steps " in md and "same" in md


PORT_FILE = '''"""A port that stops at once."""
from bench import Stop, predicate

CONFORMANCE_EXPLAINED = {EXPLAINED}


@predicate(reasons=["done"], rules={{"first": "stops at once"}}, explained=CONFORMANCE_EXPLAINED)
def decide(turn, state):
    return Stop("done", ok=True, rule="first")
'''

SEQ_YAML = call_then_answer_yaml("two steps", "read_file", '{"path": "x"}', "answer")


@pytest.mark.parametrize(("explained", "code"), [("{}", 1), ('{"two-steps": "why, loop.py L1-2"}', 0)])
def test_stopbench_conform_exits_0_only_when_every_difference_is_explained(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explained: str, code: int) -> None:
    (tmp_path / "predicates").mkdir()
    port = f"fakeport_{code}"
    (tmp_path / "predicates" / f"{port}.py").write_text(PORT_FILE.format(EXPLAINED=explained), encoding="utf-8")
    (tmp_path / "sequences").mkdir()
    (tmp_path / "sequences" / "two-steps.yaml").write_text(SEQ_YAML, encoding="utf-8")
    monkeypatch.setattr(conform_cli, "DRIVERS", {"fake": Driver("fake", port, FAKE_SCRIPT, "openai-chat", "x")})
    out = CliRunner().invoke(conform_cli.conform_cmd, [
        "fake", "--python", sys.executable, "--sequences", str(tmp_path / "sequences"),
        "--predicates", str(tmp_path / "predicates"), "--reports", str(tmp_path / "reports")])
    assert out.exit_code == code, out.output
    md = (tmp_path / "reports" / "conformance.md").read_text(encoding="utf-8")
    status = "explained: step 1" if code == 0 else "differs: step 1"
    assert status in next(line for line in md.splitlines() if line.startswith("| two-steps"))


@predicate(reasons=["done"], rules={"calls": "runs every call, raising max_tokens", "answer": "no calls"})
def boosts_max_tokens(turn: Turn, state: State) -> Decision:
    if not turn.tool_calls:
        return Stop("done", ok=True, rule="answer")
    return Continue("calls", changes=RequestChanges(max_tokens=9999))


def test_a_request_change_the_original_does_not_make_is_a_difference(driven_once: list[ConformResult]) -> None:
    [res] = against(driven_once, boosts_max_tokens, ("two-steps",))
    assert res.difference is not None
    assert res.difference.startswith("step 1: port continue +max_tokens=9999 [calls]")
    assert "observed continue run=" in res.difference
    assert res.port is not None and steps_json(res.port)[0]["changes"] == {"max_tokens": 9999}
    assert "changes" not in steps_json(res.observed)[0]


def test_a_case_the_driver_cannot_produce_is_not_driven_not_explained() -> None:
    why = {"two-steps": "the driver cannot inject the steer"}
    results = run_conformance(FAKE, [TWO, ONE], sys.executable, root=ROOT, port=like_fake, timeout=60,
                              not_driven=why)
    assert [r.sequence for r in results] == ["one-step"]
    rec = make_record(FAKE, results, {}, not_driven=why)
    assert rec["sequences"]["two-steps"] == {"not_driven": "the driver cannot inject the steer"}
    assert status_of(rec["sequences"]["two-steps"], {"two-steps": "an explanation too"}, "two-steps") == "not driven"
    md = conformance_markdown(["two-steps", "one-step"], [FAKE], {"fake": rec}, {"fake": {}})
    row = next(line for line in md.splitlines() if line.startswith("| two-steps"))
    assert "not driven (the driver cannot inject the steer)" in row
    summary = next(line for line in md.splitlines() if line.startswith("| fake "))
    # same, explained, differs, not driven, not run, driver failed, reused, run again after a timeout
    assert [c.strip() for c in summary.strip("|").split("|")][4:] == ["1", "0", "0", "1", "0", "0", "0", "0"]
