"""What CI drives: every driver of DRIVERS but those whose record is reused, each installed from a
pin in the Makefile that agrees with the driver's own install line (`make conformance`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.conform.campaign import driven
from bench.conform.runner import DRIVERS, Driver

ROOT = Path(__file__).resolve().parents[2]
PINNED = re.compile(r"[^\s']+(?:==|@)\d[^\s']*")
"""A pinned requirement in an install line: name==version (PyPI) or name@version (npm)."""


def installs(loops: list[str], folder: Path, *, dry: bool = True) -> subprocess.CompletedProcess[str]:
    """`make conformance-installs` for `loops` under CONFORM_DIR `folder`: with `dry`, what it would
    run (make -n)."""
    return subprocess.run(["make", *(["-n"] if dry else []), "--no-print-directory", "conformance-installs",
                           f"CONFORM_LOOPS={' '.join(loops)}", f"CONFORM_DIR={folder}"],
                          cwd=ROOT, capture_output=True, text=True, check=False)


def test_ci_drives_every_driver_but_those_whose_record_is_reused() -> None:
    out = CliRunner().invoke(cli, ["conform", "--list-driven"])
    assert out.exit_code == 0
    assert out.output.split() == [n for n, d in DRIVERS.items() if not d.reused]
    fake = {"a": Driver("a", "a", "a.py", "openai-chat", "x"),
            "b": Driver("b", "b", "b.py", "openai-chat", "x", reused="driven once from a checkout")}
    assert driven(fake) == ["a"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_every_driven_loop_has_a_makefile_pin_that_agrees_with_its_install_line(tmp_path: Path) -> None:
    proc = installs(driven(DRIVERS), tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in driven(DRIVERS):
        # the prefix ends the path (`{name} ` for npm, `{name}/` for a venv): vercel_ai is not vercel_ai_steps
        lines = [line for line in proc.stdout.splitlines()
                 if (f"{tmp_path}/{name} " in line or f"{tmp_path}/{name}/" in line) and " install " in line]
        assert len(lines) == 1, f"{name}: {lines}"
        for pin in PINNED.findall(DRIVERS[name].install):
            assert pin in lines[0], f"{name}: the driver's install line pins {pin}, the Makefile: {lines[0]}"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_driver_without_a_pin_stops_the_installs_before_anything_runs(tmp_path: Path) -> None:
    proc = installs(["no_such_loop"], tmp_path, dry=False)  # nothing to install: it only says why it stops
    assert proc.returncode == 2
    assert "the driver no_such_loop (bench/conform/runner.py DRIVERS) has no PIN_no_such_loop or NPM_no_such_loop" \
        in proc.stderr + proc.stdout
