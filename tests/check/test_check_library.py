"""A check as library calls (bench.check): options in, a result out, nothing printed and no exit; a
bad input is an UnusableInput with the command's line, and the command prints the library's verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.catalogue.load import load_catalogue
from bench.check import CheckOptions, Loop, choose, run_check, verdict_text, write_records
from bench.cli import cli
from bench.errors import UnusableInput
from tests.check.conftest import ANSWER, fake, small_sequence

SCRIPTED = small_sequence("scripted", [{"finish": "tool_calls", "content": None, "tool_calls": [
    {"id": "c1", "name": "poll", "arguments": "{}", "result": "still running"}]}, ANSWER])
ANTHROPIC = small_sequence("anthropic-answer", [ANSWER], dialect="anthropic")


def _options(tmp_path: Path, *ids: str, **kw: object) -> CheckOptions:
    loop = Loop("mine", tuple(fake("answer")))
    return CheckOptions((loop,), ids=ids, cwd=tmp_path, reports=tmp_path / "r", **kw)  # type: ignore[arg-type]


def test_a_check_runs_from_its_options_and_returns_each_cell(catalogue: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    options = _options(tmp_path, "answer-once", "truncated")
    result = run_check(options, choose(options, load_catalogue(catalogue).sequences, str(catalogue)))
    assert [(r.sequence.id, r.failed) for r in result.runs("mine")] == [("answer-once", False), ("truncated", True)]
    assert result.failed and result.total == 2
    assert [v.requirement for v in result.runs("mine")[1].cell.violations] == ["ok: false"]
    assert capsys.readouterr() == ("", "")  # the library says nothing: the command prints
    assert not (tmp_path / "r").exists()  # nor writes, until asked
    written = write_records(result)
    assert [(w.path, w.kept) for w in written] == [(tmp_path / "r" / "live" / "mine.json", 0)]
    record = json.loads(written[0].path.read_text(encoding="utf-8"))
    assert [c["sequence"] for c in record["cells"]] == ["answer-once", "truncated"]


def test_the_command_prints_the_librarys_verdict(catalogue: Path, tmp_path: Path) -> None:
    options = _options(tmp_path, "truncated")
    result = run_check(options, choose(options, load_catalogue(catalogue).sequences, str(catalogue)))
    done = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", "-s", "truncated",
                                    "--name", "mine", "--", *fake("answer")])
    assert done.exit_code == 1
    assert done.stdout == verdict_text(result)
    assert "mine@live: 0 of 1 sequence(s) meet their requirements, 1 do not" in done.stdout


def test_choose_names_the_folder_of_an_id_that_is_not_there(catalogue: Path, tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match=rf"^no sequence nope under {re.escape(str(catalogue))}$"):
        choose(_options(tmp_path, "nope"), load_catalogue(catalogue).sequences, str(catalogue))
    with pytest.raises(UnusableInput, match="matches the filters"):
        choose(_options(tmp_path, tags=("none-has-it",)), load_catalogue(catalogue).sequences, str(catalogue))


def test_choose_leaves_out_what_a_live_loop_cannot_run_and_counts_the_other_dialects(tmp_path: Path) -> None:
    catalogue = [SCRIPTED, ANTHROPIC, small_sequence("chat-answer", [ANSWER])]
    chosen = choose(_options(tmp_path, dialects=("openai-chat",)), catalogue, "here")
    assert [s.id for s in chosen.sequences] == ["chat-answer"]
    assert chosen.scripted == ("scripted",) and chosen.other_dialects == 1
    on_the_bench = choose(_options(tmp_path, bench_tools=True), catalogue, "here")
    assert [s.id for s in on_the_bench.sequences] == ["scripted", "anthropic-answer", "chat-answer"]
    assert on_the_bench.scripted == () and on_the_bench.other_dialects == 0


def test_a_program_that_cannot_start_is_one_unusable_line(catalogue: Path, tmp_path: Path) -> None:
    options = CheckOptions((Loop("gone", ("/nonexistent/loop",)),), ids=("answer-once",), cwd=tmp_path, reports=None)
    chosen = choose(options, load_catalogue(catalogue).sequences, str(catalogue))
    with pytest.raises(UnusableInput, match=r"^cannot run /nonexistent/loop: "):
        run_check(options, chosen)
    every_one_scripted = choose(CheckOptions(options.loops, cwd=tmp_path, reports=None), [SCRIPTED], "here")
    with pytest.raises(UnusableInput, match=r"^nothing to run: every chosen sequence scripts its tool results$"):
        run_check(options, every_one_scripted)


@pytest.mark.parametrize(("ids", "fresh", "merges"), [(("a",), False, True), (("a",), True, False), ((), False, False)])
def test_only_a_run_of_some_sequences_merges_into_the_record(ids: tuple[str, ...], fresh: bool, merges: bool) -> None:
    assert CheckOptions(ids=ids, fresh=fresh).merges is merges
