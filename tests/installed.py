"""The built wheel installed into a fresh environment that holds it and its declared dependencies only
(ci/wheel_smoke.py: no index, the dependencies from the wheelhouse ``make wheelhouse`` fills), made once per
test session and shared: tests/install runs the smoke steps in it, tests/docs the tutorials' commands."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest

from ci.wheel_smoke import Failed, Installed, install


@cache
def _install() -> Installed | str:
    work = Path(tempfile.mkdtemp(prefix="stopbench-installed-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    try:
        return install(work)
    except Failed as exc:
        return str(exc)


def installed() -> Installed:
    """The session's fresh environment; a test fails with the step's message when it could not be made."""
    made = _install()
    if isinstance(made, str):
        pytest.fail(f"the wheel could not be installed into a fresh environment: {made}")
    return made
