"""A driver for tests that leaves processes behind out of reach of its process group.

It starts a child in a session of its own (``start_new_session``), and that child double-forks a
grandchild into yet another session (as a CLI starts a daemon); their pids go to ``child-pid`` and
``grandchild-pid`` in SPEC's ``loop`` folder, and the driver's work folder (its cwd, in the bench's
temporary folder) to ``work-dir``. A sequence calling a tool named ``hang`` then hangs (for a SIGTERM
to the bench to end); any other is run as tests/serve/fake_driver.py runs it, and the driver exits
with both left running.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FAKE = TESTS / "serve" / "fake_driver.py"
start_detached = runpy.run_path(str(TESTS / "check" / "programs" / "detached.py"))["start_detached"]


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    folder = Path(spec["loop"])
    (folder / "work-dir").write_text(os.getcwd(), encoding="utf-8")
    child = start_detached(str(folder / "grandchild-pid"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (folder / "child-pid").write_text(str(child.pid), encoding="utf-8")
    if any(t["name"] == "hang" for t in spec["tools"]):
        (folder / "hanging").write_text("yes", encoding="utf-8")
        time.sleep(600)
    runpy.run_path(str(FAKE), run_name="__main__")


if __name__ == "__main__":
    main()
