"""The built wheel, installed into a fresh environment outside the repository, used from an empty folder
(ci/wheel_smoke.py: build, install offline, list, run, check a tiny loop, init then pytest)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT

STEPS = ("wheel", "fresh environment", "stopbench --version", "stopbench list", "stopbench run",
         "stopbench check -- python my_loop.py", "stopbench init + pytest")


def test_the_wheel_works_from_an_empty_folder_in_a_fresh_environment() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "ci" / "wheel_smoke.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    done = [line.split(" (")[0].removeprefix("ok ") for line in proc.stdout.splitlines() if line.startswith("ok ")]
    assert done == list(STEPS)
