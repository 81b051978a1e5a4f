"""Commands that fail leave nothing behind, and name a path that is there but is not a file as what it
is: ``init`` on a full disk removes the folders it made; ``diff`` beside a cassette that is a folder
says so rather than that the cassette is missing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from tests.hostile.sequences import ONE_ANSWER as SEQ
from tests.hostile.test_one_line import one_line, stopbench


def no_space(*_args: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("target", ["new/project", "."])
def test_init_on_a_full_disk_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   target: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("bench.catalogue.files.os.fsync", no_space)  # every file's bytes are flushed before it lands
    done = CliRunner().invoke(cli, ["init", target])
    assert done.exit_code == 2, done.output
    assert "No space left on device" in done.output and "Traceback" not in done.output
    assert sorted(p.name for p in tmp_path.rglob("*")) == []


def test_init_into_a_folder_of_the_user_s_keeps_it_and_what_it_holds(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "theirs.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("bench.catalogue.files.os.fsync", no_space)
    assert CliRunner().invoke(cli, ["init"]).exit_code == 2
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["tests", "tests/theirs.py"]


@pytest.mark.parametrize(("make", "said"), [("folder", "is a folder"), ("fifo", "is not a regular file (a FIFO)")])
def test_diff_beside_a_cassette_that_is_not_a_file_names_what_it_is(tmp_path: Path, make: str, said: str) -> None:
    (tmp_path / "rec.yaml").write_text(SEQ, encoding="utf-8")
    cassette = tmp_path / "rec.cassette"
    cassette.mkdir() if make == "folder" else os.mkfifo(cassette)
    line = one_line(stopbench(tmp_path, "diff", "rec.yaml", "--", "python", "-c", "pass", timeout=30))
    assert line == f"cannot diff: rec.cassette: {said}, not the recording's cassette"

