"""`stopbench accept`, `show` and `list`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.golden.expected import read_golden_file
from tests.helpers import ROOT

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
    assert 'turn 0: finish=tool_calls (raw "tool_calls") content="我先打开文件看看"' in result.output
    assert "step 1 (turn 0): stop -> content, ok=true run[read_file]  [content]" in result.output
    assert "golden: match (expected/seed000_content.yaml, basis rule)" in result.output


def _show(*args: str, columns: int = 100) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(cli, ["show", "--no-entry-points", *args])


def test_show_cites_each_rule_in_full_wrapped_to_the_terminal(project: Path) -> None:
    (project / "predicates" / "cited.py").write_text(
        '"""Cites at length."""\nfrom bench import Continue, Stop, predicate\n\n'
        "LONG = ' '.join(f'word{i}' for i in range(60))\n\n"
        "@predicate(rules={'calls': 'calls: ' + LONG, 'answer': 'answer: ' + LONG})\n"
        "def decide(turn, state):\n"
        "    return Continue(rule='calls') if turn.tool_calls else Stop('done', ok=True, rule='answer')\n",
        encoding="utf-8")
    result = _show("seed000-tool-tool-answer", "-p", "cited", columns=70)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("  rules:")
    cited = lines[start + 1:start + 1 + next(i for i, line in enumerate(lines[start + 1:])
                                             if not line.startswith("    "))]
    assert len(cited) > 4 and all(len(line) < 70 for line in cited), cited
    text = " ".join(line.strip() for line in cited)
    long = " ".join(f"word{i}" for i in range(60))
    assert text == f"[calls] calls: {long} [answer] answer: {long}"


def test_show_prints_the_golden_difference_of_a_mismatching_cell(project: Path) -> None:
    golden = project / "expected" / "seed000_fixed.yaml"
    golden.write_text(golden.read_text(encoding="utf-8").replace("path: [stop length]", "path: [resend length]"),
                      encoding="utf-8")
    result = _show("seed000-truncated-max-tokens", "-p", "seed000_fixed")
    assert result.exit_code == 0, result.output
    assert ("  golden: MISMATCH with expected/seed000_fixed.yaml (basis rule): step 1 (turn 0) differs\n"
            "    expected: resend length\n"
            "    actual:   stop length -> length, ok=false\n"
            "  stopbench accept seed000_fixed -s seed000-truncated-max-tokens --replace would change:\n"
            "    - path: [resend length]\n"
            "    + path: [stop length]\n") in result.output


def test_show_writes_values_as_the_files_do_not_as_python_reprs(project: Path) -> None:
    shown = ("chat-error-rate-limit", "chat-steer-with-tool-calls", "chat-dropped-calls-reasoning-only",
             "responses-end-turn-false", "chat-finish-null-with-calls")
    for name in shown:
        shutil.copy(ROOT / "sequences" / "constructed" / f"{name}.yaml", project / "sequences")
    for name in ("reference", "finish_only"):
        shutil.copy(ROOT / "predicates" / f"{name}.py", project / "predicates")
    for name in ("seed000-talk-only", "seed000-truncated-max-tokens", *shown):
        result = _show(name)
        assert result.exit_code == 0, result.output
        for leak in (r"\bNone\b", r"\bTrue\b", r"\bFalse\b", r"\('[^']*', '", r"\b(Requirement|ToolCall|Turn)\("):
            assert not re.search(leak, result.output), f"{leak} in the output of show {name}:\n{result.output}"


def test_list_names_sequences_and_predicates_with_sources(project: Path) -> None:
    result = CliRunner().invoke(cli, ["list", "--no-entry-points"])
    assert result.exit_code == 0
    assert "sequences (4):" in result.output
    assert "seed000_fixed  [cap 8 -> max_steps, ok=False]" in result.output


RAISES = ('"""Raise."""\nfrom bench import predicate\n\n'
          "@predicate()\ndef decide(turn, state):\n    raise KeyError('boom')\n")
SEED_PREDICATES = ("seed000_content", "seed000_finish", "seed000_fixed", "seed000_tool_calls")


def accept(*args: str) -> Result:
    return CliRunner().invoke(cli, ["accept", "--no-entry-points", *args])


def _golden_bytes(project: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((project / "expected").iterdir())}


def test_a_no_op_replace_leaves_every_golden_file_byte_identical(project: Path) -> None:
    before = _golden_bytes(project)
    result = accept(*SEED_PREDICATES, "--replace")
    assert result.exit_code == 0, result.output
    assert _golden_bytes(project) == before
    assert "seed000_fixed: expected/seed000_fixed.yaml unchanged" in result.output


def test_an_unknown_sequence_is_one_line_and_exit_2(project: Path) -> None:
    before = _golden_bytes(project)
    result = accept("seed000_fixed", "-s", "NO-SUCH-SEQUENCE")
    assert result.exit_code == 2
    assert result.stderr == ("--sequence: no sequence NO-SUCH-SEQUENCE in sequences (stopbench list shows the "
                             "ids)\n")
    assert _golden_bytes(project) == before


def test_a_crashed_cell_is_not_accepted_and_exits_1(project: Path) -> None:
    (project / "predicates" / "raiser.py").write_text(RAISES, encoding="utf-8")
    result = accept("raiser", "--derived", "by hand", "--basis", "rule")
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if "crashed, not accepted" in line]
    assert len(lines) == 4 and lines[0].startswith("seed000-talk-only x raiser: crashed, not accepted: ")
    assert "Traceback" not in result.output
    assert read_golden_file(project / "expected" / "raiser.yaml").cells == {}


def test_new_cells_need_a_basis(project: Path) -> None:
    (project / "predicates" / "mine.py").write_text(NEW, encoding="utf-8")
    result = accept("mine", "--derived", "by hand")
    assert result.exit_code == 2
    assert result.stderr.startswith("expected/mine.yaml: basis: 4 new cell(s) need one (seed000-talk-only, ")
    assert not (project / "expected" / "mine.yaml").exists()


def test_derived_does_not_replace_a_header_without_replace_header(project: Path) -> None:
    before = _golden_bytes(project)
    result = accept("seed000_fixed", "--derived", "a new story")
    assert result.exit_code == 2
    assert "expected/seed000_fixed.yaml: derived: the file already has a different header; pass " \
           "--replace-header" in result.stderr
    assert _golden_bytes(project) == before
    result = accept("seed000_fixed", "--derived", "a new story", "--replace-header")
    assert result.exit_code == 0, result.output
    assert read_golden_file(project / "expected" / "seed000_fixed.yaml").derived == "a new story"


def test_prune_removes_the_expectations_of_sequences_that_are_gone(project: Path) -> None:
    result = accept("seed000_fixed", "--prune")
    assert result.exit_code == 0, result.output
    gf = read_golden_file(project / "expected" / "seed000_fixed.yaml")
    assert sorted(gf.cells) == ["seed000-talk-only", "seed000-tool-call-with-text", "seed000-tool-tool-answer",
                                "seed000-truncated-max-tokens"]
    assert "seed000_fixed: pruned chat-tool-rounds (no such sequence)" in result.output


BAD_GOLDEN = {
    "non-UTF-8": (b"predicate: seed000_fixed\nderived: caf\xe9\n", "not UTF-8 text: line 2, column 13: byte 0xe9"),
    "unhashable key": (b"predicate: seed000_fixed\nderived: x\ncovers: {count: 0, sequences: []}\n"
                       b"cells:\n  {a: 1}: x\n",
                       "not valid YAML: line 5, column 3: a mapping key must be a plain value"),
    "alias bomb": (b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                   b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                   b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                   b"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
                   "not valid YAML: line 2, column 8: alias *a: aliases are not allowed here"),
}


@pytest.mark.parametrize("command", ["run", "accept"])
@pytest.mark.parametrize("kind", sorted(BAD_GOLDEN))
def test_an_unusable_golden_file_is_one_line_and_exit_2(project: Path, command: str, kind: str) -> None:
    content, message = BAD_GOLDEN[kind]
    (project / "expected" / "seed000_fixed.yaml").write_bytes(content)
    args = ["seed000_fixed", "--replace"] if command == "accept" else []
    result = CliRunner().invoke(cli, [command, "--no-entry-points", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"expected/seed000_fixed.yaml: {message}" in result.stderr
    assert (project / "expected" / "seed000_fixed.yaml").read_bytes() == content


MUTATES = ('"""Changes the turn it is handed."""\nfrom bench import Stop, predicate\n\n'
           "@predicate()\ndef decide(turn, state):\n"
           "    object.__setattr__(turn, 'content', '')\n    object.__setattr__(turn, 'tool_calls', ())\n"
           "    return Stop('done', ok=True, rule='first')\n")


def test_a_predicate_that_changes_a_turn_cannot_change_what_accept_writes_for_another(project: Path) -> None:
    (project / "predicates" / "mutator.py").write_text(MUTATES, encoding="utf-8")
    assert accept("mutator", "--derived", "by hand").exit_code == 1  # its cells crash: an empty file
    before = _golden_bytes(project)
    result = accept("mutator", "seed000_content", "--replace", "--basis", "rule")
    assert result.exit_code == 1, result.output
    assert "seed000-talk-only x mutator: crashed, not accepted: " in result.stderr
    assert "seed000_content: expected/seed000_content.yaml unchanged" in result.output
    assert _golden_bytes(project) == before
