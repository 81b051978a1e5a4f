"""`--junit PATH` on run and check: one testcase per cell, failing as the command's verdict does, same bytes
for the same cells."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner, Result

from bench.catalogue.document import dump_sequence
from bench.cli import cli
from bench.engine.model import Cell, Violation
from bench.report.junit import Case, check_case, junit_xml
from tests.check.conftest import ANSWER, fake, small_sequence

CRASHING = ('"""Crashes."""\nfrom bench import predicate\n\n@predicate()\ndef decide(turn, state):\n'
            "    raise RuntimeError('boom')\n")
AT_ONCE = ('"""Stop at once."""\nfrom bench import Stop, predicate\n\n@predicate()\ndef decide(turn, state):\n'
           "    return Stop('done', ok=True, rule='first')\n")


def stopbench(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def cases(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(classname, name) -> (verdict element or 'passed', its type)."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        bad = [e for e in case if e.tag in ("failure", "error", "skipped")]
        out[(case.get("classname", ""), case.get("name", ""))] = (bad[0].tag, bad[0].get("type", "")) if bad \
            else ("passed", "")
    return out


def test_run_writes_one_passing_testcase_per_matching_cell_and_the_same_bytes_twice(project: Path) -> None:
    first = stopbench("run", "--no-entry-points", "--junit", "out/run.xml", "--no-reports")
    assert first.exit_code == 0, first.stderr
    text = (project / "out" / "run.xml").read_bytes()
    got = cases(project / "out" / "run.xml")
    assert len(got) == 16
    assert set(got.values()) == {("passed", "")}
    assert ("stopbench.run.seed000_fixed", "seed000-talk-only") in got
    root = ET.fromstring(text)
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("16", "0", "0", "0")
    assert stopbench("run", "--no-entry-points", "--junit", "out/run.xml", "--no-reports").exit_code == 0
    assert (project / "out" / "run.xml").read_bytes() == text


def test_run_marks_a_mismatch_a_failure_a_crash_an_error_and_an_unreviewed_cell_skipped(project: Path) -> None:
    golden = project / "expected" / "seed000_fixed.yaml"
    text = golden.read_text(encoding="utf-8")
    at = text.index("\n  seed000-talk-only:\n")
    golden.write_text(text[:at] + text[at:].replace("outcome: stopped", "outcome: capped", 1), encoding="utf-8")
    (project / "predicates" / "crashing.py").write_text(CRASHING, encoding="utf-8")
    (project / "predicates" / "at_once.py").write_text(AT_ONCE, encoding="utf-8")
    result = stopbench("run", "--no-entry-points", "--junit", "run.xml", "--no-reports")
    assert result.exit_code == 1
    got = cases(project / "run.xml")
    assert len(got) == 24
    mismatched = [k for k, v in got.items() if v == ("failure", "mismatch")]
    assert mismatched == [("stopbench.run.seed000_fixed", "seed000-talk-only")]
    assert {v for k, v in got.items() if k[0] == "stopbench.run.crashing"} == {("error", "crashed")}
    assert {v for k, v in got.items() if k[0] == "stopbench.run.at_once"} == {("skipped", "unreviewed")}
    strict = stopbench("run", "--no-entry-points", "--junit", "strict.xml", "--no-reports", "--strict")
    assert strict.exit_code == 1
    assert {v for k, v in cases(project / "strict.xml").items() if k[0] == "stopbench.run.at_once"} == {
        ("failure", "unreviewed")}


def test_run_lists_a_broken_requirement_and_fails_on_it_only_with_fail_on_violations(project: Path) -> None:
    (project / "predicates" / "at_once.py").write_text(AT_ONCE, encoding="utf-8")
    stopbench("run", "--no-entry-points", "-p", "at_once", "--junit", "plain.xml", "--no-reports")
    plain = ET.parse(project / "plain.xml").getroot()
    outs = [e.text or "" for e in plain.iter("system-out")]
    assert any("requirements broken (not failing this run)" in t for t in outs)
    assert not list(plain.iter("failure"))
    strict = stopbench("run", "--no-entry-points", "-p", "at_once", "--junit", "strict.xml", "--no-reports",
                       "--fail-on-violations")
    assert strict.exit_code == 1
    assert ("failure", "violation") in cases(project / "strict.xml").values()


def test_check_writes_a_testcase_per_live_cell_failing_on_a_broken_requirement(tmp_path: Path) -> None:
    folder = tmp_path / "sequences"
    for seq in (small_sequence("answer-once", [ANSWER], require={"ok": True}),
                small_sequence("truncated", [{"finish": "length", "content": "The answer is"}],
                               require={"ok": False})):
        dump_sequence(seq, folder / f"{seq.id}.yaml")
    result = CliRunner().invoke(cli, ["check", "--sequences", str(folder), "--no-report", "--name", "mine",
                                      "--junit", str(tmp_path / "check.xml"), "--", *fake("answer")])
    assert result.exit_code == 1
    assert cases(tmp_path / "check.xml") == {("stopbench.check.mine@live", "answer-once"): ("passed", ""),
                                             ("stopbench.check.mine@live", "truncated"): ("failure", "violation")}


def test_the_document_is_sorted_escaped_and_free_of_characters_xml_cannot_hold() -> None:
    crashed = Cell("b<&>\"seq", "p@live", "crashed", (), error="boom \x1b[31m\x00 <tag>")
    broken = Cell("a-seq", "p@live", "stopped", (), reason="r", ok=True,
                  violations=(Violation("ok", 1, "said ok on a cut reply"),))
    text = junit_xml("stopbench check", [check_case(crashed), check_case(broken), Case("a.class", "z")])
    root = ET.fromstring(text)  # parses: escaped, no control characters
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert names == [("a.class", "z"), ("stopbench.check.p@live", "a-seq"), ("stopbench.check.p@live", 'b<&>"seq')]
    error = next(root.iter("error"))
    assert error.get("message") == "boom [31m <tag>"
    assert next(root.iter("failure")).text == "ok at step 1: said ok on a cut reply"
