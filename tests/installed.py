"""The built wheel installed into a fresh environment that holds it and its declared dependencies only
(ci/wheel_smoke.py: no index, the dependencies from the wheelhouse ``make wheelhouse`` fills), made once per
test run and shared: tests/install runs the smoke steps in it, tests/docs the tutorials' commands.

Once per run, not per process: under pytest-xdist each worker is a process of its own, and building the wheel
and the environment twice would cost a minute of both cores. The run's first process (pytest itself, or the
xdist controller) makes an empty folder (:func:`open_run`) and names it in :data:`FOLDER_VARIABLE`, which the
workers inherit; the first test that needs the environment builds it there under a file lock, writes where it
is (or why it could not be made), and every other process reads that. :func:`close_run` removes the folder
when the run ends."""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest

from ci.wheel_smoke import Failed, Installed, install

FOLDER_VARIABLE = "PYTEST_STOPBENCH_INSTALLED"
"""The run's shared folder, set by the first process for the workers; ``PYTEST_`` names are left out of the
fresh environment's variables (ci/wheel_smoke.py make_env), so it reaches none of the commands run there."""


_made_here: list[str] = []


def open_run() -> None:
    """The run's shared folder, made by its first process (a worker finds it already named)."""
    if FOLDER_VARIABLE not in os.environ:
        os.environ[FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="stopbench-installed-")
        _made_here.append(os.environ[FOLDER_VARIABLE])


def close_run() -> None:
    """The shared folder and what was built in it removed, by the process that made it (a worker's end
    leaves it to the others still running)."""
    for folder in _made_here:
        os.environ.pop(FOLDER_VARIABLE, None)
        shutil.rmtree(folder, ignore_errors=True)
    _made_here.clear()


@cache
def _install() -> Installed | str:
    if FOLDER_VARIABLE not in os.environ:  # imported outside a run tests/conftest.py opened
        open_run()
        atexit.register(close_run)
    work = Path(os.environ[FOLDER_VARIABLE])
    made = work / "installed.json"
    with open(work / "lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other processes wait here while the first builds
        if not made.exists():
            try:
                built = install(work)
                made.write_text(json.dumps({"venv": str(built.venv), "wheel": str(built.wheel), "env": built.env}),
                                encoding="utf-8")
            except Failed as exc:
                made.write_text(json.dumps({"failed": str(exc)}), encoding="utf-8")
    found = json.loads(made.read_text(encoding="utf-8"))
    if "failed" in found:
        return str(found["failed"])
    # the environment is installed without bytecode (pip --no-compile); with PYTHONDONTWRITEBYTECODE set, as on
    # this project's machines, every command run in it would compile every module it imports again (a third of
    # a `stopbench show`'s CPU, measured), where a user's first command writes the bytecode the next ones read
    env = {k: v for k, v in found["env"].items() if k != "PYTHONDONTWRITEBYTECODE"}
    return Installed(Path(found["venv"]), Path(found["wheel"]), env)


def installed() -> Installed:
    """The run's fresh environment; a test fails with the step's message when it could not be made."""
    made = _install()
    if isinstance(made, str):
        pytest.fail(f"the wheel could not be installed into a fresh environment: {made}")
    return made
