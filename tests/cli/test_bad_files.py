"""`stopbench run` as a user runs it (a subprocess) on YAML it cannot use and folders it cannot
write: exit 2, one line naming the file (and line and column), no traceback, nothing half written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """\
title: t
kind: constructed
dialect: openai-chat
source: a test
turns:
  - finish: stop
    content: hi
"""


def stopbench(project: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "bench", "run", "--no-entry-points", *args], cwd=project,
                          capture_output=True, timeout=120, check=False)
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def assert_one_clean_line(stderr: str, line: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert line in stderr.splitlines(), stderr


@pytest.mark.parametrize(("content", "line"), [
    (GOOD.replace("title: t\n", "title: t\n? [a, b]\n: 1\n").encode(),
     "bad sequence: sequences/bad.yaml: not valid YAML: line 2, column 3: a mapping key must be a plain value, "
     "not a list"),
    (GOOD.replace("content: hi", "content: {[1]: x}").encode(),
     "bad sequence: sequences/bad.yaml: not valid YAML: line 7, column 15: a mapping key must be a plain value, "
     "not a list"),
    (GOOD.replace("content: hi", "content: h\xffi").encode("latin-1"),
     "bad sequence: sequences/bad.yaml: not UTF-8 text: line 7, column 15: byte 0xff (invalid start byte)"),
    (GOOD.replace("    content: hi", "\tcontent: hi").encode(),
     "bad sequence: sequences/bad.yaml: not valid YAML: line 7, column 1: found a tab character that violates "
     "indentation"),
    (GOOD.replace("title: t\n", "title: t\nx: &a [lol, lol]\ny: [*a, *a]\n").encode(),
     "bad sequence: sequences/bad.yaml: not valid YAML: line 3, column 5: alias *a: aliases are not allowed "
     "here (write the value out)"),
], ids=["unhashable-key", "unhashable-flow-key", "not-utf8", "tab", "alias"])
def test_an_unusable_sequence_file_is_one_line_and_exit_2(project: Path, content: bytes, line: str) -> None:
    (project / "sequences" / "bad.yaml").write_bytes(content)
    code, stderr = stopbench(project)
    assert code == 2
    assert_one_clean_line(stderr, line)


def test_a_golden_file_that_is_not_utf8_is_one_line_and_exit_2(project: Path) -> None:
    golden = project / "expected" / "seed000_fixed.yaml"
    golden.write_bytes(golden.read_bytes().replace(b"predicate: seed000_fixed", b"predicate: seed000_fixed\xfe", 1))
    code, stderr = stopbench(project)
    assert code == 2
    assert_one_clean_line(stderr, "bad golden file: expected/seed000_fixed.yaml: not UTF-8 text: line 1, "
                                  "column 25: byte 0xfe (invalid start byte)")


def test_a_reports_path_that_is_a_file_is_one_line_and_exit_2(project: Path) -> None:
    (project / "reports").write_text("a file\n", encoding="utf-8")
    code, stderr = stopbench(project)
    assert code == 2
    assert_one_clean_line(stderr, "reports: is a file, not a folder (cannot write reports/decision-table.md)")
    assert (project / "reports").read_text(encoding="utf-8") == "a file\n"


def test_a_report_that_cannot_be_written_leaves_the_old_report_set_whole(project: Path) -> None:
    assert stopbench(project)[0] == 0
    reports = project / "reports"
    before = {p.name: p.read_bytes() for p in reports.iterdir()}
    assert {"decision-table.md", "cells.csv"} <= set(before)
    (reports / "cells.csv").unlink()
    (reports / "cells.csv").mkdir()  # the second report of the set cannot be written
    (project / "predicates" / "seed000_fixed.py").unlink()  # and the table would change
    code, stderr = stopbench(project)
    assert code == 2
    assert_one_clean_line(stderr, "reports/cells.csv: is a folder, not a file; cannot write it")
    assert (reports / "decision-table.md").read_bytes() == before["decision-table.md"]
    assert sorted(p.name for p in reports.iterdir()) == sorted(before)  # no temporary file left


def test_reports_get_the_permissions_a_plain_write_gives(project: Path) -> None:
    code, _ = stopbench(project)
    assert code == 0
    for path in (project / "reports").iterdir():
        assert path.stat().st_mode & 0o777 == 0o666 & ~_umask(), path.name


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_accept_into_a_folder_that_is_a_file_is_one_line_and_exit_2(project: Path) -> None:
    (project / "taken").write_text("a file\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "bench", "accept", "seed000_fixed", "--no-entry-points",
                           "--basis", "rule", "--derived", "a header", "--expected", "taken/expected"],
                          cwd=project, capture_output=True, timeout=120, check=False)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2
    # accept makes the --expected folder first, to take its lock there: the folder is what cannot be written
    assert_one_clean_line(stderr, "taken: is a file, not a folder (cannot write taken/expected)")
