"""A conformance run leaves nothing behind: each run's loop and everything it started (sessions of
its own included) ends with the run, and with `stopbench conform` on SIGTERM or Ctrl-C, with no
temporary folder left (bench/check/processes.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bench.check.processes import running_contained, start_contained, wait_contained
from bench.conform.campaign import Port, run_drivers
from tests.conform.python_drivers import python_driver, runs_calls
from tests.helpers import call_then_answer_yaml, ctrl_c_as_in_a_terminal
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
SESSION = python_driver("session", "sessionport", "tests/conform/session_driver.py")


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, exited but not reaped, counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def left_behind(folder: Path) -> list[str]:
    pids = {name: int((folder / name).read_text(encoding="utf-8")) for name in ("child-pid", "grandchild-pid")}
    return [f"{name} {pid}" for name, pid in pids.items() if alive(pid)]


def kill_left(folder: Path) -> None:
    for name in ("child-pid", "grandchild-pid"):
        path = folder / name
        if path.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(path.read_text(encoding="utf-8")), signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_run_ends_what_its_loop_started_in_sessions_of_its_own(tmp_path: Path) -> None:
    seq = make_sequence([{"finish": "tool_calls", "content": None,
                          "tool_calls": [{"id": "a", "name": "read", "arguments": '{"q": "x"}'}]},
                         {"finish": "stop", "content": "done"}], sid="a-daemon")
    try:
        [run] = run_drivers([SESSION], [seq], {"session": tmp_path}, {"session": Port(runs_calls)}, root=ROOT,
                            timeout=60)
        [res] = run.results
        assert res.difference is None, res.difference
        assert left_behind(tmp_path) == []
        assert not Path((tmp_path / "work-dir").read_text(encoding="utf-8")).exists()
    finally:
        kill_left(tmp_path)


CONFORM = """
import sys
from bench.cli import cli
from bench.cli import conform
from bench.conform.runner import Driver
conform.DRIVERS = {"session": Driver("session", "sessionport", "tests/conform/session_driver.py", "openai-chat",
                                     "nothing to install", interpreter=sys.executable)}
cli.main(["conform", "session", *sys.argv[1:]], prog_name="stopbench")
"""

HANGING = call_then_answer_yaml("a loop that hangs with its daemons running", "hang", '{"q": "x"}')

PORT = '''"""Runs every call."""
from bench import Continue, Stop, predicate


@predicate(reasons=["done"], rules={"calls": "runs every call", "answer": "no calls"})
def decide(turn, state):
    return Continue("calls") if turn.tool_calls else Stop("done", ok=True, rule="answer")
'''


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_conform_ended_by_a_signal_ends_every_loop_and_leaves_no_temporary_folder(tmp_path: Path,
                                                                                   sig: signal.Signals) -> None:
    for folder in ("sequences", "predicates", "reports", "tmp", "loops/session"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "sequences" / "c-hang.yaml").write_text(HANGING, encoding="utf-8")
    (tmp_path / "predicates" / "sessionport.py").write_text(PORT, encoding="utf-8")
    loop = tmp_path / "loops" / "session"
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONFORM), "--conform-dir",
                             str(tmp_path / "loops"), "--sequences", str(tmp_path / "sequences"), "--predicates",
                             str(tmp_path / "predicates"), "--reports", str(tmp_path / "reports"), "--timeout", "300"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while not (loop / "hanging").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        assert list((tmp_path / "tmp").iterdir()), "the run's temporary folder exists while it runs"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 2, (out, err)
        assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("interrupted"), err
        assert left_behind(loop) == []
        assert list((tmp_path / "tmp").iterdir()) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        kill_left(loop)


def test_a_contained_program_keeps_its_exit_status_and_a_missing_one_fails_as_popen_does(tmp_path: Path) -> None:
    for code in (0, 3):
        proc = start_contained([sys.executable, "-c", f"import sys; sys.exit({code})"])
        assert wait_contained(proc, 30) == code
    proc = start_contained([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert wait_contained(proc, 30) == -signal.SIGSEGV
    with pytest.raises(FileNotFoundError):
        start_contained(["no-such-program-zz"])
    with pytest.raises(FileNotFoundError):
        start_contained([str(tmp_path / "nothing-here")])
    assert running_contained() == 0
