"""The default folders: the shipped catalogue, predicates and golden files, with the user's own added.

From an empty folder the commands read the shipped ones; a user's ``./sequences``, ``./predicates`` and
``./expected`` add to them (theirs replace a shipped one with the same id, said in one line);
``--only-mine`` reads only theirs; in the repository the folders are the shipped ones, read once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.catalogue.shipped import layered, shipped_folder
from bench.cli import cli
from tests.helpers import ROOT

SHIPPED_SEQUENCES = sorted(p.stem for p in (ROOT / "sequences").rglob("*.yaml"))
SHIPPED_PREDICATES = sorted(p.stem for p in (ROOT / "predicates").glob("*.py") if not p.name.startswith("_"))
TALK = ROOT / "sequences" / "seed000" / "seed000-talk-only.yaml"


def stopbench(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def listed_sequences(out: str) -> list[str]:
    head = out.partition("predicates (")[0]
    return [line.split()[0] for line in head.splitlines()[1:] if line.startswith("  ") and not line.startswith("    ")]


def test_in_the_repository_the_default_folders_are_the_shipped_ones_read_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for kind in ("sequences", "predicates", "expected"):
        assert shipped_folder(kind) == ROOT / kind  # type: ignore[arg-type]
        assert layered(kind, Path(kind), only_mine=False) == [ROOT / kind]  # type: ignore[arg-type]


def test_an_empty_folder_lists_the_shipped_catalogue_and_predicates(empty: Path) -> None:
    result = stopbench("list", "--no-entry-points")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"sequences ({len(SHIPPED_SEQUENCES)}):")
    assert listed_sequences(result.stdout) == SHIPPED_SEQUENCES
    assert f"predicates ({len(SHIPPED_PREDICATES)}):" in result.stdout
    assert "note:" not in result.stderr


def test_the_users_own_sequence_adds_to_the_shipped_ones_and_only_mine_reads_it_alone(empty: Path) -> None:
    (empty / "sequences").mkdir()
    shutil.copy(TALK, empty / "sequences" / "my-own.yaml")
    (empty / "predicates").mkdir()
    shutil.copy(ROOT / "predicates" / "seed000_fixed.py", empty / "predicates")
    added = stopbench("list", "--no-entry-points")
    assert added.exit_code == 0, added.stderr
    assert listed_sequences(added.stdout) == sorted([*SHIPPED_SEQUENCES, "my-own"])
    assert f"predicates ({len(SHIPPED_PREDICATES)}):" in added.stdout
    alone = stopbench("list", "--no-entry-points", "--only-mine")
    assert alone.exit_code == 0, alone.stderr
    assert listed_sequences(alone.stdout) == ["my-own"]
    assert "predicates (1):" in alone.stdout


def test_a_sequence_with_a_shipped_id_replaces_it_in_one_line(empty: Path) -> None:
    (empty / "sequences").mkdir()
    text = TALK.read_text(encoding="utf-8").replace('title: "talk only', 'title: "MINE talk only')
    (empty / "sequences" / TALK.name).write_text(text, encoding="utf-8")
    result = stopbench("list", "--no-entry-points")
    assert result.exit_code == 0, result.stderr
    assert listed_sequences(result.stdout) == SHIPPED_SEQUENCES
    assert "MINE talk only" in result.stdout
    notes = [line for line in result.stderr.splitlines() if "replaces" in line]
    assert notes == ["note: sequences/ replaces 1 shipped sequence(s) with the same id (yours are used): "
                     "seed000-talk-only; --only-mine uses only your folders"]


def test_an_unchanged_copy_of_a_shipped_sequence_is_no_collision(empty: Path) -> None:
    (empty / "sequences").mkdir()
    shutil.copy(TALK, empty / "sequences" / TALK.name)
    result = stopbench("list", "--no-entry-points")
    assert result.exit_code == 0
    assert "replaces" not in result.stderr


def test_a_predicate_with_a_shipped_name_replaces_it_in_one_line(empty: Path) -> None:
    (empty / "predicates").mkdir()
    (empty / "predicates" / "finish_only.py").write_text(
        '"""Mine: stop at once."""\nfrom bench import Stop, predicate\n\n'
        "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='first')\n",
        encoding="utf-8")
    result = stopbench("list", "--no-entry-points")
    assert result.exit_code == 0, result.stderr
    assert "  finish_only  [no cap]  Mine: stop at once." in result.stdout
    assert ("note: predicates/ replaces 1 shipped predicate(s) with the same id (yours are used): finish_only; "
            "--only-mine uses only your folders") in result.stderr.splitlines()


def test_run_from_an_empty_folder_writes_its_reports_here_and_every_shipped_cell_matches(empty: Path) -> None:
    result = stopbench("run", "--no-entry-points", "-p", "seed000_fixed", "-q")
    assert result.exit_code == 0, result.stderr
    assert f"{len(SHIPPED_SEQUENCES)} cells: {len(SHIPPED_SEQUENCES)} match, 0 mismatch" in result.stderr
    assert (empty / "reports" / "decision-table.md").is_file()


def test_a_golden_file_of_the_users_own_replaces_the_shipped_one(empty: Path) -> None:
    (empty / "expected").mkdir()
    golden = (ROOT / "expected" / "seed000_fixed.yaml").read_text(encoding="utf-8")
    (empty / "expected" / "seed000_fixed.yaml").write_text(golden.replace("outcome: stopped", "outcome: capped", 1),
                                                           encoding="utf-8")
    result = stopbench("run", "--no-entry-points", "-p", "seed000_fixed", "-q", "--no-reports")
    assert result.exit_code == 1
    assert ("note: expected/ replaces 1 shipped golden file(s) with the same id (yours are used): seed000_fixed; "
            "--only-mine uses only your folders") in result.stderr.splitlines()


def test_accept_from_an_empty_folder_writes_the_users_own_golden_file(empty: Path) -> None:
    (empty / "predicates").mkdir()
    (empty / "predicates" / "mine.py").write_text(
        '"""Stop at once."""\nfrom bench import Stop, predicate\n\n'
        "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='first')\n",
        encoding="utf-8")
    before = sorted(p.name for p in shipped_folder("expected").glob("*"))  # type: ignore[union-attr]
    result = stopbench("accept", "mine", "--no-entry-points", "--basis", "rule", "--derived", "mine stops at once")
    assert result.exit_code == 0, result.stderr
    assert (empty / "expected" / "mine.yaml").is_file()
    assert sorted(p.name for p in shipped_folder("expected").glob("*")) == before  # type: ignore[union-attr]
