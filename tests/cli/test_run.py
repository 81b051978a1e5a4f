"""`stopbench run`: exit statuses, messages for bad input, new columns, JSON lines, determinism."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner, Result

from bench.cli import cli

ARGS = ["--no-entry-points"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["run", *ARGS, *args])


def test_the_seed_catalogue_matches_its_golden_files(project: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.stderr
    assert "16 cells: 16 match, 0 mismatch, 0 unreviewed, 0 crashed" in result.stderr


def test_a_new_predicate_file_becomes_a_column_of_unreviewed_cells(project: Path) -> None:
    (project / "predicates" / "mine.py").write_text(
        '"""Stop at once."""\nfrom bench import Stop, predicate\n\n'
        "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='first')\n",
        encoding="utf-8")
    result = run()
    assert result.exit_code == 0
    assert "UNREVIEWED: 4 cell(s)" in result.stderr
    assert "  mine: seed000-talk-only, seed000-tool-call-with-text" in result.stderr
    table = (project / "reports" / "decision-table.md").read_text(encoding="utf-8")
    header = next(line for line in table.splitlines() if line.startswith("| sequence"))
    assert "| mine " in header
    assert "✓stop@1 ?" in table


def test_a_bad_sequence_file_is_one_line_with_file_and_field_and_exit_2(project: Path) -> None:
    bad = project / "sequences" / "x.yaml"
    bad.write_text("title: t\nkind: constructed\ndialect: openai-chat\nsource: s\nturns:\n"
                   "  - finish: stop\n  - finish: stop\n  - finish: finished\n", encoding="utf-8")
    result = run()
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("bad sequence:")]
    assert lines == ["bad sequence: sequences/x.yaml: turns[2].finish: expected one of 'stop', 'tool_calls', "
                     "'length', 'content_filter', 'error' or 'unknown', got 'finished'"]
    assert "4 sequence file(s) fine, 1 file(s) unusable" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_a_predicate_file_that_fails_to_import_gives_crashed_cells_the_run_goes_on_and_exits_1(
        project: Path) -> None:
    (project / "predicates" / "broken.py").write_text("import nonexistent_module_xyz\n", encoding="utf-8")
    result = run("--json")
    assert result.exit_code == 1
    assert "broken predicate: predicates/broken.py: ModuleNotFoundError" in result.stderr
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    broken = [r for r in records if r["predicate"] == "broken"]
    assert len(broken) == 4 and all(r["outcome"] == "crashed" for r in broken)
    assert sum(r["golden"] == "match" for r in records) == 16


def test_a_predicate_that_raises_is_crashed_and_named_and_exits_1(project: Path) -> None:
    (project / "predicates" / "raiser.py").write_text(
        "from bench import predicate\n\n@predicate()\ndef decide(turn, state):\n"
        "    return turn.tool_calls[0].name.missing\n", encoding="utf-8")
    result = run()
    assert result.exit_code == 1
    assert "CRASHED seed000-talk-only x raiser: step 1: IndexError" in result.stderr
    assert "CRASHED seed000-tool-tool-answer x raiser: step 1: AttributeError" in result.stderr


def test_a_golden_mismatch_exits_1_and_names_the_step(project: Path) -> None:
    golden = project / "expected" / "seed000_fixed.yaml"
    text = golden.read_text(encoding="utf-8")
    golden.write_text(text.replace("path: [stop length]", "path: [resend length]"), encoding="utf-8")
    result = run()
    assert result.exit_code == 1
    assert ("MISMATCH seed000-truncated-max-tokens x seed000_fixed: step 1 (turn 0) differs\n"
            "    expected: resend length\n"
            "    actual:   stop length -> length, ok=false") in result.stderr


def test_json_lines_carry_the_documented_fields(project: Path) -> None:
    result = run("--json")
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 16
    r = next(r for r in records if r["sequence"] == "seed000-tool-tool-answer" and r["predicate"] == "seed000_fixed")
    assert {"sequence", "predicate", "outcome", "reason", "ok", "steps", "tools_run", "decisions"} <= set(r)
    assert r["tools_run"] == ["read_file", "count_lines"]
    assert r["decisions"][0] == {"step": 1, "turn": 0, "action": "continue", "reason": None, "ok": None,
                                 "rule": "calls", "run": ["read_file"], "failed": [], "changes": None}


def test_reports_are_byte_identical_across_runs(project: Path) -> None:
    run()
    first = {p.name: p.read_bytes() for p in (project / "reports").iterdir()}
    run()
    second = {p.name: p.read_bytes() for p in (project / "reports").iterdir()}
    assert sorted(first) == ["cells.csv", "decision-table.md", "index.html"]
    assert first == second


def test_a_malformed_golden_file_is_unusable_input(project: Path) -> None:
    (project / "expected" / "seed000_fixed.yaml").write_text("predicate: seed000_fixed\n", encoding="utf-8")
    result = run()
    assert result.exit_code == 2
    assert "bad golden file: expected/seed000_fixed.yaml: derived: required, but missing" in result.stderr
