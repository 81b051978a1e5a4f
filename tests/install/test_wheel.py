"""The built wheel, installed into a fresh environment with its declared dependencies only, used from an empty
folder (ci/wheel_smoke.py: build, install offline from the wheelhouse, list, run, check a tiny loop, init then
what it says to run next)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci.wheel_smoke import Failed, smoke_steps
from tests.installed import installed


def test_the_wheel_works_from_an_empty_folder_in_a_fresh_environment(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    try:
        smoke_steps(installed(), tmp_path)
    except Failed as exc:
        pytest.fail(str(exc))
    done = [line.split(" (")[0].removeprefix("ok ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("ok ")]
    assert done == ["stopbench --version", "stopbench list", "stopbench run", "stopbench check -- python my_loop.py",
                    "stopbench init + what it says to run next"]


@pytest.mark.parametrize("module,found", [("openai", True), ("anthropic", True), ("pytest", True),
                                          ("selenium", False), ("mypy", False), ("build", False)])
def test_the_fresh_environment_holds_the_declared_dependencies_and_nothing_of_the_dev_one(
        tmp_path: Path, module: str, found: bool) -> None:
    proc = subprocess.run(["python", "-c", f"import {module}"], cwd=tmp_path, env=installed().env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (proc.returncode == 0) is found, proc.stderr
