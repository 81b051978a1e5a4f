"""`stopbench init`: a first sequence, predicate, pytest file and CI workflow; never over a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from bench.cli import cli
from bench.init_templates import FILES

WRITTEN = sorted(FILES.values())


def stopbench(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def written(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_init_writes_a_sequence_a_predicate_a_pytest_file_and_a_ci_workflow(empty: Path) -> None:
    result = stopbench("init")
    assert result.exit_code == 0, result.stderr
    assert written(empty) == WRITTEN
    assert [line for line in result.stderr.splitlines() if line.startswith("wrote ")] == [
        f"wrote {p}" for p in FILES.values()]


def test_init_refuses_to_overwrite_in_one_line_and_writes_nothing(empty: Path) -> None:
    (empty / "predicates").mkdir()
    (empty / "predicates" / "my_loop.py").write_text("# mine\n", encoding="utf-8")
    result = stopbench("init")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "stopbench init: predicates/my_loop.py exists; nothing written (init never overwrites)"]
    assert written(empty) == ["predicates/my_loop.py"]
    assert (empty / "predicates" / "my_loop.py").read_text(encoding="utf-8") == "# mine\n"


def test_the_scaffold_is_a_project_the_bench_reads_beside_the_shipped_catalogue(empty: Path) -> None:
    assert stopbench("init").exit_code == 0
    listed = stopbench("list", "--no-entry-points")
    assert listed.exit_code == 0, listed.stderr
    assert "  my-first-sequence  [constructed, openai-chat, 2 turn(s), then end]" in listed.stdout
    assert "  my_loop  [cap 20 -> max_steps, ok=False]" in listed.stdout
    run = stopbench("run", "--no-entry-points", "-p", "my_loop", "--no-reports", "-q")
    assert run.exit_code == 0, run.stderr
    assert "0 crashed" in run.stderr


def test_init_then_pytest_passes_in_a_fresh_folder(empty: Path) -> None:
    assert stopbench("init").exit_code == 0
    env = {k: v for k, v in os.environ.items() if k != "STOPBENCH_ONLY_MINE" and not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=empty, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_the_plugin_reads_the_shipped_catalogue_with_the_projects_own_sequences_and_says_what_they_replace(
        empty: Path) -> None:
    shipped = Path(__file__).resolve().parents[2] / "sequences" / "seed000" / "seed000-talk-only.yaml"
    (empty / "sequences").mkdir()
    (empty / "sequences" / shipped.name).write_text(
        shipped.read_text(encoding="utf-8").replace('title: "talk only', 'title: "MINE talk only'), encoding="utf-8")
    (empty / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (empty / "test_titles.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.stopbench_catalogue(ids=['seed000-talk-only', 'seed000-tool-tool-answer'])\n"
        "def test_title(stopbench_sequence):\n"
        "    print('TITLE', stopbench_sequence.id, stopbench_sequence.title)\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "STOPBENCH_ONLY_MINE" and not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"], cwd=empty, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TITLE seed000-talk-only MINE talk only" in proc.stdout
    assert "TITLE seed000-tool-tool-answer " in proc.stdout
    assert ("stopbench: note: sequences/ replaces 1 shipped sequence(s) with the same id (yours are used): "
            "seed000-talk-only; --only-mine uses only your folders") in proc.stdout
