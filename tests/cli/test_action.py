"""The GitHub Action: action.yml's shape, and its step (ci/action_check.py) run with the GitHub variables
pointed at temporary files."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from bench.catalogue.document import dump_sequence
from tests.check.conftest import ANSWER, FAKE, small_sequence
from tests.helpers import ROOT

SCRIPT = ROOT / "ci" / "action_check.py"


def action() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_action_is_composite_installs_stopbench_and_runs_its_script() -> None:
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert spec["inputs"]["command"]["required"] is True
    runs = [s.get("run", "") for s in spec["runs"]["steps"]]
    assert any("-m pip install" in r and "$GITHUB_ACTION_PATH" in r for r in runs)
    assert any('"$GITHUB_ACTION_PATH/ci/action_check.py"' in r for r in runs)
    check = next(s for s in spec["runs"]["steps"] if s.get("id") == "check")
    assert set(check["env"]) >= {"INPUT_COMMAND", "INPUT_ARGS", "INPUT_NAME", "INPUT_REPORTS",
                                 "INPUT_FAIL_ON_VIOLATIONS"}
    assert {k: v["value"] for k, v in spec["outputs"].items()} == {
        k: f"${{{{ steps.check.outputs.{k} }}}}" for k in ("json", "junit", "exit-code")}


def run_step(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], str, dict[str, str]]:
    folder = tmp_path / "sequences"
    if not folder.is_dir():
        for seq in (small_sequence("answer-once", [ANSWER], require={"ok": True}),
                    small_sequence("truncated", [{"finish": "length", "content": "The answer is"}],
                                   require={"ok": False})):
            dump_sequence(seq, folder / f"{seq.id}.yaml")
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "INPUT_COMMAND": f"{sys.executable} {FAKE} answer", "INPUT_ARGS": f"--sequences {folder}",
           "INPUT_NAME": "mine", "INPUT_REPORTS": "out", **inputs}
    proc = subprocess.run([sys.executable, str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    return proc, summary.read_text(encoding="utf-8"), outputs


def test_the_step_writes_the_summary_and_the_outputs_and_fails_on_a_broken_requirement(tmp_path: Path) -> None:
    proc, summary, outputs = run_step(tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert summary.startswith("## stopbench check: requirements broken\n")
    assert "| truncated | stop:answered@1 ok [] ⚠ reported success on a cut-off reply |" in summary.splitlines()
    assert "mine@live: 1 of 2 sequence(s) meet their requirements, 1 do not (0 capped, 0 crashed)" in summary
    assert outputs == {"json": "out/live/mine.json", "junit": "out/stopbench-check.xml", "exit-code": "1"}
    assert (tmp_path / outputs["json"]).is_file()
    assert ET.parse(tmp_path / outputs["junit"]).getroot().get("failures") == "1"


def test_without_fail_on_violations_a_broken_requirement_does_not_fail_the_step(tmp_path: Path) -> None:
    proc, _, outputs = run_step(tmp_path, INPUT_FAIL_ON_VIOLATIONS="false")
    assert proc.returncode == 0
    assert outputs["exit-code"] == "1"


def test_unusable_input_fails_the_step_with_check_s_line_in_the_summary(tmp_path: Path) -> None:
    proc, summary, outputs = run_step(tmp_path, INPUT_ARGS=f"--sequences {tmp_path / 'sequences'} -s no-such-id",
                                      INPUT_FAIL_ON_VIOLATIONS="false")
    assert proc.returncode == 2
    assert summary.startswith("## stopbench check: unusable input\n")
    assert "no sequence no-such-id under" in summary
    assert outputs["exit-code"] == "2"


def test_an_empty_command_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc, summary, outputs = run_step(tmp_path, INPUT_COMMAND=" ")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "stopbench action: the command input is empty: say how to run your loop (command: python my_loop.py)"]
    assert summary == "" and outputs == {}
