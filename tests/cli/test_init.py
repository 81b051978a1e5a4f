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
