"""Rule coverage (bench.report.coverage): which declared rules fire, and the shipped catalogue's completeness."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bench import Continue, Stop, predicate
from bench.catalogue.load import load_catalogue
from bench.engine.discovery import Broken, discover
from bench.engine.model import Decision, Turn
from bench.engine.predicate import Predicate, State
from bench.engine.replay import replay
from bench.report.coverage import markdown_section, rule_coverage, summary_line
from tests.helpers import ROOT, answer, seq, tools


def _pred(unreachable: dict[str, str] | None = None) -> Predicate:
    @predicate(max_steps=3, reasons=["done", "filtered"],
               rules={"calls": "run the calls", "done": "no calls", "filter": "a filtered turn"},
               unreachable=unreachable)
    def decide(turn: Turn, state: State) -> Decision:
        if turn.finish == "content_filter":
            return Stop("filtered", ok=False, rule="filter")
        if turn.tool_calls:
            return Continue("calls")
        return Stop("done", ok=True, rule="done")

    return decide.named("toy", "test")


def test_a_rule_counts_as_fired_when_any_step_of_any_cell_uses_it() -> None:
    pred = _pred()
    cells = [replay(seq(tools("a"), answer(), sid="one"), pred),
             replay(seq(tools("a"), tools("b"), answer(), sid="two"), pred)]
    [cov] = rule_coverage([pred], cells)
    assert cov.fired == (("calls", 2, "one"), ("done", 2, "one"))
    assert cov.never == ("cap", "filter")
    assert not cov.complete


def test_the_cap_rule_fires_only_when_the_loop_hits_its_cap() -> None:
    pred = _pred()
    capped = replay(seq(tools("a"), then="repeat", sid="loop"), pred)
    assert capped.steps[-1].decision.rule == "cap"
    [cov] = rule_coverage([pred], [capped])
    assert [r for r, _, _ in cov.fired] == ["calls", "cap"]


def test_a_declared_unreachable_rule_is_listed_apart_and_is_not_a_gap() -> None:
    pred = _pred(unreachable={"filter": "no turn is filtered here", "cap": "never three steps"})
    [cov] = rule_coverage([pred], [replay(seq(answer(), sid="one"), pred)])
    assert cov.never == ("calls",)
    assert cov.unreachable == (("cap", "never three steps"), ("filter", "no turn is filtered here"))
    assert cov.problems() == ["toy: rule 'calls' fires on no cell and is not declared unreachable"]


def test_a_declared_unreachable_rule_that_fires_is_a_problem() -> None:
    # @predicate refuses an unknown id; a Predicate built directly (an entry point) is not checked
    pred = dataclasses.replace(_pred(), unreachable={"done": "wrong on purpose", "nosuch": "not a rule"})
    [cov] = rule_coverage([pred], [replay(seq(answer(), sid="one"), pred)])
    assert cov.unreachable_fired == ("done",)
    assert cov.unknown_unreachable == ("nosuch",)
    assert "toy: rule 'done' is declared unreachable but fires" in cov.problems()
    assert "toy: unreachable names 'nosuch', which is not a declared rule" in cov.problems()


def test_cells_of_other_predicates_do_not_count() -> None:
    pred, other = _pred(), _pred().named("other", "test")
    [cov] = rule_coverage([pred], [replay(seq(answer(), sid="one"), other)])
    assert cov.fired == ()


def test_summary_line_names_the_count_and_the_rules_that_never_fire() -> None:
    pred = _pred(unreachable={"cap": "never three steps"})
    [cov] = rule_coverage([pred], [replay(seq(answer(), sid="one"), pred)])
    assert summary_line(cov) == "toy 1/4 rules fire; never: calls, filter; declared unreachable: cap"


def test_markdown_section_has_a_row_per_predicate_and_each_unreachable_reason() -> None:
    pred = _pred(unreachable={"cap": "never\n  three steps"})
    covs = rule_coverage([pred], [replay(seq(answer(), sid="one"), pred)])
    text = markdown_section(covs)
    assert "| toy | 4 | 1 | `calls`, `filter` | `cap` |" in text.splitlines()
    assert "- toy `cap`: never three steps" in text.splitlines()


# Rules that can fire but have no sequence yet, each with the reason; remove an entry when its rule
# fires. Empty: chat-tool-call-blank-name and chat-tool-args-json-string reach the last three
# (hermes tools-mixed-invalid and invalid-tool-name, learn_claude_code_s01_openai bad-args-crash).
PENDING: dict[tuple[str, str], str] = {
    ("claude_code", "overloaded-retry"): "no sequence answers 529 (Anthropic overloaded_error) yet",
    ("claude_code", "not-found-retry"): "no sequence answers 404 yet",
}


def test_every_rule_of_every_shipped_predicate_fires_on_the_catalogue_or_is_declared_unreachable() -> None:
    catalogue = load_catalogue(ROOT / "sequences")
    assert not catalogue.problems
    preds = [p for p in discover(ROOT / "predicates", entry_points_too=False) if not isinstance(p, Broken)]
    assert len(preds) >= 14
    cells = [replay(s, p, judged=False) for s in catalogue.sequences for p in preds]
    coverage = rule_coverage(preds, cells)
    gaps = {(c.predicate, rule) for c in coverage for rule in c.never}
    assert gaps == set(PENDING), "a rule fires nowhere (add a sequence), or a PENDING rule now fires (remove it)"
    assert [line for c in coverage for line in c.problems() if "fires on no cell" not in line] == []


def test_the_hermes_compression_budget_is_reached_by_the_catalogue() -> None:
    catalogue = load_catalogue(ROOT / "sequences")
    [hermes] = [p for p in discover(ROOT / "predicates", entry_points_too=False)
                if isinstance(p, Predicate) and p.name == "hermes"]
    [cov] = rule_coverage([hermes], [replay(s, hermes, judged=False) for s in catalogue.sequences])
    fired = {r for r, _, _ in cov.fired}
    assert {"context-compress", "context-exhausted"} <= fired


def test_the_decision_table_report_carries_the_rule_coverage_section(tmp_path: Path) -> None:
    from bench.golden.run import run
    from bench.report.write import write_reports

    pred = _pred(unreachable={"filter": "no turn is filtered here"})
    sequence = seq(tools("a"), answer(), sid="one")
    results = list(run([sequence], [pred]))
    write_reports(tmp_path, results, ["one"], ["toy"], catalogue=[sequence], loaded=[pred])
    text = (tmp_path / "decision-table.md").read_text(encoding="utf-8")
    assert "## Rule coverage" in text
    assert "| toy | 4 | 2 | `cap` | `filter` |" in text.splitlines()


def test_stopbench_run_prints_rule_coverage_before_the_verdict() -> None:
    from click.testing import CliRunner

    from bench.cli.run import run_cmd

    result = CliRunner().invoke(run_cmd, [
        "--sequences", str(ROOT / "sequences" / "seed000"), "--predicates", str(ROOT / "predicates"),
        "--expected", str(ROOT / "expected"), "--no-reports", "--no-entry-points", "-p", "seed000_fixed"])
    lines = result.output.splitlines()
    assert "rule coverage:" in lines
    at = lines.index("rule coverage:")
    # seed 000's four sequences reach three of the fixed loop's rules: not its cap, not the filter
    assert lines[at + 1] == "  seed000_fixed 3/5 rules fire; never: cap, content-filter"
    assert lines[at + 2].startswith("4 cells: ")
