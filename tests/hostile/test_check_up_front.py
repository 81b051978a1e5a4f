"""``stopbench check`` given what a careless or hostile user gives it: a count, a name or an output it
cannot use is refused in one line with exit 2 before the program runs once (a run of the catalogue
takes minutes); what a program prints or how it dies never stalls or garbles the verdict."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.check.limits import MAX_NAME_CHARS, MAX_TRIALS, STDERR_TAIL_BYTES, loop_name_problem, unwritable_file
from bench.check.report import stable
from tests.hostile.sequences import ONE_ANSWER as SEQ
from tests.hostile.test_one_line import one_line, stopbench

MARK = "import pathlib, sys; pathlib.Path('ran').touch(); "
"""The start of every program here: it leaves ``ran`` behind, so a test sees whether it was run."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with one sequence of its own (``STOPBENCH_ONLY_MINE`` is set by the helper)."""
    (tmp_path / "sequences").mkdir()
    (tmp_path / "sequences" / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    return tmp_path


def check(project: Path, *args: str, program: str = "sys.exit(0)") -> tuple[str, ...]:
    """The arguments of ``stopbench check ARGS -- python -c PROGRAM`` (the program marked)."""
    return ("check", "--timeout", "20", *args, "--", "python", "-c", MARK + program)


def test_a_trial_count_past_the_bound_is_refused_before_any_run(project: Path) -> None:
    line = one_line(stopbench(project, *check(project, "--trials", "1000000000")))
    assert "--trials" in line and str(MAX_TRIALS) in line
    assert not (project / "ran").exists()


def test_the_largest_trial_count_is_not_refused() -> None:
    """The bound is inclusive: --help's range and the docs say 'at most'."""
    from bench.cli.check import check_cmd

    trials = next(p for p in check_cmd.params if p.name == "trials")
    assert trials.type.convert(MAX_TRIALS, trials, None) == MAX_TRIALS


def test_a_name_longer_than_the_bound_is_refused_before_any_run(project: Path) -> None:
    line = one_line(stopbench(project, *check(project, "--name", "n" * 300)))
    assert f"at most {MAX_NAME_CHARS} characters" in line
    assert not (project / "ran").exists()


def test_a_name_of_letters_of_another_script_names_the_record(project: Path) -> None:
    done = stopbench(project, *check(project, "--name", "λ-loop"))
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr  # it made no request: crashed
    assert (project / "reports" / "live" / "λ-loop.json").is_file()


@pytest.mark.parametrize(("name", "words"), [("a/b", "'/' cannot be in a name"), ("..", "use letters"),
                                             ("a b", "' ' cannot be in a name"), ("x" * (MAX_NAME_CHARS + 1),
                                                                                  "at most")])
def test_a_name_that_cannot_name_a_file_says_why(name: str, words: str) -> None:
    assert words in (loop_name_problem(name) or "")


@pytest.mark.parametrize("name", ["λ-loop", "日本語", "loop_2.v1", "x" * MAX_NAME_CHARS])
def test_names_of_letters_digits_and_the_three_marks_pass(name: str) -> None:
    assert loop_name_problem(name) is None


@pytest.mark.parametrize("option", ["--junit", "--reports"])
def test_an_output_under_a_file_is_refused_before_any_run(project: Path, option: str) -> None:
    (project / "afile").write_text("", encoding="utf-8")
    line = one_line(stopbench(project, *check(project, option, "afile/j.xml")))
    assert line.startswith("afile: is a file, not a folder"), line
    assert not (project / "ran").exists()


def test_a_refused_output_creates_no_folder(project: Path) -> None:
    (project / "afile").write_text("", encoding="utf-8")
    one_line(stopbench(project, *check(project, "--reports", "new/deeper", "--junit", "afile/j.xml")))
    assert not (project / "new").exists()


def test_a_program_killed_by_a_signal_is_said_to_be(project: Path) -> None:
    done = stopbench(project, *check(project, program="import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"))
    assert done.returncode == 1, done.stderr
    assert "killed by SIGSEGV" in done.stdout and "exited -11" not in done.stdout


def test_a_multi_megabyte_last_stderr_line_without_spaces_is_judged_at_once(project: Path) -> None:
    """The cell's error is the program's last stderr line; every pass over it (the temporary-folder
    and port masks among them) is linear, so 5 MB take seconds, not hours."""
    started = time.monotonic()
    done = stopbench(project, *check(project, program="sys.stderr.write('x' * 5_000_000 + chr(10)); sys.exit(3)"))
    assert done.returncode == 1, done.stderr[-500:]
    assert "exited 3: xxx" in done.stdout
    assert time.monotonic() - started < 30


@given(st.lists(st.sampled_from(["a", "/", " ", "'", '"', "/stopbench-", "check-", "abcdef1", "-", "_"]),
                max_size=30).map("".join))
def test_temporary_folders_are_masked_from_the_start_of_their_word(text: str) -> None:
    """The linear mask gives what the one-pattern definition gives: from the word's start (after a
    space or quote, or the previous mask) through the folder's name."""
    definition = re.compile(r"[^\s'\"]*?/stopbench-[a-z]+-[A-Za-z0-9_]{6,}")
    assert stable(text) == definition.sub("<tmp>", text)


def test_what_is_kept_of_a_program_s_stderr_is_bounded(project: Path) -> None:
    """Only the end of a program's stderr is read (:data:`bench.check.limits.STDERR_TAIL_BYTES`): 30 MB
    on one line make a cell's error, and the table's line, of at most that many bytes."""
    done = stopbench(project, *check(project, program="sys.stderr.write('x' * 30_000_000 + ' the end' + chr(10)); "
                                                      "sys.exit(3)"))
    assert done.returncode == 1, done.stderr[-500:]
    assert "x the end" in done.stdout
    assert len(done.stdout.encode()) < 3 * STDERR_TAIL_BYTES


def test_masking_a_long_word_without_spaces_is_linear() -> None:
    """A word of 2 MB with no space, quote or temporary folder: the mask passes over it once (the
    pattern with the word's head in front of the folder retried it from each of its characters)."""
    started = time.monotonic()
    assert stable("x" * 2_000_000 + "/stopbench-check-abcdef1") == "<tmp>"
    assert time.monotonic() - started < 2


def test_an_output_in_a_folder_the_user_cannot_write_is_refused(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """As root every folder is writable, so the refusal is seen through ``os.access`` saying no."""
    monkeypatch.setattr("bench.check.limits.os.access", lambda *_args: False)
    why = unwritable_file(tmp_path / "new" / "j.xml")
    assert why == f"{tmp_path}: cannot write into this folder: Permission denied"
