"""A program that cannot get going costs seconds and says why once: a script that is not there is refused
before any run, and when the first runs all end before their first model request for one same reason,
``check`` stops there and exits 2 (unusable input) with that reason on one line."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner, Result

from bench.cli import cli
from bench.cli.check import default_name
from tests.check.conftest import fake


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)


def test_a_script_that_is_not_there_is_refused_before_any_run(catalogue: Path, tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "--reports", str(tmp_path / "r"), "--", sys.executable,
              str(tmp_path / "missing.py"))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "missing.py: no such file" in r.stderr
    assert not (tmp_path / "r").exists()


def test_a_script_after_interpreter_options_is_found_and_a_module_is_not_taken_for_one(catalogue: Path,
                                                                                       tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "--", sys.executable, "-u", "-W", "ignore",
              str(tmp_path / "gone.py"))
    assert r.exit_code == 2 and "gone.py: no such file" in r.stderr
    ok = check("--sequences", str(catalogue), "--no-report", "-s", "answer-once", "--", sys.executable, "-m",
               "json.tool", "--help")
    assert "no such file" not in ok.stderr


def test_a_program_that_dies_before_its_first_request_stops_the_check_and_says_why_once(
        catalogue: Path, tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "--reports", str(tmp_path / "r"), "-j", "1", "--", *fake("silent"))
    assert r.exit_code == 2, r.output
    assert r.output.count("boom: cannot start") == 1
    assert "its first 3 runs ended before their first model request, each the same way" in r.stderr
    assert "| sequence |" not in r.stdout and not (tmp_path / "r").exists()


def test_side_by_side_runs_stop_as_soon_as_the_first_three_agree(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-j", "2", "--", *fake("silent"))
    assert r.exit_code == 2, r.output
    assert r.output.count("boom: cannot start") == 1


def test_a_program_that_gets_going_is_never_stopped_early(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-j", "1", "--", *fake("exit", "0"))
    assert r.exit_code == 1 and "fake_loop@live: 3 of 4 sequence(s) meet their requirements" in r.stdout, r.output


def test_runs_that_end_before_a_request_for_different_reasons_are_each_judged(catalogue: Path) -> None:
    """Each run dies with its own words (its sequence's id): not one reason, so no early stop."""
    r = check("--sequences", str(catalogue), "--no-report", "-j", "1", "--name", "dies", "--", sys.executable,
              "-c", "import os, sys; sys.exit('died on ' + os.environ['STOPBENCH_SEQUENCE'])")
    assert r.exit_code == 1, r.output
    assert "dies@live: 0 of 4 sequence(s) meet their requirements, 4 do not (0 capped, 4 crashed)" in r.stdout


def test_a_script_that_is_not_there_is_named_after_its_stem_not_its_suffix() -> None:
    assert default_name(["python", "my_loop.py"]) == "my_loop"
    assert default_name(["node", "not/there/loop.mjs"]) == "there-loop"
