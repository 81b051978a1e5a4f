"""Nothing a checked program starts outlives its run: its process group, children in sessions of
their own and their double-forked grandchildren end when the run ends, when ``stopbench check``
gets SIGTERM or Ctrl-C, and when ``check`` itself is killed; no temporary folder is left after
SIGTERM or Ctrl-C (bench/check/processes.py: the program runs under a subreaper)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.check import run_program
from bench.check.runner import run_all
from tests.check.conftest import ANSWER, fake, small_sequence
from tests.helpers import ROOT, ctrl_c_as_in_a_terminal

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
NAMES = ("program", "group-child", "session-child", "grandchild")


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, exited but not reaped, counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def pids(folder: Path) -> dict[str, int]:
    return {n: int((folder / n).read_text(encoding="utf-8")) for n in NAMES if (folder / n).exists()}


def left_behind(folder: Path, wait: float = 5.0) -> list[str]:
    """The processes of the run still alive after up to `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        left = [f"{n} {pid}" for n, pid in pids(folder).items() if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.fixture
def pid_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setenv("FAKE_PID_DIR", str(folder))
    yield folder
    for pid in pids(folder).values():  # a failing test leaves nothing running either
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never written"
        time.sleep(0.05)


@pytest.mark.parametrize("preload", [False, True], ids=["plain", "preload"])
def test_what_a_program_started_ends_with_its_run(pid_dir: Path, preload: bool) -> None:
    seq = small_sequence("answer-once", [ANSWER], require={"ok": True})
    run = run_all([seq], fake("leave"), name="x@live", preload=True)[0] if preload else \
        run_program(seq, fake("leave"), name="x@live")
    assert run.cell.outcome == "stopped" and run.exit_status == 0
    assert set(pids(pid_dir)) == set(NAMES)
    assert left_behind(pid_dir) == []
    assert not Path((pid_dir / "tmp").read_text(encoding="utf-8")).exists()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_program_ended_by_a_signal_ends_its_reaper_by_that_signal(tmp_path: Path, sig: int) -> None:
    """The caller sees -N as from a plain Popen, also for SIGKILL, whose handler cannot be set."""
    from bench.check.processes import start_contained, wait_contained

    proc = start_contained([sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(sig)})"],
                           stderr=subprocess.PIPE)
    assert wait_contained(proc, 30) == -sig
    assert proc.stderr is not None and proc.stderr.read() == b""


def _check(catalogue: Path, tmp_path: Path, jobs: int = 1, preload: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bench", "check", "--sequences", str(catalogue), "--reports",
                             str(tmp_path / "r"), "-s", "answer-once", "-j", str(jobs),
                             *(["--preload"] if preload else []), "--", *fake("leave-hang")],
                            cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)


@pytest.mark.parametrize("preload", [False, True], ids=["plain", "preload"])
@pytest.mark.parametrize(("signum", "jobs"), [(signal.SIGTERM, 1), (signal.SIGTERM, 2), (signal.SIGINT, 1)])
def test_sigterm_or_ctrl_c_to_check_ends_every_process_of_the_run_and_its_temporary_folder(
        catalogue: Path, tmp_path: Path, pid_dir: Path, signum: int, jobs: int, preload: bool) -> None:
    """-j 1 runs the program from the main thread, -j 2 from a worker thread (the main thread waits);
    with --preload the program is a fork of the preloading process, which ends too."""
    before = preload_folders()
    proc = _check(catalogue, tmp_path, jobs, preload)
    wait_for(pid_dir / "tmp")
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    how = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    assert f"interrupted ({how}) after 0 of 1 run(s)" in err and "Traceback" not in err
    assert left_behind(pid_dir) == []
    assert not Path((pid_dir / "tmp").read_text(encoding="utf-8")).exists()
    assert not (tmp_path / "r").exists()
    assert preload_folders() <= before


@pytest.mark.parametrize("preload", [False, True], ids=["plain", "preload"])
def test_check_killed_outright_still_ends_every_process_of_the_run(catalogue: Path, tmp_path: Path,
                                                                  pid_dir: Path, preload: bool) -> None:
    """SIGKILL runs no code in check: the reaper learns it from PR_SET_PDEATHSIG and sweeps the run
    (with --preload the preloading process learns it so, and ends each run's reaper, which sweeps it).
    (The run's temporary folder stays: nothing of check runs to remove it.)"""
    before = preload_folders()
    proc = _check(catalogue, tmp_path, preload=preload)
    wait_for(pid_dir / "tmp")
    proc.kill()
    proc.communicate(timeout=60)
    assert left_behind(pid_dir, wait=10.0) == []
    left = Path((pid_dir / "tmp").read_text(encoding="utf-8"))
    assert left.exists()  # the documented leftover (docs/check.md, Processes) ...
    shutil.rmtree(left)  # ... which the test removes, so that every run of the suite leaves no folder in /tmp
    deadline = time.monotonic() + 10
    while preload_folders() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert preload_folders() <= before  # the preloading process removes its own


def preload_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("stopbench-preload-*"))


def test_sigterm_during_live_fuzzing_ends_the_run_with_one_line(catalogue: Path, tmp_path: Path,
                                                               pid_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "bench", "check", "--fuzz", "3", "--save", str(tmp_path / "f"),
                             "--", *fake("leave-hang")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for(pid_dir / "tmp")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
    assert left_behind(pid_dir) == []
    assert not Path((pid_dir / "tmp").read_text(encoding="utf-8")).exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_an_interrupt_while_deferred_is_raised_only_where_the_block_checks_and_a_second_is_only_noted(
        sig: signal.Signals) -> None:
    from bench.check.processes import Terminated, deferred_interrupts

    # as in a terminal, whatever this suite was started with (a background job starts with SIGINT ignored)
    outer = {s: signal.signal(s, h) for s, h in ((signal.SIGINT, signal.default_int_handler),
                                                  (signal.SIGTERM, signal.SIG_DFL))}
    try:
        reached = []
        with deferred_interrupts() as interrupts:
            os.kill(os.getpid(), sig)
            time.sleep(0.05)  # the handler runs in this thread; a raise here would skip the next line
            reached.append("after the signal")
            os.kill(os.getpid(), signal.SIGINT)  # a second one during clean-up: noted, not raised
            time.sleep(0.05)
            with pytest.raises(KeyboardInterrupt) as raised:
                interrupts.check()
        assert reached == ["after the signal"]
        assert isinstance(raised.value, Terminated) == (sig == signal.SIGTERM)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        for s, h in outer.items():
            signal.signal(s, h)


def test_a_signal_the_process_was_started_ignoring_stays_ignored_while_deferred() -> None:
    from bench.check.processes import deferred_interrupts

    outer = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with deferred_interrupts() as interrupts:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            interrupts.check()  # nothing noted, nothing raised
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, outer)
