"""`stopbench accept`, `show` and `list`."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bench.cli import cli
from bench.golden import read_golden_file

NEW = ('"""Stop at once."""\nfrom bench import Stop, predicate\n\n'
       "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='first')\n")


def test_accept_writes_the_cells_of_a_new_predicate_with_its_header(project: Path) -> None:
    (project / "predicates" / "mine.py").write_text(NEW, encoding="utf-8")
    result = CliRunner().invoke(cli, ["accept", "mine", "--no-entry-points", "--derived", "reviewed by hand",
                                      "--basis", "rule"])
    assert result.exit_code == 0, result.output
    gf = read_golden_file(project / "expected" / "mine.yaml")
    assert gf.derived == "reviewed by hand"
    assert sorted(gf.cells) == ["seed000-talk-only", "seed000-tool-call-with-text", "seed000-tool-tool-answer",
                                "seed000-truncated-max-tokens"]
    after = CliRunner().invoke(cli, ["run", "--no-entry-points"])
    assert "20 cells: 20 match" in after.stderr


def test_accept_refuses_a_new_file_without_a_header(project: Path) -> None:
    (project / "predicates" / "mine.py").write_text(NEW, encoding="utf-8")
    result = CliRunner().invoke(cli, ["accept", "mine", "--no-entry-points"])
    assert result.exit_code == 2
    assert not (project / "expected" / "mine.yaml").exists()


def test_show_steps_through_a_sequence_with_rules(project: Path) -> None:
    result = CliRunner().invoke(cli, ["show", "seed000-tool-call-with-text", "--no-entry-points",
                                      "-p", "seed000_content"])
    assert result.exit_code == 0, result.output
    assert "turn 0: finish=tool_calls (raw 'tool_calls') content='我先打开文件看看'" in result.output
    assert "step 1 (turn 0): stop -> content, ok=true run[read_file]  [content]" in result.output
    assert "golden: match" in result.output


def test_list_names_sequences_and_predicates_with_sources(project: Path) -> None:
    result = CliRunner().invoke(cli, ["list", "--no-entry-points"])
    assert result.exit_code == 0
    assert "sequences (4):" in result.output
    assert "seed000_fixed  [cap 8 -> max_steps, ok=False]" in result.output
