"""Exit statuses of `stopbench run` as a new user meets them, and predicates that misbehave.

Every misbehaving predicate (raises, exits, hangs, changes the turn it is handed, cannot be
imported, declares itself wrongly) gets crashed cells with a one-line reason, the other predicates'
cells are untouched (the seed catalogue's 16 cells still match), and the run exits 1. A folder
given that is unusable is one line and exit 2, and leaves reports/ as it was.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.golden.expected import load_golden
from tests.helpers import ctrl_c_as_in_a_terminal

SEED_SEQUENCES = ["seed000-talk-only", "seed000-tool-call-with-text", "seed000-tool-tool-answer",
                  "seed000-truncated-max-tokens"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["run", "--no-entry-points", *args])


def header(decide_body: str, module: str = "") -> str:
    return ("from bench import Continue, Stop, predicate\nimport sys, time\n" + module +
            "\n@predicate()\ndef decide(turn, state):\n" + decide_body + "\n")


MISBEHAVING = {
    "raises": (header("    raise RuntimeError('boom')"), "step 1: RuntimeError: boom"),
    "exits_in_decide": (header("    sys.exit(0)"), "step 1: called sys.exit(0)"),
    "exits_at_import": ("import sys\nsys.exit(0)\n", "predicate did not load: called sys.exit(0) at import"),
    "syntax_error": ("def decide(:\n", "predicate did not load: SyntaxError"),
    "missing_import": ("import no_such_module_for_stopbench\n",
                       "predicate did not load: ModuleNotFoundError: No module named 'no_such_module_for_stopbench'"),
    "loops_forever": (header("    while True:\n        pass"), "no decision after 0.5 s at step 1"),
    "sleeps": (header("    time.sleep(30)\n    return Stop('x', ok=True, rule='r')"),
               "no decision after 0.5 s at step 1"),
    "swallows_exceptions": (header("    while True:\n        try:\n            time.sleep(30)\n"
                                   "        except Exception:\n            pass"),
                            "no decision after 0.5 s at step 1"),
    "hangs_at_import": ("import time\ntime.sleep(30)\n",
                        "predicate did not load: did not finish importing after 0.5 s"),
    "raises_keyboard_interrupt": (header("    raise KeyboardInterrupt"), "step 1: raised KeyboardInterrupt"),
    "bad_declaration": ("from bench import Stop, predicate\n\n@predicate(max_steps=0)\n"
                        "def decide(turn, state):\n    return Stop('x', ok=True, rule='r')\n",
                        "predicate did not load: DeclarationError: @predicate: max_steps must be a positive "
                        "whole number or None, not 0 (culprit.py:3)"),
    "mutates_the_turn": (header("    object.__setattr__(turn, 'finish', 'unknown')\n"
                                "    return Stop('x', ok=True, rule='r')"),
                         "changed what the bench handed it: turn 0 finish: "),
}


@pytest.mark.parametrize("case", sorted(MISBEHAVING))
def test_a_misbehaving_predicate_crashes_only_its_own_cells_and_the_run_exits_1(project: Path, case: str) -> None:
    source, message = MISBEHAVING[case]
    (project / "predicates" / "culprit.py").write_text(source, encoding="utf-8")
    started = time.monotonic()
    result = run("--json", "--decision-timeout", "0.5")
    assert result.exit_code == 1, result.stderr
    assert "Traceback" not in result.stderr
    records = [orjson.loads(line) for line in result.stdout.splitlines()]
    culprit = {r["sequence"]: r for r in records if r["predicate"] == "culprit"}
    assert sorted(culprit) == SEED_SEQUENCES
    for r in culprit.values():
        assert r["outcome"] == "crashed"
        assert message in r["error"], r["error"]
    others = [r for r in records if r["predicate"] != "culprit"]
    assert len(others) == 16 and all(r["golden"] == "match" for r in others)
    assert "16 match, 0 mismatch, 4 unreviewed, 4 crashed" in result.stderr
    assert time.monotonic() - started < 20  # four hung cells cost about four limits, not 30 s each


def test_a_turn_changed_by_one_predicate_is_seen_untouched_by_the_next(project: Path) -> None:
    # "aaa_" sorts before the seed000 predicates, so they run after it on every sequence.
    (project / "predicates" / "aaa_mutator.py").write_text(
        header("    object.__setattr__(turn, 'tool_calls', ())\n    return Stop('x', ok=True, rule='r')"),
        encoding="utf-8")
    result = run()
    assert result.exit_code == 1
    # Only the two sequences whose first turn carries calls are changed: those two cells crash.
    assert "16 match, 0 mismatch, 4 unreviewed, 2 crashed" in result.stderr
    assert "CRASHED seed000-tool-tool-answer x aaa_mutator: changed what the bench handed it: turn 0 tool_calls" \
        in result.stderr


def test_unreviewed_cells_fail_only_under_strict(project: Path) -> None:
    (project / "predicates" / "mine.py").write_text(header("    return Stop('x', ok=True, rule='r')"),
                                                     encoding="utf-8")
    assert run().exit_code == 0
    strict = run("--strict")
    assert strict.exit_code == 1
    assert "4 unreviewed" in strict.stderr


def test_requirement_violations_fail_only_with_fail_on_violations(project: Path) -> None:
    plain = run()
    assert plain.exit_code == 0
    assert "requirement violation(s)" in plain.stderr and " 0 requirement violation(s)" not in plain.stderr
    assert run("--fail-on-violations").exit_code == 1


@pytest.mark.parametrize(("option", "make", "message"), [
    ("--sequences", None, "--sequences {path}: no such folder"),
    ("--sequences", "file", "--sequences {path}: not a folder"),
    ("--sequences", "empty", "{path}: holds no sequence file (*.yaml)"),
    ("--predicates", None, "--predicates {path}: no such folder"),
    ("--predicates", "empty", "--predicates {path}: holds no predicate file (*.py)"),
    ("--expected", None, "--expected {path}: no such folder"),
    ("--expected", "file", "--expected {path}: not a folder"),
    ("--expected", "empty", "--expected {path}: holds no golden file (<predicate>.yaml)"),
])
def test_an_unusable_folder_given_is_one_line_exit_2_and_leaves_the_reports(
        project: Path, option: str, make: str | None, message: str) -> None:
    assert run().exit_code == 0
    before = {p.name: p.read_bytes() for p in (project / "reports").iterdir()}
    path = project / "given"
    if make == "file":
        path.write_text("x\n", encoding="utf-8")
    elif make == "empty":
        path.mkdir()
    result = run(option, str(path))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [message.format(path=path)]
    assert {p.name: p.read_bytes() for p in (project / "reports").iterdir()} == before


def test_a_missing_default_sequences_folder_is_one_clear_line(project: Path) -> None:
    (project / "sequences").rename(project / "elsewhere")
    result = run()
    assert result.exit_code == 2
    assert result.stderr.strip() == ("no sequences folder at sequences/ (run stopbench in a project folder, "
                                     "or give --sequences)")


def _expectations_outside(project: Path, ids: set[str]) -> dict[str, int]:
    golden = load_golden(project / "expected")
    return {name: sum(seq not in ids for seq in gf.cells) for name, gf in golden.files.items()}


def test_expectations_for_sequences_outside_your_own_catalogue_are_one_note(project: Path) -> None:
    mine = project / "mine"
    mine.mkdir()
    (project / "sequences" / "seed000" / "seed000-talk-only.yaml").rename(mine / "seed000-talk-only.yaml")
    result = run("--sequences", str(mine))
    assert result.exit_code == 0
    n = sum(_expectations_outside(project, {"seed000-talk-only"}).values())
    assert n >= 12  # at least the three other seed sequences, for each of the four predicates
    notes = [line for line in result.stderr.splitlines() if "expectation" in line]
    assert notes == [f"note: {n} expectation(s) are for sequences not in {mine} (your own catalogue): "
                     "not a problem, they are ignored"]


def test_unused_expectations_of_the_default_catalogue_are_counted_and_listed_only_when_verbose(
        project: Path) -> None:
    (project / "sequences" / "seed000" / "seed000-talk-only.yaml").unlink()
    result = run()
    unused = [line for line in result.stderr.splitlines() if line.startswith("unused expectations:")]
    n = _expectations_outside(project, set(SEED_SEQUENCES) - {"seed000-talk-only"})["seed000_fixed"]
    assert len(unused) == 4
    assert (f"unused expectations: seed000_fixed: {n} for sequences not in the catalogue "
            "(`stopbench accept seed000_fixed --prune` removes them)") in unused
    assert "  seed000_fixed: seed000-talk-only" not in result.stderr.splitlines()
    assert "  seed000_fixed: seed000-talk-only" in run("--verbose").stderr.splitlines()


def test_the_summary_shows_a_row_per_predicate_and_the_first_few_violations(project: Path) -> None:
    result = run()
    lines = result.stderr.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("predicate "))
    assert lines[head].split() == ["predicate", "cells", "match", "mismatch", "unreviewed", "crashed", "violations"]
    assert lines[head + 1].split()[:6] == ["seed000_content", "4", "4", "0", "0", "0"]
    assert lines[head + 5].split()[:6] == ["all", "16", "16", "0", "0", "0"]
    quiet = run("--quiet")
    assert quiet.stderr.strip().splitlines() == [
        "16 cells: 16 match, 0 mismatch, 0 unreviewed, 0 crashed, "
        f"{lines[-1].split(', ')[-1]}"]


def _stopbench(project: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_in_a_terminal)


def test_a_closed_stdout_pipe_is_not_a_verdict(project: Path) -> None:
    proc = _stopbench(project, "run", "--no-entry-points", "--json", "--no-reports")
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # `stopbench run --json | head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert "16 cells: 16 match" in err


def test_ctrl_c_stops_the_bench_with_one_line_and_exit_2(project: Path) -> None:
    (project / "predicates" / "slow.py").write_text(
        header("    open('deciding', 'w').close()\n    time.sleep(20)\n    return Stop('x', ok=True, rule='r')"),
        encoding="utf-8")
    proc = _stopbench(project, "run", "--no-entry-points", "--decision-timeout", "60")
    marker = project / "deciding"
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:  # wait until inside the slow decision
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.decode().strip().splitlines()[-1] == "interrupted (Ctrl-C): stopped before a verdict"
    assert "Traceback" not in err.decode()
    assert not (project / "reports").exists()



def test_list_exits_1_on_a_broken_predicate_and_a_closed_pipe_is_not_an_error(project: Path) -> None:
    assert CliRunner().invoke(cli, ["list", "--no-entry-points"]).exit_code == 0
    (project / "predicates" / "broken.py").write_text("import no_such_module_for_stopbench\n", encoding="utf-8")
    listed = CliRunner().invoke(cli, ["list", "--no-entry-points"])
    assert listed.exit_code == 1
    assert "  broken  BROKEN: ModuleNotFoundError" in listed.stdout
    (project / "predicates" / "broken.py").unlink()
    proc = _stopbench(project, "list", "--no-entry-points")
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # `stopbench list | head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err == ""
