"""The scorecard is a pure function of the records: counts, classes, examples, and the same bytes every time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from bench.cli import cli
from bench.scorecard.build import (
    BEGIN,
    END,
    README_BEGIN,
    README_END,
    build_scorecard,
    load_records,
    scorecard_markdown,
    with_block,
    with_readme_block,
)
from tests.scorecard.conftest import cell, record

ROOT = Path(__file__).resolve().parents[2]


def test_counts_met_and_classes_per_framework() -> None:
    rows = build_scorecard([record("zeta", [cell("a"), cell("b", [("ok: false", "success on a cut")])]),
                            record("alpha", [cell("a", [("stops_within: 4", "never"), ("progress: 3", "again")]),
                                             cell("b", [("stops_within: 2", "late")]),
                                             cell("c", outcome="crashed", error="boom")])])
    assert [r.name for r in rows] == ["alpha", "zeta"]
    alpha, zeta = rows
    assert (alpha.run, alpha.met, zeta.run, zeta.met) == (3, 0, 2, 1)
    # classes by sequences broken, then words; the parameter is not part of the class
    assert [(c.key, c.sequences) for c in alpha.classes] == [("stops_within", 2), ("crashed", 1), ("progress", 1)]
    assert [e.sequence for e in alpha.classes[0].examples] == ["a", "b"]
    assert zeta.classes[0].key == "ok: false" and "not an answer" in zeta.classes[0].words


def test_a_class_is_the_requirement_and_what_the_cell_did() -> None:
    rec = record("a", [cell("s1", [("ok: false", "d")]), cell("s2", [("ok: false", "d")]),
                       cell("s3", [("ok: false", "d")])])
    rec["cells"][2]["violations"].append({"requirement": "answer_on: [2]", "step": 1, "detail": "d"})
    rec["words"] = {"s1": ["reported success on a cut-off reply"], "s2": ["reported success on a filtered reply"],
                    "s3": ["reported success on a cut-off reply", "reported success on a cut-off reply"]}
    [row] = build_scorecard([rec])
    assert [(c.key, c.words, c.sequences) for c in row.classes] == [
        ("answer_on, ok: false", "reported success on a cut-off reply", 2),
        ("ok: false", "reported success on a filtered reply", 1)]
    assert "reported success on a cut-off reply (2); reported success on a filtered reply (1)" in \
        scorecard_markdown([row])


def test_markdown_is_deterministic_and_ordered() -> None:
    records = [record("b", [cell("s1")]), record("a", [cell("s1", [("no_dropped_calls", "dropped | two")])])]
    text = scorecard_markdown(build_scorecard(records))
    assert text == scorecard_markdown(build_scorecard(list(reversed(records))))
    assert text.index("## A 1.0") < text.index("## B 1.0")
    assert "dropped \\| two" in text  # a pipe in a detail does not break the table


def test_docs_block_replaced_between_markers() -> None:
    rows = build_scorecard([record("a", [cell("s1")])])
    doc = f"intro\n{BEGIN}\nold\n{END}\nafter\n"
    out = with_block(doc, rows)
    assert out.startswith("intro\n") and out.endswith(f"{END}\nafter\n") and "old" not in out
    assert "../reports/frameworks/scorecard.md#a" in out
    assert with_block(out, rows) == out


def _build_check(records: Path, docs: Path, readme: Path) -> int:
    return CliRunner().invoke(cli, ["scorecard", "build", "--check", "--records", str(records),
                                    "--docs", str(docs), "--readme", str(readme)]).exit_code


def test_committed_scorecard_is_what_the_committed_records_say() -> None:
    assert _build_check(ROOT / "reports" / "frameworks", ROOT / "docs" / "frameworks.md", ROOT / "README.md") == 0


def test_readme_leads_with_the_scorecard() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_BEGIN in readme and README_END in readme
    assert readme.index(README_BEGIN) < readme.index("\n## "), "the scorecard comes before the first section"
    rows = build_scorecard(load_records(ROOT / "reports" / "frameworks"))
    assert len(rows) >= 15
    for r in rows:  # a row per framework at its pin; a release recorded beside it is on the scorecard page
        row = f"](reports/frameworks/scorecard.md#{r.name}) | {r.version} | {r.met} of {r.run} |"
        assert (row in readme) != bool(r.beside), row


def test_readme_block_replaced_between_markers() -> None:
    rows = build_scorecard([record("a", [cell("s1")])])
    doc = f"# x\nintro\n{README_BEGIN}\nold\n{README_END}\n## after\n"
    out = with_readme_block(doc, rows)
    assert "old" not in out and "| 1 of 1 |" in out and out.endswith(f"{README_END}\n## after\n")
    assert with_readme_block(out, rows) == out


def test_an_edited_record_makes_the_committed_scorecard_stale(tmp_path: Path) -> None:
    records, docs, readme = tmp_path / "frameworks", tmp_path / "frameworks.md", tmp_path / "README.md"
    shutil.copytree(ROOT / "reports" / "frameworks", records)
    shutil.copy(ROOT / "docs" / "frameworks.md", docs)
    shutil.copy(ROOT / "README.md", readme)
    if not load_records(records):  # nothing recorded yet: one record, and the scorecard built from it
        (records / "a.json").write_text(json.dumps(record("a", [cell("s1")])), encoding="utf-8")
        assert CliRunner().invoke(cli, ["scorecard", "build", "--records", str(records), "--docs",
                                        str(docs), "--readme", str(readme)]).exit_code == 0
    assert _build_check(records, docs, readme) == 0
    path = sorted(records.glob("*.json"))[0]
    data = json.loads(path.read_text(encoding="utf-8"))
    met = [c for c in data["cells"] if not c["violations"] and c["outcome"] != "crashed"]
    edited = met[0] if met else data["cells"][0]
    edited["violations"].append({"requirement": "edited_requirement", "step": 1, "detail": "edited"})
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _build_check(records, docs, readme) == 1


def test_a_malformed_record_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{", encoding="utf-8")
    result = CliRunner().invoke(cli, ["scorecard", "build", "--records", str(tmp_path), "--docs",
                                      str(tmp_path / "none.md")])
    assert result.exit_code == 2 and "x.json: not a framework record" in result.output
