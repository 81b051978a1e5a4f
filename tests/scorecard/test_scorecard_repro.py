"""``stopbench scorecard repro``: a recorded cell as a folder a maintainer can run, without the framework.

The replay test stands a stdlib Chat loop in for Agno's interpreter (the folder's ``.venv/bin/python``,
which run.sh then does not install): run.sh's one command must find the folder's sequence and
program and give the recorded verdict back (exit 1, ``ok: false`` broken).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from tests.helpers import ROOT

WHERE = ["--frameworks", str(ROOT / "examples" / "frameworks"), "--records", str(ROOT / "reports" / "frameworks"),
         "--sequences", str(ROOT / "sequences")]

SUCCESS_ON_ANYTHING = '''
import json, os, sys
sys.path.insert(0, {programs!r})
from chat import chat_loop, post
tools = [{{"type": "function", "function": t}} for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
chat_loop(lambda name, args: post(os.environ["STOPBENCH_TOOLS_URL"] + "/" + name, json.loads(args))[1]["content"],
          tools)
'''
"""A loop that, as Agno did, reports success on whatever reply ends the run (it runs the bench's tools)."""


def repro(out: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["scorecard", "repro", *args, "--out", str(out), *WHERE])
    return r.exit_code, r.output


def exec_line(folder: Path) -> list[str]:
    """run.sh's check command, split as the shell would, with ``$here`` the folder."""
    line = next(x for x in (folder / "run.sh").read_text(encoding="utf-8").splitlines() if x.startswith("exec "))
    return shlex.split(line.removeprefix("exec ").replace('"$here', f'"{folder}'))


def test_repro_writes_the_sequence_program_exchange_verdict_and_a_write_up_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "agno-filter"
    code, text = repro(out, "agno", "chat-content-filter")
    assert code == 0, text
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "README.md", "exchange.json", "program/framework.json", "program/loop.py", "run.sh",
        "sequences/chat-content-filter.yaml", "verdict.txt"]
    assert (out / "sequences" / "chat-content-filter.yaml").read_bytes() == \
        (ROOT / "sequences" / "constructed" / "chat-content-filter.yaml").read_bytes()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "`chat-content-filter`" in readme and "Agno 3.1.10" in readme and "agno==3.1.10" in readme
    assert "reported success on a filtered reply" in (out / "verdict.txt").read_text(encoding="utf-8")
    steps = json.loads((out / "exchange.json").read_text(encoding="utf-8"))["steps"]
    assert [s["answer"]["body"]["choices"][0]["finish_reason"] for s in steps] == ["tool_calls", "content_filter"]
    assert steps[-1]["loop"]["action"] == "stop" and steps[-1]["loop"]["ok"] is True


def test_run_sh_is_well_formed_and_points_at_the_folders_files(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert repro(out, "agno", "chat-content-filter")[0] == 0
    assert os.access(out / "run.sh", os.X_OK)
    assert subprocess.run(["sh", "-n", str(out / "run.sh")], check=False).returncode == 0
    argv = exec_line(out)
    program = out / "program"
    assert argv[:2] == ["stopbench", "check"] and "--bench-tools" in argv
    assert (program / argv[argv.index("--sequences") + 1] / "chat-content-filter.yaml").is_file()
    assert argv[argv.index("-s") + 1] == "chat-content-filter"
    assert argv[argv.index("--") + 1:] == [str(out / ".venv" / "bin" / "python"), "loop.py"]
    assert (program / "loop.py").is_file()
    assert "pip\" install -q agno==3.1.10" in (out / "run.sh").read_text(encoding="utf-8")


def test_run_sh_replays_the_recorded_verdict(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert repro(out, "agno", "chat-content-filter")[0] == 0
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text(SUCCESS_ON_ANYTHING.format(programs=str(ROOT / "tests" / "check" / "programs")))
    (out / ".venv" / "bin").mkdir(parents=True)
    python = out / ".venv" / "bin" / "python"  # takes loop.py's place: Agno is not installed here
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(stand_in))}\n")
    python.chmod(0o755)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(out / "run.sh")], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "reported success on a filtered reply" in done.stdout + done.stderr


@pytest.mark.parametrize(("args", "words"), [
    (("nosuch", "chat-content-filter"), "no framework 'nosuch'"),
    (("agno", "no-such-sequence"), "no sequence 'no-such-sequence'"),
    (("autogen", "gemini-safety"), "no cell of 'gemini-safety'"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path, args: tuple[str, str],
                                                          words: str) -> None:
    out = tmp_path / "r"
    code, text = repro(out, *args)
    assert (code, len(text.strip().splitlines())) == (2, 1), text
    assert words in text
    assert list(tmp_path.iterdir()) == []


def test_an_out_that_is_not_empty_or_cannot_be_written_is_refused(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    code, text = repro(full, "agno", "chat-content-filter")
    assert (code, len(text.strip().splitlines())) == (2, 1) and "not an empty folder" in text
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    code, text = repro(a_file / "r", "agno", "chat-content-filter")
    assert (code, len(text.strip().splitlines())) == (2, 1) and "does not exist" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "full"]


def test_a_violation_on_a_guess_is_said_so_in_the_verdict_and_the_write_up(tmp_path: Path) -> None:
    out = tmp_path / "r"
    judged_by_wording = Path(__file__).parent / "fixtures" / "judged-by-wording"
    r = CliRunner().invoke(cli, ["scorecard", "repro", "openai_agents", "chat-length-cut-json-repeat",
                                 "--out", str(out), *WHERE, "--records", str(judged_by_wording)])
    assert r.exit_code == 0, r.output
    guess = "ran a tool call from a cut-off reply (no_truncated_runs) (a guess: a result read by its wording)"
    assert guess in (out / "verdict.txt").read_text(encoding="utf-8")
    assert guess in (out / "README.md").read_text(encoding="utf-8")
