"""The default folders: the shipped catalogue, predicates and golden files, with the user's own added.

From an empty folder the commands read the shipped ones; a user's ``./sequences``, ``./predicates`` and
``./expected`` add to them (theirs replace a shipped one with the same id, said in one line);
``--only-mine`` reads only theirs; in the repository the folders are the shipped ones, read once.
"""

from __future__ import annotations

import csv
import importlib.metadata
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tomllib
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


def test_show_steps_through_a_shipped_sequence_from_an_empty_folder(empty: Path) -> None:
    result = stopbench("show", "seed000-talk-only", "-p", "seed000_fixed", "--no-entry-points")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("seed000-talk-only: ")
    assert "\nseed000_fixed: " in result.stdout


def test_fuzz_from_an_empty_folder_saves_its_finds_in_the_users_own_folder(empty: Path) -> None:
    shipped = sorted(p.name for p in shipped_folder("sequences").rglob("*"))  # type: ignore[union-attr]
    result = stopbench("fuzz", "-p", "seed000_fixed", "--property", "no-false-ok", "--max-examples", "20", "--save",
                       "--no-entry-points")
    assert result.exit_code == 0, result.stderr
    assert (empty / "reports" / "fuzz-findings.md").is_file()
    assert [p.parent.name for p in (empty / "sequences").rglob("*.yaml")] == ["found"]
    assert sorted(p.name for p in shipped_folder("sequences").rglob("*")) == shipped  # type: ignore[union-attr]


def test_serve_serves_a_shipped_sequence_from_an_empty_folder(empty: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "STOPBENCH_ONLY_MINE"}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "serve", "seed000-talk-only", "--port", "0"], cwd=empty,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("serving seed000-talk-only (1 turns, then: end) at http://127.0.0.1:"), first
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_version_is_the_pyprojects_read_through_the_installed_metadata() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    result = stopbench("--version")
    assert result.stdout == f"stopbench {version}\n"
    assert importlib.metadata.version("stopbench") == version


def test_corpus_from_a_folder_without_predicates_replays_through_the_shipped_ones(empty: Path) -> None:
    from bench.corpus.generate import corpus_lines

    (empty / "corpus.jsonl").write_bytes(b"".join(itertools.islice(corpus_lines(40_000), 20)))
    result = stopbench("corpus", "corpus.jsonl", "--out", "out", "--no-entry-points", "-q")
    assert result.exit_code == 0, result.stderr
    with (empty / "out" / "cells.csv").open(encoding="utf-8") as fh:
        assert sorted({r["predicate"] for r in csv.DictReader(fh)}) == SHIPPED_PREDICATES


def test_an_installed_predicate_named_as_a_folders_one_is_reported_broken_beside_it(
        empty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.cli._common as common
    from bench.engine.discovery import Broken, load_file
    from bench.engine.predicate import Predicate

    installed = load_file(ROOT / "predicates" / "seed000_fixed.py")
    assert isinstance(installed, Predicate)
    real = common.discover
    monkeypatch.setattr(common, "discover", lambda folder, *, entry_points_too: real(folder, entry_points_too=False)
                        if folder is not None else [installed.named("finish_only", "entry point pkg:rule", "")])
    (empty / "predicates").mkdir()
    (empty / "predicates" / "mine.py").write_text(
        '"""Mine."""\nfrom bench import Stop, predicate\n\n'
        "@predicate()\ndef decide(turn, state):\n    return Stop('done', ok=True, rule='first')\n", encoding="utf-8")
    loaded = common.discover_in(common.layered("predicates", Path("predicates"), only_mine=False),
                                entry_points_too=True)
    names = [p.name for p in loaded]
    assert names == [*sorted([*SHIPPED_PREDICATES, "mine"]), "finish_only@entry point pkg:rule"]
    by_name = {p.name: p for p in loaded}
    assert by_name["finish_only"].origin.endswith("predicates/finish_only.py")
    broken = by_name["finish_only@entry point pkg:rule"]
    assert isinstance(broken, Broken) and broken.error.startswith("name 'finish_only' is already taken by ")
