"""A driver for tests, run through Driver.interpreter, that the pool's tests steer by tool name.

SPEC's ``loop`` is a folder the test owns: each run appends ``run <base url>`` to ``runs-<tools>``
there when it starts and ``done`` when it ends, so a test can count how often a sequence was run and
on which server. A sequence calling a tool named ``meet`` waits (30 s at most, else exits 3) until
two runs of it have started and two runs of ``fast`` have ended, then three seconds more; one
calling ``hang`` hangs on its first run (after starting a child process whose pid it writes to
``child-pid``, as a CLI starts its binary) and behaves on later runs. Then it is
tests/serve/fake_driver.py: run every call until a reply has none.
"""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import time
from pathlib import Path

FAKE = Path(__file__).resolve().parents[1] / "serve" / "fake_driver.py"


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    folder = Path(spec["loop"])
    tools = sorted(t["name"] for t in spec["tools"])
    runs = folder / f"runs-{'-'.join(tools)}"
    first = not runs.exists()
    _note(runs, f"run {spec['base_url']}")
    if "meet" in tools:
        deadline = time.monotonic() + 30
        while _count(runs, "run") < 2 or _count(folder / "runs-fast", "done") < 2:
            if time.monotonic() > deadline:
                sys.exit(3)
            time.sleep(0.1)
        time.sleep(3)
    if "hang" in tools and first:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        (folder / "child-pid").write_text(str(child.pid), encoding="utf-8")
        time.sleep(600)
    try:
        runpy.run_path(str(FAKE), run_name="__main__")
    finally:
        _note(runs, "done")


def _note(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _count(path: Path, word: str) -> int:
    if not path.exists():
        return 0
    return sum(line.split(" ")[0] == word for line in path.read_text(encoding="utf-8").splitlines())


if __name__ == "__main__":
    main()
