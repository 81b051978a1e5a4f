"""Writes that cannot lose: concurrent accepts keep every cell, a killed run leaves the previous
report set whole (the next run cleans up after it), SIGTERM ends a run like Ctrl-C.

Each case runs ``python -m bench`` in a child process whose ``os.replace`` or ``os.fsync`` is
wrapped by a small launcher (:data:`LAUNCHER`): to widen the read-to-rename window of an accept,
to kill -9 between the renames of the report set, or to send SIGTERM while it is being staged.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bench.catalogue.files import (
    UnwritableOutput,
    folder_lock,
    recover_folder,
    write_all_or_nothing,
    write_atomically,
)
from bench.golden.expected import GoldenFile, dump_golden, read_golden_file
from tests.helpers import ROOT

PREDICATE = "seed000_finish"
REPORTS = ("decision-table.md", "cells.csv", "index.html")

LAUNCHER = '''
import os, signal, sys, time
mode = os.environ["HOSTILE_MODE"]
replace, fsync = os.replace, os.fsync
renames = []
def slow_replace(src, dst, **kw):
    time.sleep(0.3)  # the read-to-rename window of accept, widened
    return replace(src, dst, **kw)
def kill_between_renames(src, dst, **kw):
    if os.path.basename(dst) in ("decision-table.md", "cells.csv", "index.html"):
        renames.append(dst)
        if len(renames) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    return replace(src, dst, **kw)
def term_while_staging(fd):
    os.kill(os.getpid(), signal.SIGTERM)
    return fsync(fd)
if mode == "slow-rename":
    os.replace = slow_replace
elif mode == "kill-between-renames":
    os.replace = kill_between_renames
elif mode == "term-while-staging":
    os.fsync = term_while_staging
from bench.cli import main
sys.argv[0] = "stopbench"
main()
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Seed 000's sequences, one predicate and its golden file, in a temporary folder."""
    (tmp_path / "sequences").mkdir()
    shutil.copytree(ROOT / "sequences" / "seed000", tmp_path / "sequences" / "seed000")
    (tmp_path / "predicates").mkdir()
    (tmp_path / "expected").mkdir()
    shutil.copy(ROOT / "predicates" / f"{PREDICATE}.py", tmp_path / "predicates")
    shutil.copy(ROOT / "expected" / f"{PREDICATE}.yaml", tmp_path / "expected")
    (tmp_path / "launch.py").write_text(LAUNCHER, encoding="utf-8")
    return tmp_path


def bench(project: Path, mode: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HOSTILE_MODE": mode, "STOPBENCH_ONLY_MINE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, str(project / "launch.py"), *args], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_two_accepts_of_different_sequences_into_one_golden_file_keep_both_cells(project: Path) -> None:
    golden = project / "expected" / f"{PREDICATE}.yaml"
    whole = read_golden_file(golden)
    first, second = sorted(s for s in whole.cells if s.startswith("seed000-"))[:2]
    cells = {k: v for k, v in whole.cells.items() if k not in (first, second)}
    golden.write_text(dump_golden(GoldenFile(predicate=PREDICATE, derived=whole.derived, cells=cells)),
                      encoding="utf-8")
    runs = [bench(project, "slow-rename", "accept", PREDICATE, "-s", seq, "--basis", "rule")
            for seq in (first, second)]
    for proc in runs:
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "1 cell(s) written" in out
    kept = read_golden_file(golden).cells
    assert first in kept and second in kept, f"a concurrent accept lost {[s for s in (first, second) if s not in kept]}"
    assert hidden(project / "expected") == []


def _run(project: Path, mode: str = "plain") -> subprocess.CompletedProcess[str]:
    proc = bench(project, mode, "run", "-q")
    out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _reports(project: Path) -> dict[str, bytes]:
    return {name: (project / "reports" / name).read_bytes() for name in REPORTS}


def _previous_set(project: Path) -> dict[str, bytes]:
    """A report set standing for the previous run's, unlike any a run writes."""
    before = {name: f"previous {name}\n".encode() for name in REPORTS}
    write_all_or_nothing({project / "reports" / name: text for name, text in before.items()})
    return before


def test_a_run_killed_between_the_report_renames_leaves_the_previous_set_to_come_back_whole(project: Path) -> None:
    before = _previous_set(project)
    killed = _run(project, "kill-between-renames")
    assert killed.returncode == -9
    assert (project / "reports" / "decision-table.md").read_bytes() != before["decision-table.md"]  # killed mid-set
    with folder_lock(project / "reports"):  # what the next write into the folder does first
        recover_folder(project / "reports")
    assert _reports(project) == before, "the killed run left a mix of old and new reports"
    assert hidden(project / "reports") == []


def test_the_run_after_a_killed_one_removes_everything_the_killed_run_left(project: Path) -> None:
    before = _previous_set(project)
    assert _run(project, "kill-between-renames").returncode == -9
    assert hidden(project / "reports") != []
    again = _run(project)
    assert again.returncode == 0, again.stderr
    assert hidden(project / "reports") == [], "the next run left the killed run's files"
    assert all(v != before[k] for k, v in _reports(project).items())


def test_sigterm_while_the_reports_are_staged_exits_like_ctrl_c_and_leaves_nothing_half_written(
        project: Path) -> None:
    before = _previous_set(project)
    termed = _run(project, "term-while-staging")
    assert termed.returncode == 2, termed.stderr
    assert termed.stderr.strip().splitlines() == ["interrupted (SIGTERM): stopped before a verdict"]
    assert _reports(project) == before
    assert hidden(project / "reports") == []


def test_a_folder_that_refuses_a_temporary_file_is_named_not_the_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "reports" / "cells.csv"

    def full(*, prefix: str, suffix: str, dir: Path) -> tuple[int, str]:
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(dir) / f"{prefix}abcd1234{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", full)
    with pytest.raises(UnwritableOutput) as info:
        write_atomically(target, "x")
    assert str(info.value) == f"{target.parent}: cannot write {target}: No space left on device"


def test_a_process_writing_again_cleans_up_after_a_write_killed_since_its_last(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    write_all_or_nothing({folder / name: "first\n" for name in REPORTS})
    # what a write killed between its renames (another process) leaves: second names, a journal, one target new
    entries = []
    for name in REPORTS:
        os.link(folder / name, folder / f".{name}.stopbench-killed00.old")
        (folder / f".{name}.stopbench-killed00.tmp").write_text("killed\n", encoding="utf-8")
        entries.append({"target": name, "tmp": f".{name}.stopbench-killed00.tmp",
                        "old": f".{name}.stopbench-killed00.old"})
    (folder / ".stopbench-journal.json").write_text(json.dumps(entries), encoding="utf-8")
    os.replace(folder / entries[0]["tmp"], folder / REPORTS[0])
    write_all_or_nothing({folder / "cells.csv": "second\n", folder / "index.html": "second\n"})
    assert hidden(folder) == []
    assert [(folder / name).read_text(encoding="utf-8") for name in REPORTS] == ["first\n", "second\n", "second\n"]
