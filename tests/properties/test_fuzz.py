"""The property runner and `stopbench fuzz`: each property catches a loop built to break it, and a
find becomes a loadable constructed sequence (in a temporary folder, never the committed catalogue)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench import fuzz
from bench.catalogue.load import load_catalogue, load_sequence
from bench.cli import cli
from bench.engine.contain import decision_time_limit
from bench.engine.discovery import load_file
from bench.engine.model import Continue, Decision, Sequence, Stop, ToolCall, Turn
from bench.engine.predicate import Predicate, State, predicate
from bench.engine.replay import replay

RULES = {"calls": "tool calls present", "done": "no tool calls", "cap": "cap"}


def _pred(fn: object, name: str = "loop", **kw: object) -> Predicate:
    args: dict[str, object] = {"max_steps": 8, "reasons": ["no_tool_calls"], "rules": RULES}
    args.update(kw)
    return predicate(**args)(fn).named(name, "test")  # type: ignore[arg-type]


def _no_calls_is_success(turn: Turn, state: State) -> Decision:
    """Deliberately wrong: any turn without tool calls is success, even a truncated one."""
    if turn.tool_calls:
        return Continue("calls")
    return Stop("no_tool_calls", ok=True, rule="done")


def _find(pred: Predicate, prop: str, n: int = 150) -> fuzz.Finding:
    found = fuzz.shrink(pred, fuzz.BY_NAME[prop], max_examples=n, seed=0)
    assert found is not None, f"{prop} found nothing wrong with {pred.name}"
    return found


def test_a_predicate_that_raises_breaks_never_crashes_and_nothing_else_claims_it() -> None:
    def decide(turn: Turn, state: State) -> Decision:
        if turn.content is None:
            raise KeyError("content")
        return _no_calls_is_success(turn, state)

    pred = _pred(decide)
    found = _find(pred, "never-crashes")
    assert "KeyError" in found.message and len(found.sequence.turns) == 1
    ex = found.example
    assert fuzz.failures(pred, ex, fuzz.properties("every")).keys() == {"never-crashes"}


def test_an_undeclared_rule_breaks_well_formed() -> None:
    pred = _pred(lambda turn, state: Stop("no_tool_calls", ok=True, rule="made-up"))
    assert "'made-up' is not declared" in _find(pred, "well-formed").message


def test_an_undeclared_stop_reason_breaks_declared_reasons() -> None:
    pred = _pred(lambda turn, state: Stop("because", ok=True, rule="done"))
    assert "'because' is not declared" in _find(pred, "declared-reasons").message


def test_running_a_call_the_turn_did_not_carry_breaks_no_phantom_tools() -> None:
    pred = _pred(lambda turn, state: Continue("calls", run=(len(turn.tool_calls),)))
    found = _find(pred, "no-phantom-tools")
    assert found.message == "step 1: run names call(s) [0], but the turn carries 0 tool call(s)"


@pytest.mark.parametrize("decision", [
    Continue("calls", run=(True,)),                 # a bool is not a call index
    Continue("calls", run=(0, 0)),                  # the same call twice
    Continue("calls", run=(0,), failed=(0,)),       # run and failed at once
    Stop("no_tool_calls", ok=1, rule="done"),       # type: ignore[arg-type]  # ok must be a bool
    Stop("", ok=True, rule="done"),                 # a stop without a reason
    Continue("calls", run=(5,)),                    # a call the turn does not carry
])
def test_fuzzing_and_the_replay_refuse_the_same_decisions(decision: Decision) -> None:
    pred = _pred(lambda turn, state: decision)
    seq = Sequence("s", "t", "constructed", "openai-chat", "test",
                   (Turn("tool_calls", "tool_calls", None, (ToolCall("a", "ls"), ToolCall("b", "ls"))),))
    cell = replay(seq, pred)
    t = fuzz.trace(seq, pred)
    assert cell.outcome == "crashed" and cell.error is not None
    (problems,) = t.problems.values()
    assert cell.error == problems[0], "one validator: the same words in the cell and in the finding"


def test_hidden_state_across_replays_breaks_determinism_and_append_invariance() -> None:
    seen = [0]

    def decide(turn: Turn, state: State) -> Decision:
        seen[0] += 1
        if seen[0] % 2:
            return Continue("calls")
        return Stop("no_tool_calls", ok=True, rule="done")

    pred = _pred(decide)
    assert "differ" in _find(pred, "deterministic").message
    seen[0] = 0
    assert "appended" in _find(pred, "append-invariance").message


def test_a_predicate_that_never_returns_breaks_ends() -> None:
    def decide(turn: Turn, state: State) -> Decision:
        while turn.finish == "length":
            pass
        return _no_calls_is_success(turn, state)

    pred = _pred(decide)
    seq = Sequence("s", "t", "constructed", "openai-chat", "test", (Turn("length", "length"),))
    with decision_time_limit(0.2):
        message = fuzz.BY_NAME["ends"].check(pred, (seq, ()), 200)
    assert message == "the replay did not end: no decision after 0.2 s at step 1"


def test_success_on_a_truncated_turn_breaks_no_false_ok_with_a_one_turn_counterexample() -> None:
    found = _find(_pred(_no_calls_is_success), "no-false-ok")
    (turn,) = found.sequence.turns
    assert turn.finish in ("length", "content_filter", "error") and not turn.tool_calls


def test_dropping_the_calls_of_a_stop_turn_breaks_keeps_calls() -> None:
    def decide(turn: Turn, state: State) -> Decision:
        if turn.finish == "stop":
            return Stop("no_tool_calls", ok=True, rule="done")
        return Continue("calls")

    found = _find(_pred(decide), "keeps-calls")
    (turn,) = found.sequence.turns
    assert turn.finish == "stop" and len(turn.tool_calls) == 1


def test_a_loop_without_a_cap_breaks_within_cap_and_one_without_reasons_breaks_enumerated_reasons() -> None:
    uncapped = _find(_pred(_no_calls_is_success, max_steps=None), "within-cap")
    assert uncapped.message == "declares no cap (max_steps is None)"
    unreasoned = _find(_pred(_no_calls_is_success, reasons=[]), "enumerated-reasons")
    assert unreasoned.message == "enumerates no stop reasons"
    assert uncapped.sequence is None and unreasoned.sequence is None, "a declaration needs no counterexample"


def test_a_loop_that_continues_forever_on_repeat_breaks_within_cap_only_through_its_cap() -> None:
    pred = _pred(lambda turn, state: Continue("calls"), max_steps=3)
    seq = Sequence("s", "t", "constructed", "openai-chat", "test",
                   (Turn("tool_calls", "tool_calls", None, (ToolCall("c", "bash"),)),), then="repeat")
    assert fuzz.BY_NAME["within-cap"].check(pred, (seq, ()), 200) is None
    assert replay(seq, pred).n_steps == 3


# ---------------------------------------------------------------- the command


WRONG = textwrap.dedent('''\
    """Deliberately wrong: any turn without tool calls is success, even a truncated one."""

    from bench import Cap, Continue, Stop, predicate


    @predicate(max_steps=8, cap=Cap(), reasons=["no_tool_calls"],
               rules={"calls": "calls present", "done": "no calls", "cap": "cap 8"})
    def decide(turn, state):
        if turn.tool_calls:
            return Continue("calls")
        return Stop("no_tool_calls", ok=True, rule="done")
''')


def _project(tmp_path: Path, name: str) -> Path:
    (tmp_path / "predicates").mkdir()
    (tmp_path / "predicates" / f"{name}.py").write_text(WRONG, encoding="utf-8")
    (tmp_path / "sequences").mkdir()
    return tmp_path


def _fuzz(*extra: str) -> tuple[int, str]:
    args = ["fuzz", "--no-entry-points", "--max-examples", "40", "--property", "no-false-ok",
            "--property", "ends", *extra]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def test_fuzz_saves_a_loadable_found_sequence_for_a_wrong_loop(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, "wrong"))
    code, output = _fuzz("--save")
    assert code == 0, output  # a finding about a loop not meant to keep the property is not a failure
    found = sorted((tmp_path / "sequences" / "found").glob("*.yaml"))
    assert [p.name for p in found] and all(re.fullmatch(r"found-wrong-no-false-ok-[0-9a-f]{8}\.yaml", p.name)
                                           for p in found), found
    seq = load_sequence(found[0])
    assert seq.kind == "constructed" and seq.id == found[0].stem
    assert "wrong" in seq.source and "no-false-ok" in seq.source
    assert seq.require.ok is False
    cat = load_catalogue(tmp_path / "sequences")
    assert not cat.problems and [s.id for s in cat.sequences] == [seq.id]
    loaded = load_file(tmp_path / "predicates" / "wrong.py")
    assert isinstance(loaded, Predicate)
    cell = replay(seq, loaded)
    assert [v.requirement for v in cell.violations] == ["ok: false"], "the find is judged on every replay"
    report = (tmp_path / "reports" / "fuzz-findings.md").read_text(encoding="utf-8")
    assert "### wrong breaks `no-false-ok`" in report and f"sequences/found/{seq.id}.yaml" in report


def test_fuzz_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, "wrong"))
    _fuzz("--save", "--seed", "7")
    first = (tmp_path / "reports" / "fuzz-findings.md").read_bytes()
    files = sorted(p.name for p in (tmp_path / "sequences" / "found").iterdir())
    _fuzz("--save", "--seed", "7")
    assert (tmp_path / "reports" / "fuzz-findings.md").read_bytes() == first
    assert sorted(p.name for p in (tmp_path / "sequences" / "found").iterdir()) == files


def test_fuzz_fails_when_the_reference_loop_breaks_its_own_property(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, fuzz.REFERENCE))
    code, output = _fuzz()
    assert code == 1
    assert f"FAILS {fuzz.REFERENCE} breaks no-false-ok" in output
    assert not (tmp_path / "sequences" / "found").exists(), "nothing is saved without --save"


def test_fuzz_refuses_an_unknown_property(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, "wrong"))
    result = CliRunner().invoke(cli, ["fuzz", "--no-entry-points", "--property", "nonsense"])
    assert result.exit_code == 2 and "no property named nonsense" in result.output


def test_fuzz_without_any_predicate_is_unusable_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["fuzz", "--no-entry-points", "--predicates", "empty"])
    assert result.exit_code == 2, result.output
    assert result.output == "nothing to fuzz: no predicate under empty\n"
    mistyped = CliRunner().invoke(cli, ["fuzz", "--no-entry-points", "--predicates", "no-such-folder"])
    assert mistyped.exit_code == 2 and mistyped.output == "--predicates no-such-folder: no such folder\n"
    assert not (tmp_path / "reports").exists(), "no report of an empty run"


def test_fuzz_a_predicate_that_hangs_breaks_ends_and_the_run_goes_on(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path, "wrong")
    (project / "predicates" / "spins.py").write_text(WRONG.replace(
        "    if turn.tool_calls:", "    while turn.finish == 'length':\n        pass\n    if turn.tool_calls:"),
        encoding="utf-8")
    monkeypatch.chdir(project)
    # 100 examples: the search must meet a `length` turn before any turn without calls, which 40
    # derandomized examples no longer reach once sequences may be reactive
    code, output = _fuzz("--decision-timeout", "0.3", "--max-examples", "100")
    assert code == 1, output  # `ends` is meant to hold for every predicate
    assert re.search(r"FAILS spins breaks ends: the replay did not end: no decision after 0\.3 s at step \d", output)
    assert "finding wrong breaks no-false-ok" in output, "the other predicate was still fuzzed"


def test_fuzz_save_writes_the_finds_and_the_report_all_or_nothing(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, "wrong"))
    (tmp_path / "reports" / "fuzz-findings.md").mkdir(parents=True)  # a folder where the report should go
    code, output = _fuzz("--save")
    assert code == 2 and "Traceback" not in output and "fuzz-findings.md" in output
    assert not list((tmp_path / "sequences").rglob("*.yaml")), "no saved find without its report"


def test_fuzz_with_a_predicate_that_does_not_load_fails_and_fuzzes_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path, "wrong")
    (project / "predicates" / "broken.py").write_text("def decide(turn, state)\n", encoding="utf-8")
    monkeypatch.chdir(project)
    code, output = _fuzz()
    assert code == 1, output
    assert "BROKEN broken: " in output and "SyntaxError" in output
    assert "finding wrong breaks no-false-ok" in output
    assert "| broken | does not load: " in (project / "reports" / "fuzz-findings.md").read_text(encoding="utf-8")
