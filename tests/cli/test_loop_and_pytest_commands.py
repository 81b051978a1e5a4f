"""`stopbench loop` (the bench's loops as programs for `stopbench check`) and `stopbench pytest` (pytest with the
plugin in stopbench's own Python): what an installed stopbench runs where `python -m ...` would reach the wrong
interpreter (pipx)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

BLOCK_CLIENTS = "import sys\nsys.modules['openai'] = None\nsys.modules['anthropic'] = None\n"


def stopbench(args: list[str], cwd: Path, env: dict[str, str] | None = None,
              prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}import sys\nfrom bench.cli import main\nsys.argv = ['stopbench', *{args!r}]\nmain()\n"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_loop_without_its_client_says_which_extra_in_one_line_and_exits_2(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "STOPBENCH_SEQUENCE": "chat-tool-rounds",
           "STOPBENCH_DIALECT": "openai-chat"}
    proc = stopbench(["loop", "reference"], tmp_path, env, prelude=BLOCK_CLIENTS)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "stopbench loop reference needs the loops extra (openai is not installed): pip install 'stopbench[loops]' "
        "(under pipx: pipx inject stopbench openai anthropic)"]


def test_the_loop_outside_check_says_how_to_run_it_and_exits_2(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    proc = stopbench(["loop", "naive"], tmp_path, env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        'stopbench loop naive: run it under stopbench check, which serves it a sequence: '
        'stopbench check -c naive="stopbench loop naive"']


def test_stopbench_pytest_runs_pytest_with_the_plugin_and_gives_its_exit_status(tmp_path: Path) -> None:
    (tmp_path / "test_it.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.stopbench_catalogue(ids=['seed000-talk-only'])\n"
        "def test_served(stopbench_sequence):\n"
        "    assert stopbench_sequence.id == 'seed000-talk-only'\n\n"
        "def test_fails():\n"
        "    assert False\n", encoding="utf-8")
    proc = stopbench(["pytest", "-q", "-p", "no:cacheprovider", "test_it.py"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 1 passed" in proc.stdout
