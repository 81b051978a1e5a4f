"""A cell's verdict, its glyph and its words are written once (bench/report/labels.py); the Markdown,
the page (as data its script reads) and the corpus page take them from there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench import Continue, Stop, predicate
from bench.engine.model import Decision, Turn
from bench.engine.predicate import State
from bench.engine.replay import replay
from bench.report.labels import GLYPHS, VERDICT_WORDS, VERDICTS, verdict, verdict_table
from bench.report.page import build_page
from tests.helpers import ROOT, answer, seq, tools

GLYPH_CHARS = re.compile("[✓✗↻∞‼]")


@predicate()
def ends_ok(turn: Turn, state: State) -> Decision:
    return Continue("calls") if turn.tool_calls else Stop("no_tool_calls", ok=True, rule="done")


@predicate()
def ends_not_ok(turn: Turn, state: State) -> Decision:
    return Stop("no_tool_calls", ok=False, rule="done")


@predicate()
def never_ends(turn: Turn, state: State) -> Decision:
    return Continue("calls")


def test_a_stopped_cell_s_verdict_is_its_ok_and_any_other_cell_s_is_its_outcome() -> None:
    assert verdict(replay(seq(tools("read_file"), answer()), ends_ok)) == "ok"
    assert verdict(replay(seq(answer()), ends_not_ok)) == "not-ok"
    assert verdict(replay(seq(tools("read_file"), answer()), never_ends)) == "running"


def test_every_verdict_has_one_glyph_and_its_words() -> None:
    assert list(GLYPHS) == list(VERDICT_WORDS) == list(VERDICTS)
    assert len(set(GLYPHS.values())) == len(VERDICTS)


def test_no_module_but_labels_writes_a_verdict_glyph() -> None:
    holders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bench").rglob("*")
                     if p.suffix in (".py", ".js", ".j2", ".html", ".css")
                     and GLYPH_CHARS.search(p.read_text(encoding="utf-8")))
    assert holders == ["bench/report/labels.py"]


def test_the_page_carries_the_glyphs_and_words_in_its_data_for_its_script() -> None:
    html = build_page([], [], [])
    found = re.search(r'<script type="application/json" id="stopbench-data">(.*?)</script>', html, re.S)
    assert found is not None
    assert json.loads(found[1])["verdicts"] == json.loads(json.dumps(verdict_table()))
    script = (ROOT / "bench/report/page/assets/page.js").read_text(encoding="utf-8")
    assert "DATA.verdicts.glyphs" in script and "DATA.verdicts.words" in script
    assert not Path(ROOT / "bench/report/page/assets/page.js").read_text(encoding="utf-8").count("stopped, success")


def test_no_module_but_labels_derives_ok_or_not_ok() -> None:
    derives = re.compile(r"""["']ok["'] if [^\n]* else ["']not-ok["']""")
    holders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bench").rglob("*.py")
                     if derives.search(p.read_text(encoding="utf-8")))
    assert holders == ["bench/report/labels.py"]
