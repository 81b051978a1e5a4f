"""Versions side by side: the index's final releases newer than the pin, the newest installed and
recorded beside the pinned record (kept), and the scorecard saying which verdicts changed between them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.errors import UnusableInput
from bench.scorecard.build import build_scorecard, scorecard_markdown, with_block
from bench.scorecard.bump import bump_one
from bench.scorecard.framework import load_framework
from bench.scorecard.install import STAMP, stamp_text
from bench.scorecard.releases import newer, npm_versions, pypi_versions, released
from tests.check.conftest import catalogue  # noqa: F401 (the small catalogue fixture)
from tests.scorecard.conftest import base_python, cell, record

FILE = [{"filename": "x.whl", "yanked": False}]
PYPI_ANSWER = {"releases": {"0.9": FILE, "1.0": FILE, "1.2": FILE, "1.10": FILE, "2.0rc1": FILE,
                            "1.11": [{"filename": "y.whl", "yanked": True}], "1.12": []}}


def test_only_final_releases_with_a_file_not_yanked_count() -> None:
    assert pypi_versions(PYPI_ANSWER) == {"0.9", "1.0", "1.2", "1.10"}
    assert npm_versions({"versions": {"1.0.0": {}, "1.1.0-beta.1": {}, "1.2.0": {"deprecated": "use 2"},
                                      "1.3.0": {}}}) == {"1.0.0", "1.3.0"}


def test_newer_releases_are_ordered_as_numbers(fake_framework: tuple[Path, Path]) -> None:
    fw = load_framework(fake_framework[0] / "fake")
    assert newer(fw, {"0.9", "1.0", "1.2", "1.10", "1.9"}) == ["1.2", "1.9", "1.10"]


def test_the_main_packages_move_together_and_the_other_pins_stay(fake_framework: tuple[Path, Path]) -> None:
    folder = fake_framework[0] / "fake"
    data = json.loads((folder / "framework.json").read_text(encoding="utf-8"))
    data["install"] = ["fake[extra,more]==1.0", "fake-tools==1.0", "helper==1.0.1", "other>=2"]
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    fw = load_framework(folder)
    assert fw.main_packages == ("fake", "fake-tools")
    moved = fw.at_release("1.2")
    assert moved.pip == ("fake[extra,more]==1.2", "fake-tools==1.2", "helper==1.0.1", "other>=2")
    assert (moved.key, moved.beside, moved.version) == ("fake@1.2", "1.0", "1.2")
    asked: list[str] = []

    def fetch(url: str) -> Any:
        asked.append(url)
        return {"releases": {"1.0": FILE, "1.2": FILE, "1.3": FILE}} if url.endswith("/fake/json") else \
            {"releases": {"1.0": FILE, "1.2": FILE}}
    assert released(fw, fetch) == {"1.0", "1.2"}  # 1.3 of fake alone is no release of the framework
    assert asked == ["https://pypi.org/pypi/fake/json", "https://pypi.org/pypi/fake-tools/json"]


def test_a_framework_with_no_package_at_its_version_is_one_line(fake_framework: tuple[Path, Path]) -> None:
    folder = fake_framework[0] / "fake"
    data = json.loads((folder / "framework.json").read_text(encoding="utf-8"))
    data["install"] = ["fake==0.9"]
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UnusableInput, match=r"framework\.json: install: no package is pinned at the framework.s"):
        released(load_framework(folder), lambda url: PYPI_ANSWER)


def _install_by_hand(framework_dir: Path, fw: Any) -> bool:
    """The install bump would do, without pip: the venv's python and the stamp."""
    where = framework_dir / fw.key
    (where / "bin").mkdir(parents=True)
    (where / "bin" / "python").symlink_to(base_python())
    (where / STAMP).write_text(stamp_text(fw), encoding="utf-8")
    return True


