"""The golden gate: every cell of the shipped catalogue through the shipped predicates matches its
reviewed golden cell. This is what makes `make test` (and CI) fail on a decision that changed.

The other tests show the gate bites: pointed at a temporary copy with one altered golden cell, a
deleted sequence, a crashing or a new predicate, it reports exactly those cells, each with the
command that reviews it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bench.golden.gate import GateReport, gate
from tests.helpers import ROOT

SEQUENCES, PREDICATES, EXPECTED = ROOT / "sequences", ROOT / "predicates", ROOT / "expected"


def test_every_shipped_cell_matches_its_reviewed_golden_cell() -> None:
    report = gate(SEQUENCES, PREDICATES, EXPECTED)
    assert report.cells > 0
    if not report.passed:
        pytest.fail(str(report), pytrace=False)


def _one_port(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A predicates folder with the shipped `name` alone, and a copy of its golden file."""
    preds, expected = tmp_path / "predicates", tmp_path / "expected"
    preds.mkdir()
    expected.mkdir()
    shutil.copy(PREDICATES / f"{name}.py", preds)
    shutil.copy(EXPECTED / f"{name}.yaml", expected)
    return preds, expected


def _set_field(golden_file: Path, sequence: str, field: str, value: str) -> None:
    """Change one field of one cell in the text of a golden file (as a careless hand edit would)."""
    text = golden_file.read_text(encoding="utf-8")
    cell = re.compile(rf"(\n  {re.escape(sequence)}:\n(?:    .*\n)*?    {field}: )[^\n]*")
    new, n = cell.subn(lambda m: m.group(1) + value, text, count=1)
    assert n == 1, f"no {field} in the cell {sequence} of {golden_file}"
    golden_file.write_text(new, encoding="utf-8")


def _new_problems(altered: GateReport, baseline: GateReport) -> list[str]:
    return [p for p in altered.problems if p not in baseline.problems]


def test_one_altered_hermes_cell_is_reported_alone_with_its_review_commands(tmp_path: Path) -> None:
    preds, expected = _one_port(tmp_path, "hermes")
    baseline = gate(SEQUENCES, preds, expected)
    _set_field(expected / "hermes.yaml", "chat-dropped-calls-x3", "steps", "999")
    altered = gate(SEQUENCES, preds, expected)
    assert not altered.passed
    new = _new_problems(altered, baseline)
    assert len(new) == 1, "\n\n".join(new)
    assert new[0].startswith("MISMATCH chat-dropped-calls-x3 x hermes: steps differs")
    assert "    expected: 999\n" in new[0]
    assert ("review: stopbench show chat-dropped-calls-x3 -p hermes, then, if the new decision is right: "
            "stopbench accept hermes -s chat-dropped-calls-x3 --replace") in new[0]
    assert len(altered.problems) == len(baseline.problems) + 1


def test_an_altered_path_is_reported_at_its_first_differing_step(tmp_path: Path) -> None:
    preds, expected = _one_port(tmp_path, "seed000_fixed")
    baseline = gate(SEQUENCES, preds, expected)
    _set_field(expected / "seed000_fixed.yaml", "seed000-truncated-max-tokens", "path", "[resend length]")
    new = _new_problems(gate(SEQUENCES, preds, expected), baseline)
    assert [p.splitlines()[:3] for p in new] == [[
        "MISMATCH seed000-truncated-max-tokens x seed000_fixed: step 1 (turn 0) differs",
        "    expected: resend length",
        "    actual:   stop length -> length, ok=false"]]


def test_expectations_for_a_deleted_sequence_are_stale(tmp_path: Path) -> None:
    preds, expected = _one_port(tmp_path, "seed000_fixed")
    sequences = tmp_path / "sequences"
    shutil.copytree(SEQUENCES, sequences)
    baseline = gate(sequences, preds, expected)
    (sequences / "seed000" / "seed000-talk-only.yaml").unlink()
    new = _new_problems(gate(sequences, preds, expected), baseline)
    assert new == ["STALE seed000-talk-only x seed000_fixed: expected, but there is no such sequence\n"
                   "    review: stopbench accept seed000_fixed --prune"]


def test_a_crashing_predicate_and_a_new_one_fail_the_gate(tmp_path: Path) -> None:
    sequences = tmp_path / "sequences"
    shutil.copytree(SEQUENCES / "seed000", sequences / "seed000")
    preds, expected = tmp_path / "predicates", tmp_path / "expected"
    preds.mkdir()
    expected.mkdir()
    (preds / "raiser.py").write_text("from bench import predicate\n\n@predicate()\ndef decide(turn, state):\n"
                                     "    raise KeyError('boom')\n", encoding="utf-8")
    (preds / "fresh.py").write_text("from bench import Stop, predicate\n\n@predicate()\ndef decide(turn, state):\n"
                                    "    return Stop('done', ok=True, rule='first')\n", encoding="utf-8")
    report = gate(sequences, preds, expected)
    assert report.cells == 8
    crashed = [p for p in report.problems if p.startswith("CRASHED ")]
    unreviewed = [p for p in report.problems if p.startswith("UNREVIEWED ")]
    assert len(crashed) == 4 and len(unreviewed) == 4 and len(report.problems) == 8
    assert "x raiser: " in crashed[0] and "KeyError" in crashed[0]
    assert "a crashed cell is never accepted" in crashed[0]
    assert unreviewed[0].endswith("--basis source|observed|rule")


def test_a_golden_file_with_no_predicate_fails_the_gate(tmp_path: Path) -> None:
    preds, expected = _one_port(tmp_path, "seed000_fixed")
    baseline = gate(SEQUENCES, preds, expected)
    shutil.copy(EXPECTED / "seed000_content.yaml", expected)
    new = _new_problems(gate(SEQUENCES, preds, expected), baseline)
    assert len(new) == 1 and new[0].startswith("ORPHAN GOLDEN FILE ")


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPECTED.glob("*.yaml")))
def test_every_shipped_golden_file_has_its_predicate(name: str) -> None:
    assert (PREDICATES / f"{name}.py").is_file()
