"""CI's live re-run of the scorecard turns a slice of each record's sequences with every commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.conform import reuse
from bench.scorecard.verify import rotating_ids

ROOT = Path(__file__).resolve().parents[2]


def _record(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "fw.json"
    path.write_text(json.dumps({"cells": [{"sequence": f"seq-{i:02d}"} for i in range(n)]}), encoding="utf-8")
    return path


def test_consecutive_commits_re_run_every_recorded_sequence_in_turn(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    record = _record(tmp_path, 10)
    seen: list[list[str]] = []
    for commits in range(3):
        monkeypatch.setattr("bench.scorecard.verify.default_seed", lambda _root, c=commits: (c, f"{c} commits"))
        ids, said = rotating_ids(record, 4, ROOT)
        assert 0 < len(ids) <= 4 and "slice" in said
        seen.append(ids)
    assert seen[0] != seen[1]
    assert sorted(i for ids in seen for i in ids) == [f"seq-{i:02d}" for i in range(10)]


def test_the_slice_is_the_same_for_the_same_commit(tmp_path: Path) -> None:
    record = _record(tmp_path, 25)
    assert rotating_ids(record, 4, ROOT) == rotating_ids(record, 4, ROOT)
    assert reuse.default_seed(ROOT)[0] > 0


def test_verify_with_no_sequence_and_no_rotation_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["scorecard", "verify", "autogen", "--records", str(tmp_path)])
    assert result.exit_code == 2
    assert "no sequence to re-run (give -s or --rotating)" in result.output
    assert "Traceback" not in result.output