def test_bump_records_the_newest_release_beside_the_pinned_record(
        fake_framework: tuple[Path, Path], catalogue: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    monkeypatch.setattr("bench.scorecard.bump.install", _install_by_hand)
    records = project / "records"
    records.mkdir()
    (records / "fake.json").write_text("the pinned record\n", encoding="utf-8")
    fw = load_framework(frameworks / "fake")
    listed = bump_one(fw, fwdir, project, records, jobs=2, timeout=60, list_only=True, fetch=lambda url: PYPI_ANSWER)
    assert listed.said == "fake: newer than 1.0 (fake): 1.2, 1.10" and not (records / "fake@1.10.json").exists()
    done = bump_one(fw, fwdir, project, records, jobs=2, timeout=60, fetch=lambda url: PYPI_ANSWER)
    assert done.said.endswith(f"1.10 recorded in {records / 'fake@1.10.json'}")
    rec = json.loads((records / "fake@1.10.json").read_text(encoding="utf-8"))
    assert (rec["framework"]["version"], rec["framework"]["beside"], rec["framework"]["install"]) == \
        ("1.10", "1.0", ["fake==1.10"])
    assert rec["command"][-2:] == ["$FRAMEWORK_DIR/fake@1.10/bin/python", "loop.py"]
    assert rec["reproduce"]["make"] == "make scorecard FRAMEWORK=fake RELEASE=1.10"
    assert (records / "fake.json").read_text(encoding="utf-8") == "the pinned record\n"
    again = bump_one(fw, fwdir, project, records, jobs=2, timeout=60, fetch=lambda url: PYPI_ANSWER)
    assert "1.10 already recorded" in again.said
    newest = bump_one(fw, fwdir, project, records, jobs=2, timeout=60,
                      fetch=lambda url: {"releases": {"1.0": FILE}})
    assert newest.said == "fake: 1.0 is the newest release of fake"


def test_verify_with_a_release_reruns_that_release_against_its_own_record(
        fake_framework: tuple[Path, Path], catalogue: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    records = project / "records"
    _install_by_hand(fwdir, load_framework(frameworks / "fake").at_release("1.10"))
    where = ["--frameworks", str(frameworks), "--framework-dir", str(fwdir), "--records", str(records)]
    sample = ["-s", "answer-once", "-s", "truncated"]
    assert CliRunner().invoke(cli, ["scorecard", "record", "fake", "--release", "1.10", *sample, *where]).exit_code == 0
    result = CliRunner().invoke(cli, ["scorecard", "verify", "fake", "--release", "1.10", *sample, *where])
    assert result.exit_code == 0, result.output
    assert "fake@1.10: 2 of 2 cell(s) as recorded" in result.output
    pinned = CliRunner().invoke(cli, ["scorecard", "verify", "fake", *sample, *where])
    assert pinned.exit_code == 2 and f"{records / 'fake.json'}: no record to compare with" in pinned.output


def test_bump_says_it_uses_the_network() -> None:
    result = CliRunner().invoke(cli, ["scorecard", "bump", "--help"])
    assert result.exit_code == 0 and "This command uses the network" in result.output


def _two_versions() -> list[dict[str, Any]]:
    old = record("a", [cell("s1"), cell("s2", [("ok: false", "cut")]), cell("s3")], version="1.9")
    old["words"] = {"s2": ["reported success on a cut-off reply"]}
    new = record("a", [cell("s1", [("stops_within: 4", "never")]), cell("s2"), cell("s3"), cell("s4")],
                 version="1.10")
    new["framework"]["beside"] = "1.9"
    return [new, old]


def test_the_scorecard_shows_the_verdicts_that_changed_between_versions_in_words() -> None:
    text = scorecard_markdown(build_scorecard(_two_versions()))
    assert text.count("](#a)") == 1, "the summary has the pinned row alone"
    assert "## Versions side by side" in text and "### A: 1.9 to 1.10" in text
    assert "At 1.9, 2 of 3 meet every requirement" in text and "at 1.10, 3 of 4" in text
    assert "1 sequence(s) ran at one of the two only, not compared." in text
    assert "| `s1` | met every requirement | did not stop within the requests the sequence allows |" in text
    assert "| `s2` | reported success on a cut-off reply | met every requirement |" in text
    assert "`s3`" not in text.split("## Versions side by side")[1].split("## A 1.9")[0]
    assert "Also recorded at 1.10 (3 of 4): [what changed](#a-versions)." in text
    assert text == scorecard_markdown(build_scorecard(list(reversed(_two_versions()))))


def test_the_docs_block_carries_the_versions_too() -> None:
    from bench.scorecard.build import BEGIN, END
    out = with_block(f"{BEGIN}\n{END}\n", build_scorecard(_two_versions()))
    assert "### Versions side by side" in out and "#### A: 1.9 to 1.10" in out and "<a id=" not in out


def test_no_versions_section_when_each_framework_has_one_version() -> None:
    assert "Versions side by side" not in scorecard_markdown(build_scorecard([record("a", [cell("s1")])]))
