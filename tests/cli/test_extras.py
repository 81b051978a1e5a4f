"""The base install and the corpus extra: what the base commands import, and the one line without the extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from bench.cli import COMMANDS, EXTRAS
from tests.helpers import ROOT

CORPUS_MODULES = ("msgspec", "pyarrow", "dask", "distributed")
BLOCK = "import sys\nfor m in {mods!r}:\n    sys.modules[m] = None\n"


def without_the_extra(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`code` run in a fresh interpreter in which the corpus extra's modules cannot be imported."""
    return subprocess.run([sys.executable, "-c", BLOCK.format(mods=CORPUS_MODULES) + code, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_corpus_extra_is_not_in_the_base_install_and_dev_has_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = " ".join(project["dependencies"])
    assert not [m for m in CORPUS_MODULES if m in base]
    assert project["optional-dependencies"]["corpus"]
    assert "stopbench[corpus]" in project["optional-dependencies"]["dev"]


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - set(EXTRAS)))
def test_every_base_command_imports_without_the_corpus_extra(name: str) -> None:
    proc = without_the_extra(f"from bench.cli import load_command\nload_command({name!r})")
    assert proc.returncode == 0, proc.stderr


def test_the_corpus_command_without_its_extra_is_one_line_naming_it_and_exit_2() -> None:
    proc = without_the_extra("from bench.cli import main\nsys.argv = ['stopbench', 'corpus', 'in', '--out', 'o']\n"
                             "main()")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "stopbench corpus needs the corpus extra (msgspec is not installed): pip install 'stopbench[corpus]'"]


def test_list_runs_on_the_base_install() -> None:
    proc = without_the_extra("from bench.cli import main\nsys.argv = ['stopbench', 'list', '--no-entry-points']\n"
                             "main()")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("sequences (")
