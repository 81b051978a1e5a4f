"""A framework's own source lines behind a broken class: checked in framework.json (one line naming
the file and the field), shown under the framework on the scorecard, and naming a class its record shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench.check.explain import GUESS
from bench.cli import cli
from bench.errors import UnusableInput
from bench.scorecard.build import build_scorecard, load_records, scorecard_markdown
from bench.scorecard.framework import Citation, load_framework, load_frameworks
from tests.scorecard.conftest import cell, record

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"class": "reported success on a cut-off reply", "repo": "owner/fake", "release": "v1.0",
        "path": "src/fake/loop.py", "lines": "L10-L40", "says": "It returns the text whatever the finish reason."}


def _with_citations(folder: Path, citations: Any) -> Path:
    data = json.loads((folder / "framework.json").read_text(encoding="utf-8"))
    data["citations"] = citations
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_citation_is_read_with_its_link(fake_framework: tuple[Path, Path]) -> None:
    fw = load_framework(_with_citations(fake_framework[0] / "fake", [GOOD]))
    assert fw.citations == (Citation("reported success on a cut-off reply", "owner/fake", "v1.0", "src/fake/loop.py",
                                     "L10-L40", "It returns the text whatever the finish reason."),)
    assert fw.citations[0].url == "https://github.com/owner/fake/blob/v1.0/src/fake/loop.py#L10-L40"


@pytest.mark.parametrize(("citations", "words"), [
    ({"class": "x"}, "citations: expected a list of objects"),
    (["x"], "citations[0]: expected an object with class, repo, release, path, lines, says"),
    ([{**GOOD, "says": ""}], "citations[0].says: expected a non-empty string"),
    ([GOOD, {k: v for k, v in GOOD.items() if k != "release"}], "citations[1].release: expected a non-empty string"),
    ([{**GOOD, "repo": "https://github.com/owner/fake"}], "citations[0].repo: expected owner/name"),
    ([{**GOOD, "lines": "10-40"}], "citations[0].lines: expected L<first>-L<last> or L<line>"),
    ([{**GOOD, "path": "/etc/passwd"}], "citations[0].path: expected a path inside the repository"),
    ([{**GOOD, "line": "L1"}], "citations[0]: unknown key 'line'"),
])
def test_a_malformed_citation_is_one_line_naming_the_file_and_the_field(
        fake_framework: tuple[Path, Path], citations: Any, words: str) -> None:
    folder = _with_citations(fake_framework[0] / "fake", citations)
    with pytest.raises(UnusableInput, match=f"framework.json: {words}".replace("[", r"\[").replace("]", r"\]")):
        load_framework(folder)


def test_the_scorecard_shows_each_citation_under_its_framework() -> None:
    rec = record("fake", [cell("s1", [("ok: false", "cut")])])
    rec["words"] = {"s1": ["reported success on a cut-off reply"]}
    absent = Citation("ran a tool call from a cut-off reply", "owner/fake", "v1.0", "a.py", "L3", "Runs the calls.")
    cited = Citation(*(GOOD[k] for k in ("class", "repo", "release", "path", "lines", "says")))
    text = scorecard_markdown(build_scorecard([rec], {"fake": (cited, absent)}))
    assert ("- reported success on a cut-off reply: [`src/fake/loop.py` L10-L40]"
            "(https://github.com/owner/fake/blob/v1.0/src/fake/loop.py#L10-L40) (owner/fake v1.0): "
            "It returns the text whatever the finish reason.") in text
    assert "- ran a tool call from a cut-off reply (no sequence of this record shows it): [`a.py` L3]" in text
    assert "Behind these classes" not in scorecard_markdown(build_scorecard([rec]))


def test_build_reads_the_citations_from_the_framework_folders(fake_framework: tuple[Path, Path],
                                                              tmp_path: Path) -> None:
    frameworks = fake_framework[0]
    _with_citations(frameworks / "fake", [GOOD])
    records = tmp_path / "records"
    records.mkdir()
    (records / "fake.json").write_text(json.dumps(record("fake", [cell("s1", [("ok: false", "cut")])])),
                                       encoding="utf-8")
    args = ["scorecard", "build", "--records", str(records), "--frameworks", str(frameworks),
            "--docs", str(tmp_path / "none.md"), "--readme", str(tmp_path / "none.md")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert "owner/fake/blob/v1.0/src/fake/loop.py#L10-L40" in (records / "scorecard.md").read_text(encoding="utf-8")
    _with_citations(frameworks / "fake", [{**GOOD, "lines": "ten"}])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "framework.json: citations[0].lines:" in result.output


def test_every_committed_citation_names_a_class_its_record_shows() -> None:
    rows = {r.name: r for r in build_scorecard(load_records(ROOT / "reports" / "frameworks")) if not r.beside}
    wrong = [f"{fw.folder / 'framework.json'}: citations: {c.label!r} is no class of {fw.name}'s record"
             for fw in load_frameworks(ROOT / "examples" / "frameworks") if fw.name in rows
             for c in fw.citations if not {c.label, c.label + GUESS} & {k.words for k in rows[fw.name].classes}]
    assert not wrong, "\n".join(wrong)
