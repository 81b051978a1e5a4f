"""The scorecard says which verdicts rest on a guess (a tool result read by its wording) and does not
count a failure that rests only on one as certain; ``scorecard rejudge`` marks them in a record made
before the judge did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.scorecard.build import build_scorecard, scorecard_markdown
from tests.scorecard.conftest import cell, record

ROOT = Path(__file__).resolve().parents[2]
JUDGED_BY_WORDING = Path(__file__).parent / "fixtures" / "judged-by-wording"
"""A record's cell made before ``--bench-tools`` reached the judge (its README says which)."""


def guessed_cell(sequence: str, requirement: str) -> dict[str, object]:
    c = cell(sequence, [(requirement, "ran write_file from a truncated (length) turn")])
    c["violations"][0]["guess"] = True  # type: ignore[index]
    return c


def test_a_failure_only_on_a_guess_is_said_so_and_not_counted_as_certain() -> None:
    row, = build_scorecard([{**record("x", [cell("a"), guessed_cell("b", "no_truncated_runs"),
                                            cell("c", [("ok: false", "success on a cut")])]), "guessed": ["d"]}])
    assert (row.run, row.met, row.guessed_only, row.broken) == (3, 1, 1, 1)
    assert row.guessed == ("b",)  # "d" is not a cell of the record
    assert any(c.words.endswith("(a guess: a result read by its wording)") for c in row.classes)
    text = scorecard_markdown([row])
    assert "| 3 | 1 | 1 |" in text  # sequences run, meet every requirement, verdicts on a guess
    assert "1 verdict rests on a guess" in text and "1 of them break requirements only so" in text


def test_rejudge_marks_the_guesses_of_a_record_made_before_the_judge_did(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    committed = json.loads((JUDGED_BY_WORDING / "openai_agents.json").read_text(encoding="utf-8"))
    cut = next(c for c in committed["cells"] if c["sequence"] == "chat-length-cut-json-repeat")
    old = {**committed, "cells": [{**cut, "violations": [{k: v for k, v in x.items() if k != "guess"}
                                                         for x in cut["violations"]]}]}
    old.pop("guessed", None)
    (tmp_path / "openai_agents.json").write_text(json.dumps(old), encoding="utf-8")
    monkeypatch.chdir(ROOT)  # the catalogue the cells are judged on
    result = CliRunner().invoke(cli, ["scorecard", "rejudge", "openai_agents", "--records", str(tmp_path)])
    assert result.exit_code == 0, result.output
    new = json.loads((tmp_path / "openai_agents.json").read_text(encoding="utf-8"))
    assert [(v["requirement"], v.get("guess", False)) for v in new["cells"][0]["violations"]] == [
        ("stops_within: 6", False), ("no_truncated_runs", True)]
    assert new["guessed"] == ["chat-length-cut-json-repeat"]


def test_verify_does_not_compare_the_result_texts_a_record_shows() -> None:
    from bench.scorecard.verify import compare_cells
    old = cell("a")
    now = {**old, "decisions": [{**d, "texts": [[0, "done: write_file"]]} for d in old["decisions"]]}  # type: ignore[union-attr]
    assert compare_cells({"cells": [old]}, {"cells": [now]}) == []
    moved = {**now, "ok": False}
    assert [d.field for d in compare_cells({"cells": [old]}, {"cells": [moved]})] == ["ok"]
