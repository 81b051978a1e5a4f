"""Hostile input that must end in one line and the exit status of bench/cli/_common.py's table (2: unusable
input), never a traceback. Each test runs the command as a user does: ``python -m bench`` in a fresh folder."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.corpus.generate import corpus_lines
from tests.helpers import ROOT

CAPTURE = ROOT / "tests/importers/data/vercel-ai/anthropic-refusal.json"


def stopbench(cwd: Path, *args: str | Path, env: dict[str, str] | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`stopbench ARGS` run from `cwd`, reading this checkout's bench package."""
    full_env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "bench", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def one_line(res: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The one line on stderr, after checking the exit status and that no traceback was printed."""
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == code, (res.returncode, res.stderr)
    lines = [line for line in res.stderr.splitlines() if line.strip() and not line.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder holding a 20-sequence corpus and a folder with one predicate."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "corpus.jsonl").write_bytes(b"".join(itertools.islice(corpus_lines(40_000), 20)))
    (tmp_path / "predicates").mkdir()
    shutil.copy(ROOT / "predicates" / "finish_only.py", tmp_path / "predicates")
    return tmp_path


def corpus_args(*args: str) -> list[str]:
    return ["corpus", "--no-entry-points", "--predicates", "predicates", *args]


def test_import_out_empty_is_refused(tmp_path: Path) -> None:
    line = one_line(stopbench(tmp_path, "import", CAPTURE, "--out", ""))
    assert "--out" in line and "empty" in line
    assert not list(tmp_path.iterdir())


def test_corpus_out_empty_is_refused_and_writes_nothing_here(corpus: Path) -> None:
    line = one_line(stopbench(corpus, *corpus_args("c", "--out", "")))
    assert "--out" in line and "empty" in line
    assert sorted(p.name for p in corpus.iterdir()) == ["c", "predicates"]


def test_corpus_on_a_first_line_of_2000_deep_json(corpus: Path) -> None:
    (corpus / "deep.jsonl").write_text('{"a":' + "[" * 2000 + "]" * 2000 + "}\n", encoding="utf-8")
    line = one_line(stopbench(corpus, *corpus_args("deep.jsonl", "--out", "rep")))
    assert line.startswith("deep.jsonl: ")


def test_corpus_with_a_dask_address_of_no_known_scheme(corpus: Path) -> None:
    line = one_line(stopbench(corpus, *corpus_args("c", "--out", "rep", "--dask", "garbage://x")))
    assert line.startswith("--dask garbage://x: ")


def test_corpus_report_inside_its_input_folder_is_not_read_back(corpus: Path) -> None:
    first = stopbench(corpus, *corpus_args("--quiet", "c", "--out", "c/rep"))
    assert first.returncode == 0, first.stderr
    again = stopbench(corpus, *corpus_args("--quiet", "c", "--out", "c/rep"))
    assert again.returncode == 0 and again.stderr == "", again.stderr


SEQ = """\
title: one answer
kind: constructed
dialect: openai-chat
source: tests/hostile
then: end
turns:
  - finish: stop
    content: "answer \\u2713"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with one sequence (its content not latin-1) and one predicate."""
    for name in ("sequences", "predicates", "expected"):
        (tmp_path / name).mkdir()
    (tmp_path / "sequences" / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    shutil.copy(ROOT / "predicates" / "finish_only.py", tmp_path / "predicates")
    return tmp_path


def test_check_with_an_unterminated_quote_in_a_command(tmp_path: Path) -> None:
    line = one_line(stopbench(tmp_path, "check", "-c", 'x=python "unterminated'))
    assert line == "Error: -c 'x=python \"unterminated': no closing quotation"


def test_show_on_a_latin_1_stdout_names_the_character_it_cannot_write(project: Path) -> None:
    line = one_line(stopbench(project, "show", "one-answer", env={"PYTHONIOENCODING": "latin-1"}))
    assert line.startswith("cannot write to standard output: its encoding ") and "U+2713" in line


def test_show_to_a_closed_pipe_ends_quietly_with_its_verdict(project: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line, as with `| head -0`
    try:
        res = subprocess.run([sys.executable, "-m", "bench", "show", "one-answer"], cwd=project, stdout=write_end,
                             stderr=subprocess.PIPE, text=True, timeout=60, check=False,
                             env={**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    assert (res.returncode, res.stderr) == (0, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [("run", "--json"), ("show", "one-answer")])
def test_stdout_on_a_full_disk(project: Path, args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "bench", *args], cwd=project, stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=60, check=False,
                             env={**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)})
    assert one_line(res) == "cannot write to standard output: No space left on device"


def test_a_folder_named_like_a_live_record(project: Path) -> None:
    (project / "reports" / "live" / "x.json").mkdir(parents=True)
    line = one_line(stopbench(project, "run"))
    assert line.startswith(f"{Path('reports/live/x.json')}: cannot read a live record: ")


@pytest.mark.parametrize(("text", "got"), [("- a\n", "list ['a']"), ("", "nothing")])
def test_a_golden_file_that_is_not_a_mapping_names_no_internal_class(project: Path, text: str, got: str) -> None:
    (project / "expected" / "finish_only.yaml").write_text(text, encoding="utf-8")
    res = stopbench(project, "run")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    first = res.stderr.splitlines()[0]
    assert first.endswith(f"finish_only.yaml: (top level): expected a mapping (key: value), got {got}"), first



@pytest.mark.parametrize(("text", "got"), [("", "nothing (an empty file)"), ("- a\n", "list ['a']")])
def test_a_sequence_file_that_is_not_a_mapping_says_what_it_holds_in_the_file_s_words(project: Path, text: str,
                                                                                      got: str) -> None:
    (project / "sequences" / "odd.yaml").write_text(text, encoding="utf-8")
    res = stopbench(project, "list")
    bad = [line for line in res.stderr.splitlines() if "odd.yaml" in line]
    assert bad == [line for line in bad if "NoneType" not in line]
    assert len(bad) == 1 and bad[0].endswith(f"expected a mapping (key: value) at the top level, got {got}"), \
        res.stderr

def test_a_tab_in_indentation_is_called_a_tab(project: Path) -> None:
    (project / "sequences" / "tabbed.yaml").write_text(SEQ.replace("  - finish", "\t- finish"), encoding="utf-8")
    res = stopbench(project, "list")
    bad = [line for line in res.stderr.splitlines() if "tabbed.yaml" in line]
    assert len(bad) == 1 and "line 7, column 1" in bad[0] and "a tab" in bad[0], res.stderr


def test_import_reads_past_a_byte_order_mark_as_the_sequence_reader_does(project: Path) -> None:
    (project / "sequences" / "one-answer.yaml").write_bytes(b"\xef\xbb\xbf" + SEQ.encode())
    assert "one-answer" in stopbench(project, "list").stdout
    (project / "bom.json").write_bytes(b"\xef\xbb\xbf" + CAPTURE.read_bytes())
    res = stopbench(project, "import", "bom.json", "--out", "sequences/bom.yaml")
    assert res.returncode == 0, res.stderr
    assert (project / "sequences" / "bom.yaml").is_file()


@pytest.mark.parametrize("name", ["a|b", "new\nline"])
def test_an_id_a_report_table_cannot_hold_is_refused_at_load(project: Path, name: str) -> None:
    """Refused, not escaped: an id is a file name, and a report showing it escaped would name a file that
    does not exist. The line shows the name escaped, so it stays one line."""
    (project / "sequences" / f"{name}.yaml").write_text(SEQ, encoding="utf-8")
    res = stopbench(project, "run", "--no-reports")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    bad = res.stderr.splitlines()[0]
    assert bad.startswith("bad sequence: sequences/") and "rename the file" in bad, res.stderr
    assert repr(name) in bad


def test_a_golden_file_for_a_predicate_not_loaded_is_a_note_and_fails_strict(project: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)  # in process: four runs of a subprocess each would take seconds

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args))

    accepted = run("accept", "finish_only", "--derived", "by hand", "--basis", "rule")
    assert accepted.exit_code == 0, accepted.output
    text = (project / "expected" / "finish_only.yaml").read_text(encoding="utf-8")
    (project / "expected" / "ghost.yaml").write_text(text.replace("predicate: finish_only", "predicate: ghost"),
                                                     encoding="utf-8")
    note = "note: a golden file for 'ghost', which is not among the predicates loaded"
    plain = run("run", "--no-reports")
    assert plain.exit_code == 0 and note in plain.stderr, plain.stderr
    strict = run("run", "--no-reports", "--strict", "--quiet")
    assert strict.exit_code == 1 and note in strict.stderr, strict.stderr
    selected = run("run", "--no-reports", "--strict", "-p", "finish_only")
    assert selected.exit_code == 0 and note not in selected.stderr, selected.stderr
