"""The default column name of `stopbench check -- COMMAND` tells programs apart: a generic stem
(`loop.py`, `main.py`, ...) takes its folder's name, a name that is not a file name is made one, and
two loops of one run never share a name (so never a record file)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.cli.check import default_name
from tests.check.conftest import fake


@pytest.fixture
def three_loops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("agno", "strands", "llama_index"):
        (tmp_path / "frameworks" / folder).mkdir(parents=True)
        (tmp_path / "frameworks" / folder / "loop.py").write_text("", encoding="utf-8")
    (tmp_path / "frameworks" / "agno" / "openai_loop.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "frameworks"


def test_programs_with_a_generic_stem_are_named_after_their_folder(three_loops: Path) -> None:
    names = {default_name(["python", f"frameworks/{f}/loop.py"]) for f in ("agno", "strands", "llama_index")}
    assert names == {"agno-loop", "strands-loop", "llama_index-loop"}


def test_a_generic_stem_run_from_its_own_folder_takes_that_folders_name(three_loops: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(three_loops / "strands")
    assert default_name([sys.executable, "loop.py"]) == "strands-loop"


def test_a_telling_stem_is_kept(three_loops: Path) -> None:
    assert default_name(["python", "frameworks/agno/openai_loop.py"]) == "openai_loop"
    assert default_name(["python", "-m", "examples.agno.main"]) == "agno-main"
    assert default_name(["python", "-m", "bench.loops", "reference"]) == "loops"


def test_a_stem_that_is_not_a_file_name_is_made_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my loop!.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert default_name(["python", "my loop!.py"]) == "my_loop_"


def test_a_default_name_another_loop_of_the_run_has_gets_a_number(catalogue: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--reports", str(tmp_path / "r"),
                                 "-s", "answer-once", "-c", f"fake_loop={' '.join(fake('answer'))}",
                                 "--", *fake("answer")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "| sequence | fake_loop-2@live | fake_loop@live | difference |" in r.stdout
    assert sorted(p.name for p in (tmp_path / "r" / "live").iterdir()) == ["fake_loop-2.json", "fake_loop.json"]
