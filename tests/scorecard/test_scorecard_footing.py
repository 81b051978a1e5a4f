"""A record says which catalogue it ran on (each sequence by its file's digest); a record off the
catalogue of its wires is named with what was added, removed or changed; ``record --changed`` runs
only those and gives the bytes a whole record gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.catalogue.load import load_catalogue
from bench.cli import cli
from bench.scorecard.footing import digest_of, drift, footing_problem, stale_records, wire_files
from tests.check.conftest import catalogue  # noqa: F401 (the small catalogue fixture)
from tests.scorecard.conftest import cell, record


def _on(files: dict[str, str], cells: list[str]) -> dict[str, object]:
    rec = record("fake", [cell(s) for s in cells])
    rec["catalogue"] = {"digest": digest_of(files), "files": files, "sequences": len(files)}
    return rec


def test_drift_names_the_sequences_added_removed_changed_and_unknown() -> None:
    rec = _on({"a": "1", "b": "2", "c": "3"}, ["a", "b", "c", "d"])
    found = drift(rec, {"a": "1", "b": "9", "d": "4", "e": "5"})
    assert (found.added, found.removed, found.changed, found.unknown) == (("e",), ("c",), ("b",), ("d",))
    assert found.to_run == ("b", "d", "e")
    assert found.words() == "1 added (e); 1 removed (c); 1 changed (b); 1 with no file digest (d)"
    assert not drift(_on({"a": "1", "b": "2"}, ["a", "b"]), {"a": "1", "b": "2"})
    many = drift(_on({}, []), {f"s{i:02}": "1" for i in range(14)})
    assert many.words() == "14 added (s00, s01, s02, s03, s04, s05, s06, s07, s08, s09, s10, s11, and 2 more)"


def test_a_record_off_its_wires_catalogue_is_one_line_naming_the_framework_and_the_command() -> None:
    rec = _on({"a": "1"}, ["a"])
    assert footing_problem(rec, []) == ("fake 1.0: not on the catalogue of its wires: 1 removed (a); "
                                        "stopbench scorecard record fake --changed")
    rec["framework"] = {**rec["framework"], "beside": "0.9"}  # type: ignore[dict-item]
    assert "stopbench scorecard record fake --release 1.0 --changed" in (footing_problem(rec, []) or "")


def test_a_digest_that_is_not_its_files_digest_is_named(catalogue: Path) -> None:  # noqa: F811
    sequences = load_catalogue(catalogue).sequences
    files = wire_files(sequences, ["openai-chat"])
    rec = _on(files, sorted(files))
    assert footing_problem(rec, sequences) is None
    rec["catalogue"]["digest"] = "0" * 16  # type: ignore[index]
    assert "catalogue.digest '0000000000000000' is not the digest" in (footing_problem(rec, sequences) or "")


def test_the_digest_is_of_the_files_not_of_their_order() -> None:
    assert digest_of({"a": "1", "b": "2"}) == digest_of({"b": "2", "a": "1"}) != digest_of({"a": "1", "b": "3"})


@pytest.fixture
def recorded(fake_framework: tuple[Path, Path], catalogue: Path,  # noqa: F811
             monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """The fake framework recorded whole on the small catalogue: (the command's folder options, the record)."""
    frameworks, fwdir = fake_framework
    monkeypatch.chdir(catalogue.parent)
    where = ["--frameworks", str(frameworks), "--framework-dir", str(fwdir),
             "--records", str(catalogue.parent / "records")]
    assert CliRunner().invoke(cli, ["scorecard", "record", "fake", *where]).exit_code == 0
    return where, catalogue.parent / "records" / "fake.json"


def test_a_whole_record_keeps_each_sequence_file_digest(recorded: tuple[list[str], Path], catalogue: Path) -> None:  # noqa: F811
    _, path = recorded
    rec = json.loads(path.read_text(encoding="utf-8"))
    files = wire_files(load_catalogue(catalogue).sequences, ["openai-chat"])
    assert rec["catalogue"] == {"digest": digest_of(files), "files": files, "sequences": 4}
    assert stale_records(path.parent, catalogue) == []


def test_changed_runs_only_the_new_and_edited_sequences_and_gives_a_whole_records_bytes(
        recorded: tuple[list[str], Path], catalogue: Path) -> None:  # noqa: F811
    where, path = recorded
    (catalogue / "answer-repeat.yaml").unlink()
    edited = catalogue / "truncated.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    added = catalogue / "answer-twice.yaml"
    added.write_text((catalogue / "answer-once.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    [line] = stale_records(path.parent, catalogue)
    assert "fake 1.0: not on the catalogue of its wires: 1 added (answer-twice); 1 removed (answer-repeat); " \
           "1 changed (truncated)" in line
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--changed", *where])
    assert result.exit_code == 0, result.output
    assert "2 sequence(s) recorded, 1 dropped (answer-repeat)" in result.output
    assert "new answer-twice: met every requirement" in result.output
    assert stale_records(path.parent, catalogue) == []
    merged = path.read_text(encoding="utf-8")
    again = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--changed", *where])
    assert again.exit_code == 0 and "on the catalogue already; nothing run" in again.output
    assert path.read_text(encoding="utf-8") == merged
    assert CliRunner().invoke(cli, ["scorecard", "record", "fake", *where]).exit_code == 0
    assert path.read_text(encoding="utf-8") == merged  # the same bytes as recording it whole


def test_changed_says_which_verdicts_moved(recorded: tuple[list[str], Path], catalogue: Path) -> None:  # noqa: F811
    where, path = recorded
    rec = json.loads(path.read_text(encoding="utf-8"))
    for c in rec["cells"]:
        if c["sequence"] == "truncated":
            c["violations"] = []  # as if it met every requirement when it was recorded
    rec["catalogue"]["files"]["truncated"] = "0" * 16  # and its file changed since
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--changed", *where])
    assert result.exit_code == 0, result.output
    assert "truncated: met every requirement -> reported success on a cut-off reply" in result.output
    assert "1 verdict(s) moved" in result.output


def test_changed_refuses_sequences_given_and_a_missing_record(recorded: tuple[list[str], Path]) -> None:
    where, path = recorded
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--changed", "-s", "truncated", *where])
    assert result.exit_code == 2 and "--changed chooses the sequences itself" in result.output
    path.unlink()
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--changed", *where])
    assert result.exit_code == 2 and "no record to update" in result.output
