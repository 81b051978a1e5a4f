"""Hostile inputs the issue did not list (its "kept-back" cases): each ends with one line and the exit
status of the README's table (docs/reference/exit-codes.md), and loses nothing. Cases that attack the
process (a file that blocks or never ends) run ``python -m bench`` in a child with a time limit and a
memory limit; the rest run in process."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bench.catalogue import yaml_read
from bench.cli import cli
from tests.helpers import ROOT
from tests.hostile.sequences import ONE_ANSWER as SEQ


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (the working folder) with one sequence and one predicate, only its own."""
    for name in ("sequences", "predicates", "expected"):
        (tmp_path / name).mkdir()
    (tmp_path / "sequences" / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    shutil.copy(ROOT / "predicates" / "finish_only.py", tmp_path / "predicates")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STOPBENCH_ONLY_MINE", "1")
    return tmp_path


def bench(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def child(cwd: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """`stopbench ARGS` in a child process limited to 2 GB of address space and `timeout` seconds."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False, preexec_fn=limit)


def lines_about(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if name in line]


# ---------------------------------------------------------------- files that are not files


@pytest.mark.parametrize("make", ["fifo", "dev-zero", "folder"])
def test_a_sequence_file_that_is_not_a_regular_file_is_one_line_at_once(project: Path, make: str) -> None:
    path = project / "sequences" / "odd.yaml"
    if make == "fifo":
        os.mkfifo(path)  # no writer: an open for reading would wait for ever
    elif make == "dev-zero":
        path.symlink_to("/dev/zero")  # a read would fill memory
    else:
        path.mkdir()
    res = child(project, "list")
    assert "Traceback" not in res.stderr and res.returncode == 2, (res.returncode, res.stderr[-500:])
    bad = lines_about(res.stderr, "odd.yaml")
    assert bad and bad[0].startswith("bad sequence: sequences/odd.yaml: cannot be read: "), res.stderr
    assert "one-answer" in res.stdout  # the other sequence is still listed


def test_a_golden_file_that_is_a_fifo_is_one_line_and_exit_2(project: Path) -> None:
    os.mkfifo(project / "expected" / "finish_only.yaml")
    res = child(project, "run", "--no-reports")
    assert res.returncode == 2 and "Traceback" not in res.stderr, (res.returncode, res.stderr[-500:])
    assert res.stderr.splitlines()[0] == "bad golden file: expected/finish_only.yaml: cannot be read: a FIFO, " \
                                         "not a regular file", res.stderr


def test_a_yaml_file_past_the_size_bound_is_refused_without_reading_it(project: Path) -> None:
    limit = yaml_read.MAX_BYTES
    with (project / "sequences" / "huge.yaml").open("wb") as fh:
        fh.truncate(limit + 1)  # sparse: no disk, and nothing is read
    res = bench("list")
    assert res.exit_code == 2
    bad = lines_about(res.output, "huge.yaml")
    assert bad[0] == (f"bad sequence: sequences/huge.yaml: cannot be read: {limit + 1:,} bytes, more than the "
                      f"{limit:,} a YAML file may hold"), bad


@pytest.mark.parametrize("make", ["fifo", "dev-zero"])
def test_a_predicate_file_that_is_not_a_regular_file_is_broken_at_once(project: Path, make: str) -> None:
    path = project / "predicates" / "odd.py"
    if make == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    res = child(project, "run", "--no-reports", "--decision-timeout", "20", timeout=15)
    assert res.returncode == 1 and "Traceback" not in res.stderr, (res.returncode, res.stderr[-500:])
    assert lines_about(res.stderr, "predicates/odd.py") == [
        "broken predicate: predicates/odd.py: not a regular file (a folder, a FIFO or a device): nothing to import "
        "(its cells are marked crashed)"], res.stderr


def test_a_golden_file_that_is_a_folder_is_one_line_and_exit_2(project: Path) -> None:
    (project / "expected" / "finish_only.yaml").mkdir()
    res = bench("run", "--no-reports")
    assert res.exit_code == 2
    assert res.output.splitlines()[0].startswith("bad golden file: expected/finish_only.yaml: cannot be read: ")


# ---------------------------------------------------------------- what a killed write leaves, or seems to


def test_a_journal_naming_files_outside_its_folder_touches_none_of_them(project: Path, tmp_path_factory:
                                                                         pytest.TempPathFactory) -> None:
    """A journal is acted on only if this bench could have written it: one copied or crafted into
    reports/ (it travels in a tarball, or a repository) names no file outside the folder that goes."""
    outside = tmp_path_factory.mktemp("outside")
    victims = [outside / "precious.txt", project / "precious.txt", project / "reports" / "mine.txt"]
    (project / "reports").mkdir()
    for v in victims:
        v.write_text("keep me\n", encoding="utf-8")
    entries = [{"target": str(victims[0]), "tmp": "nope"}, {"target": "../precious.txt", "tmp": "nope"},
               {"target": "mine.txt", "tmp": "nope"},
               {"target": "cells.csv", "tmp": ".cells.csv.stopbench-aaaaaaaa.tmp", "old": str(victims[0])}]
    (project / "reports" / ".stopbench-journal.json").write_text(json.dumps(entries), encoding="utf-8")
    res = bench("run")
    assert res.exit_code == 0, res.output
    assert [v.read_text(encoding="utf-8") for v in victims] == ["keep me\n"] * 3
    assert not (project / "reports" / ".stopbench-journal.json").exists()
    assert (project / "reports" / "cells.csv").is_file()


# ---------------------------------------------------------------- odd text in a sequence

def test_a_title_with_a_newline_and_a_pipe_keeps_its_row_in_the_decision_table(project: Path) -> None:
    (project / "sequences" / "odd.yaml").write_text(SEQ.replace("title: one answer", 'title: "two\\nlines | a pipe"'),
                                                    encoding="utf-8")
    assert bench("run").exit_code == 0
    table = (project / "reports" / "decision-table.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if "lines" in line]
    assert rows == [r"| odd        | two lines \| a pipe |"], rows


def test_nul_characters_written_as_escapes_survive_accept_and_run(project: Path) -> None:
    """YAML refuses a raw NUL; written "\\0" it is text like any other, and the golden file keeps it."""
    text = SEQ.replace('content: "answer"', 'content: "a\\0b"\n    tool_calls:\n'
                                             '      - {id: "c\\0", name: "re\\0ad", arguments: "{}"}')
    (project / "sequences" / "nul.yaml").write_text(text.replace("finish: stop", "finish: tool_calls"),
                                                    encoding="utf-8")
    accepted = bench("accept", "finish_only", "--derived", "by hand", "--basis", "rule")
    assert accepted.exit_code == 0, accepted.output
    again = bench("run", "--strict", "--no-reports")
    assert again.exit_code == 0 and "2 match" in again.output, again.output


# ---------------------------------------------------------------- already one line (pinned)

@pytest.mark.parametrize(("raised", "said"), [
    ("SystemExit(3)", "called sys.exit(3) at import"), ("KeyboardInterrupt()", "raised KeyboardInterrupt at import"),
    ("GeneratorExit()", "GeneratorExit (bad.py:1)"), ("MemoryError()", "MemoryError (bad.py:1)"),
    ("RecursionError('deep')", "RecursionError: deep (bad.py:1)"),
])
def test_a_predicate_raising_a_base_exception_at_import_costs_only_its_cells(project: Path, raised: str,
                                                                             said: str) -> None:
    (project / "predicates" / "bad.py").write_text(f"raise {raised}\n", encoding="utf-8")
    res = bench("run", "--no-reports")
    assert res.exit_code == 1, res.output
    assert lines_about(res.output, "predicates/bad.py") == [
        f"broken predicate: predicates/bad.py: {said} (its cells are marked crashed)"], res.output
    assert "finish_only      1      0         0           1        0" in res.output  # the other predicate ran


def test_an_empty_predicate_file_is_a_broken_predicate(project: Path) -> None:
    (project / "predicates" / "empty.py").write_bytes(b"")
    res = bench("run", "--no-reports")
    assert res.exit_code == 1
    assert lines_about(res.output, "predicates/empty.py")[0].startswith(
        "broken predicate: predicates/empty.py: defines no predicate; ")


def merge_bomb(levels: int) -> str:
    """Merge keys doubling at each level: 2**levels keys merged if a reader expanded them."""
    lines = ["a0: &a0 {x: 1}"] + [f"a{i}: &a{i}\n  <<: [*a{i - 1}, *a{i - 1}]\n  k{i}: 1" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_merge_key_bomb_in_a_sequence_file_is_one_line(project: Path) -> None:
    (project / "sequences" / "bomb.yaml").write_text(merge_bomb(30) + "title: t\n", encoding="utf-8")
    res = bench("list")
    assert res.exit_code == 2
    assert lines_about(res.output, "bomb.yaml")[0] == ("bad sequence: sequences/bomb.yaml: not valid YAML: line 3, "
                                                       "column 3: merge keys (<<) are not allowed: write the keys out")


def test_a_merge_key_bomb_in_a_cassette_is_one_line_and_exit_2(project: Path) -> None:
    """Cassettes may use aliases (recorders write them), never merge keys."""
    (project / "bomb.yaml").write_text("interactions: []\n" + merge_bomb(30), encoding="utf-8")
    res = bench("import", "bomb.yaml", "--out", "sequences/b.yaml")
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "cannot import: bomb.yaml: not valid YAML: line 4, column 3: merge keys (<<) are not allowed: write the keys "
        "out"], res.output
    assert not (project / "sequences" / "b.yaml").exists()


def test_a_file_name_that_is_not_utf_8_is_refused_with_one_line(project: Path) -> None:
    (project / "sequences" / os.fsdecode(b"bad\xff.yaml")).write_text(SEQ, encoding="utf-8")
    res = bench("run", "--no-reports")
    assert res.exit_code == 2
    bad = [line for line in res.output.splitlines() if line.startswith("bad sequence")]
    assert len(bad) == 1 and "rename the file" in bad[0], res.output


@pytest.mark.parametrize(("edit", "where"), [
    (("    outcome: stopped\n", "    outcome: stopped\n    outcome: capped\n"),
     "line 10, column 5: duplicate key 'outcome'"),
    (("predicate: finish_only\n", "predicate: finish_only\npredicate: other\n"),
     "line 2, column 1: duplicate key 'predicate'"),
])
def test_a_golden_file_with_a_key_given_twice_is_one_line_and_exit_2(project: Path, edit: tuple[str, str],
                                                                     where: str) -> None:
    assert bench("accept", "finish_only", "--derived", "by hand", "--basis", "rule").exit_code == 0
    golden = project / "expected" / "finish_only.yaml"
    golden.write_text(golden.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    res = bench("run", "--no-reports")
    assert res.exit_code == 2
    assert res.output.splitlines()[0] == f"bad golden file: expected/finish_only.yaml: not valid YAML: {where}"


CHAT = ('{"id":"c1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant",'
        '"content":"bad \\ud800 here"},"finish_reason":"stop"}]}\n')
CHUNK = ('data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":'
         '"\\udc00x"},"finish_reason":null}]}\n\ndata: [DONE]\n\n')


@pytest.mark.parametrize(("name", "text", "said"), [
    ("lone.json", CHAT, "cannot import: lone.json: JSON: invalid JSON (line 1, column 123: no low surrogate in "
                        "string)"),
    ("lone.sse", CHUNK, "cannot import: lone.sse: line 1 (event 1): invalid JSON (column 98: invalid high surrogate "
                        "in string)"),
])
def test_a_capture_with_a_lone_surrogate_escape_is_one_line_and_exit_2(project: Path, name: str, text: str,
                                                                       said: str) -> None:
    (project / name).write_text(text, encoding="utf-8")
    res = bench("import", name, "--out", "sequences/x.yaml")
    assert (res.exit_code, res.output.strip()) == (2, said)


@pytest.mark.parametrize("args", [("check", "--jobs", "0", "-c", "x=true"), ("check", "--jobs", "-1", "-c", "x=true"),
                                  ("run", "--safety-cap", "0"), ("run", "--safety-cap", "-5")])
def test_a_count_below_one_is_a_usage_error(project: Path, args: tuple[str, ...]) -> None:
    res = bench(*args)
    errors = [line for line in res.output.splitlines() if line.startswith("Error: ")]
    assert res.exit_code == 2 and len(errors) == 1, res.output
    assert errors[0].endswith(f"{args[2]} is not in the range x>=1."), errors


@pytest.mark.parametrize("value", ["garbage", "2"])
def test_a_garbage_only_mine_variable_is_one_line_and_exit_2(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                             value: str) -> None:
    monkeypatch.setenv("STOPBENCH_ONLY_MINE", value)
    res = bench("list")
    errors = [line for line in res.output.splitlines() if line.startswith("Error: ")]
    assert res.exit_code == 2 and errors == [
        f"Error: Invalid value for '--only-mine': {value!r} is not a valid boolean. Recognized values: , 0, 1, f, "
        "false, n, no, off, on, t, true, y, yes"], res.output


def test_a_reports_link_to_a_folder_elsewhere_is_written_through_and_stays_a_link(
        project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "notes.txt").write_text("mine\n", encoding="utf-8")
    (project / "reports").symlink_to(elsewhere, target_is_directory=True)
    for _ in range(2):  # the second run replaces the first's set through the link
        assert bench("run").exit_code == 0
    assert (project / "reports").is_symlink()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["cells.csv", "decision-table.md", "index.html", "notes.txt"]
    assert (elsewhere / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_read_only_reports_folder_with_a_journal_left_is_one_line_and_keeps_the_journal(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reports/ read-only (simulated: these tests may run as root, whom chmod does not stop) holding what
    a killed write left: one line, exit 2, and the journal and second name stay for a run that can write."""
    assert bench("run").exit_code == 0
    reports = project / "reports"
    (reports / ".cells.csv.stopbench-abcdefgh.old").write_text("the set before\n", encoding="utf-8")
    (reports / ".stopbench-journal.json").write_text(json.dumps([
        {"target": "cells.csv", "tmp": ".cells.csv.stopbench-abcdefgh.tmp", "old": ".cells.csv.stopbench-abcdefgh.old"},
    ]), encoding="utf-8")
    before = sorted(p.name for p in reports.iterdir())

    def refusing(real: Any, writes: bool) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            flags = args[0] if args else 0
            if os.path.abspath(path).startswith(str(reports)) and (writes or flags & (os.O_WRONLY | os.O_RDWR)):
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, *args, **kwargs)
        return call

    for name in ("replace", "rename", "unlink", "mkdir"):
        monkeypatch.setattr(os, name, refusing(getattr(os, name), True))
    monkeypatch.setattr(os, "open", refusing(os.open, False))
    res = bench("run")
    monkeypatch.undo()
    assert (res.exit_code, res.output.strip().splitlines()[-1]) == (
        2, "reports: cannot write into this folder: Permission denied"), res.output
    assert sorted(p.name for p in reports.iterdir()) == before


@pytest.mark.parametrize(("args", "said"), [
    (("import", "odd.json", "--out", "sequences/x.yaml"), "cannot import: odd.json: not a regular file (a FIFO, "
                                                           "a device or a folder)"),
    (("corpus", "--no-entry-points", "--predicates", "predicates", "odd.json", "--out", "rep"),
     "odd.json: not a regular file or a folder (a FIFO, a device)"),
])
def test_a_capture_or_corpus_file_that_is_a_fifo_is_named_as_one(project: Path, args: tuple[str, ...],
                                                                   said: str) -> None:
    """Before: 'no such file', of a file that is there."""
    os.mkfifo(project / "odd.json")
    res = bench(*args)
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [said], res.output
