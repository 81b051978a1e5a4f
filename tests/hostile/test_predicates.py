"""Hostile predicates: whatever a predicate does to its process costs only its own cells.

Each case writes one predicate into a temporary folder beside the seed sequence "talk only" and runs
``python -m bench run`` as a subprocess (the case attacks the process), in a temporary working
folder with STOPBENCH_ONLY_MINE=1. The bench must end with its verdict (exit 1: a crashed cell),
the predicate's cell crashed with a line naming what it did, and stdout holding only the bench's
own output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from bench.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TALK_ONLY = ROOT / "sequences" / "seed000" / "seed000-talk-only.yaml"
HEADER = "import os, signal, sys, threading, time\nfrom bench import Stop, predicate\n"
STOP = "    return Stop('done', ok=True, rule='r')\n"


def decide(body: str, module: str = "") -> str:
    """A predicate file whose decide runs `body` (then stops), with `module` run at import."""
    return HEADER + module + "\n@predicate()\ndef decide(turn, state):\n" + body + STOP


FINE = decide("")


def bench_run(tmp_path: Path, predicates: dict[str, str], *args: str,
              timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """`python -m bench run --json --no-reports` on `predicates` (name -> source) in `tmp_path`."""
    (tmp_path / "sequences").mkdir()
    shutil.copy(TALK_ONLY, tmp_path / "sequences")
    (tmp_path / "predicates").mkdir()
    for name, source in predicates.items():
        (tmp_path / "predicates" / f"{name}.py").write_text(source, encoding="utf-8")
    env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bench", "run", "--json", "--no-reports",
                           "--predicates", "predicates", "--sequences", "sequences", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def cells(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    """The cells of `run --json` by predicate; every stdout line must be one JSON object."""
    return {c["predicate"]: c for c in map(orjson.loads, done.stdout.splitlines())}


def crashed_with(tmp_path: Path, source: str, words: str, *args: str) -> None:
    """The predicate `culprit` crashes its own cell with an error containing `words`, the predicate
    `fine` beside it stops as usual, and the bench gives its verdict once (exit 1)."""
    __tracebackhide__ = True
    done = bench_run(tmp_path, {"culprit": source, "fine": FINE}, *args)
    got = cells(done)
    assert got["culprit"]["outcome"] == "crashed", done.stderr
    assert words in str(got["culprit"]["error"]), got["culprit"]["error"]
    assert got["fine"]["outcome"] == "stopped"
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("cells: ") == 1, done.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_a_decision_timeout_that_is_not_a_finite_non_negative_number_is_refused(value: str) -> None:
    result = CliRunner().invoke(cli, ["run", "--no-entry-points", "--decision-timeout", value])
    assert result.exit_code == 2
    assert "--decision-timeout" in result.output


def test_print_in_a_predicate_never_reaches_stdout(tmp_path: Path) -> None:
    talker = decide("    print('said in decide')\n", module="print('said at import')\n")
    done = bench_run(tmp_path, {"talker": talker})
    assert cells(done)["talker"]["outcome"] == "stopped"
    assert "said in decide" in done.stderr and "said at import" in done.stderr


def test_chdir_at_import_is_undone_and_the_predicate_named(tmp_path: Path) -> None:
    done = bench_run(tmp_path, {"a_mover": decide("", module="os.chdir('/')\n"), "b_fine": FINE})
    got = cells(done)
    assert got["b_fine"]["outcome"] == "stopped", done.stderr
    assert got["a_mover"]["outcome"] == "crashed"
    assert "a_mover" in done.stderr and "changed the working folder" in done.stderr
    assert "--expected" not in done.stderr


def test_a_predicates_non_daemon_thread_does_not_keep_the_bench_alive(tmp_path: Path) -> None:
    sleeper = decide("", module="threading.Thread(target=time.sleep, args=(60,)).start()\n")
    done = bench_run(tmp_path, {"sleeper": sleeper}, timeout=10)
    assert cells(done)["sleeper"]["outcome"] == "stopped"
    assert done.returncode == 0, done.stderr


def test_a_predicate_that_ignores_sigalrm_and_loops_crashes_its_cell(tmp_path: Path) -> None:
    source = decide("    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n")
    crashed_with(tmp_path, source, "SIGALRM", "--decision-timeout", "0.3")


def test_a_predicates_own_alarm_handler_crashes_its_cell(tmp_path: Path) -> None:
    source = decide("    signal.signal(signal.SIGALRM, lambda *a: None)\n    signal.alarm(30)\n")
    crashed_with(tmp_path, source, "SIGALRM")


def test_a_predicates_own_alarm_handler_that_swallows_the_watchdog_crashes_its_cell(tmp_path: Path) -> None:
    source = decide("    signal.signal(signal.SIGALRM, lambda *a: None)\n    while True:\n        time.sleep(0.01)\n")
    crashed_with(tmp_path, source, "SIGALRM", "--decision-timeout", "0.3")


def test_os_exit_in_decide_crashes_its_cell_and_the_verdict_comes_out(tmp_path: Path) -> None:
    crashed_with(tmp_path, decide("    os._exit(0)\n"), "os._exit(0)")


def test_os_fork_in_decide_crashes_its_cell_and_one_verdict_comes_out(tmp_path: Path) -> None:
    crashed_with(tmp_path, decide("    os.fork()\n"), "os.fork()")


def test_killing_its_own_process_in_decide_crashes_its_cell(tmp_path: Path) -> None:
    crashed_with(tmp_path, decide("    os.kill(os.getpid(), signal.SIGKILL)\n"), "os.kill")
