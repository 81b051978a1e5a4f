"""The built wheel, installed into a fresh environment with its declared dependencies only, used from an empty
folder (ci/wheel_smoke.py: build, install offline from the wheelhouse, then the commands a new user runs).
tests/docs/test_tutorials.py runs `stopbench list`, `stopbench run` (exit 0: no cell mismatches or crashes) and
`stopbench check` on the example loop in the same environment, so they are left out here; `make smoke` runs
every step."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci.wheel_smoke import Failed, smoke_steps
from tests.installed import installed

HERE = ("stopbench --version", "stopbench init + what it says to run next")


def test_the_wheel_works_from_an_empty_folder_in_a_fresh_environment(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    try:
        smoke_steps(installed(), tmp_path, only=HERE)
    except Failed as exc:
        pytest.fail(str(exc))
    done = [line.split(" (")[0].removeprefix("ok ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("ok ")]
    assert done == list(HERE)


DECLARED = ("bench", "openai", "anthropic", "pytest", "pandas", "uvicorn")
UNDECLARED = ("selenium", "mypy", "build", "ruff", "msgspec")


def test_the_fresh_environment_holds_the_declared_dependencies_and_nothing_of_the_dev_one(tmp_path: Path) -> None:
    probe = ("import importlib.util, sys\n"
             "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None))")
    proc = subprocess.run(["python", "-c", probe, *DECLARED, *UNDECLARED], cwd=tmp_path, env=installed().env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.split() == list(DECLARED)
