"""The page's data and HTML without a browser: citations become the right links, cells carry their
steps, rules, violations, golden and conformance status, summaries count what they say, and the page
is one deterministic, self-contained file."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from bench import Cited, Continue, Note, Remind, Resend, Source, Stop, predicate
from bench.catalogue.load import load_catalogue
from bench.engine.discovery import Broken, discover
from bench.engine.model import Decision, Requirement, Sequence, Turn, TurnError
from bench.engine.predicate import Predicate, State
from bench.engine.replay import replay
from bench.golden.expected import ExpectedCell, Golden, GoldenFile, Mismatch, load_golden
from bench.golden.run import Result, run
from bench.report.page import build_page, embed_json, load_conformance
from bench.report.page.citations import provenance_links
from bench.report.page.data import after_unusable, page_data, predicate_data, unfold
from bench.report.page.svg import bar_chart, heat_map
from tests.helpers import ROOT, answer, seq, tools, truncated

# ---------------------------------------------------------------- citations


def test_a_recorded_capture_links_its_file_at_its_commit_and_issues_link_to_the_tracker() -> None:
    text = ("recorded capture: vercel/ai@ed857f50f1 packages/x.txt repo: vercel/ai commit: "
            "ed857f50f112e23930b0c2dd8d532cc8bebbc911 path: packages/deepseek/x.chunks.txt blob: 5f49; "
            "see microsoft/semantic-kernel#5240")
    assert [link.url for link in provenance_links(text)] == [
        "https://github.com/vercel/ai/blob/ed857f50f112e23930b0c2dd8d532cc8bebbc911/packages/deepseek/x.chunks.txt",
        "https://github.com/microsoft/semantic-kernel/issues/5240",
    ]


def test_a_sequence_source_is_not_parsed_for_citations_beyond_a_capture_and_issues() -> None:
    assert provenance_links("earendil-works/pi@31b513e3 packages/agent/src/agent-loop.ts:L202-216 - runs the "
                            "calls; openai/codex@553376ff codex-rs/core/src/session/turn.rs") == []


# ---------------------------------------------------------------- cells and summaries


LOOP = Source("ex/loop", ref="0123abcd").file("src/loop.py")


@predicate(max_steps=6, reasons=["done", "gave_up"],
           rules={"calls": Cited(LOOP.at("L10-12"), text="run the calls"),
                  "retry": "resend a truncated reply", "nudge": "remind on an empty stop",
                  "done": Cited(LOOP.at("L20"), text="return the text")})
def toy(turn: Turn, state: State) -> Decision:
    if turn.finish == "length":
        return Resend("retry")
    if turn.tool_calls:
        return Continue("calls")
    if not turn.content:
        return Remind("nudge", "say something")
    return Stop("done", ok=True, rule="done")


def named(p: Predicate, name: str) -> Predicate:
    return p.named(name, f"test {name}")


TOY = named(toy, "toy")
EMPTY = Turn(finish="stop", finish_raw="stop", content="")
SEQS = [
    Sequence(id="a-tools", title="two tools then </script><b>answer", kind="constructed", dialect="openai-chat",
             source="ex/loop#7", turns=(tools("read_file"), tools("edit_file"), answer()),
             require=Requirement(ok=True), path="sequences/constructed/a-tools.yaml", tags=("normal",)),
    Sequence(id="b-trunc", title="truncated twice", kind="recorded", dialect="anthropic", source="rec",
             turns=(truncated(), truncated(), EMPTY, answer()), require=Requirement(stops_within=2),
             path="sequences/recorded/b-trunc.yaml", tags=("truncation",)),
]


def results(golden: Golden | None = None) -> list[Result]:
    return list(run(SEQS, [TOY], golden))


def data_of(res: list[Result], records: dict[str, Any] | None = None,
            explained: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    return page_data(res, SEQS, [TOY], records or {}, explained or {})


def test_a_cell_carries_each_step_with_its_turn_decision_rule_and_tools() -> None:
    cell = data_of(results())["cells"]["a-tools\ttoy"]
    assert cell["steps"] == [[0, "continue", "calls", None, None, ["read_file"], [], ""],
                             [1, "continue", "calls", None, None, ["edit_file"], [], ""],
                             [2, "stop", "done", "done", True, [], [], ""]]
    assert (cell["v"], cell["n"], cell["golden"], cell["violations"]) == ("ok", 3, "unreviewed", [])


def test_a_violation_keeps_its_requirement_kind_step_and_detail() -> None:
    cell = data_of(results())["cells"]["b-trunc\ttoy"]
    assert [(v["requirement"], v["kind"], v["step"]) for v in cell["violations"]] == [
        ("stops_within: 2", "stops_within", 4)]
    assert (cell["resends"], cell["reminders"]) == (2, 1)


def test_requests_after_the_first_unusable_turn_count_from_the_step_it_answered() -> None:
    b = replay(SEQS[1], TOY)
    assert after_unusable(SEQS[1], b) == 3  # turn 0 is cut off; steps 2, 3, 4 follow it
    assert after_unusable(SEQS[0], replay(SEQS[0], TOY)) == 0
    errored = seq(Turn(finish="error", error=TurnError("server_error", "boom", 500)), answer(), then="end")
    assert after_unusable(errored, replay(errored, TOY)) == 1  # the error has no content: one reminder, then the answer


def test_a_golden_mismatch_shows_the_first_differing_step_expected_and_got() -> None:
    res = [Result(r.cell, "mismatch", Mismatch(r.cell.sequence, "toy", "step 2 (turn 1) differs", "stop done",
                                               "continue calls")) if r.cell.sequence == "a-tools" else r
           for r in results()]
    cell = data_of(res)["cells"]["a-tools\ttoy"]
    assert cell["golden"] == "mismatch"
    assert cell["mismatch"] == {"what": "step 2 (turn 1) differs", "expected": "stop done", "actual": "continue calls"}


def test_a_reviewed_cell_carries_its_golden_basis_note_and_expected_path() -> None:
    exp = ExpectedCell(basis="source", outcome="stopped", reason="done", ok=True, steps=3,
                       tools_run=["read_file", "edit_file"], path=["continue calls x2", "stop done"],
                       note="read at src/loop.py L10-20")
    golden = Golden(Path("expected"), files={"toy": GoldenFile(predicate="toy", derived="by hand",
                                                               cells={"a-tools": exp})})
    data = page_data(list(run(SEQS, [TOY], golden)), SEQS, [TOY], {}, {}, golden)
    assert data["cells"]["a-tools\ttoy"]["golden"] == "match"
    assert data["cells"]["a-tools\ttoy"]["expected"] == {"basis": "source", "note": "read at src/loop.py L10-20",
                                                         "path": ["continue calls x2", "stop done"]}
    assert "expected" not in data["cells"]["b-trunc\ttoy"]


def test_a_port_with_a_record_gets_each_sequences_conformance_status() -> None:
    record = {"version": 1, "driver": "toyloop", "port": "toy", "install": "pip install toy==1",
              "sequences": {"a-tools": {"port": "x", "original": "x"},
                            "b-trunc": {"port": "x", "original": "y", "difference": "step 2: resend vs stop"}}}
    res = results()
    data = data_of(res, {"toy": record})
    assert data["cells"]["a-tools\ttoy"]["conformance"] == {"status": "same", "port": "x", "original": "x"}
    assert data["cells"]["b-trunc\ttoy"]["conformance"]["status"] == "differs"
    explained = data_of(res, {"toy": record}, {"toy": {"b-trunc": "the server cannot see it"}})
    assert explained["cells"]["b-trunc\ttoy"]["conformance"]["why"] == "the server cannot see it"
    assert data["predicates"][0]["conformance"] == {"driver": "toyloop", "install": "pip install toy==1"}
    assert "conformance" not in data_of(res)["cells"]["a-tools\ttoy"]


def test_a_record_with_the_originals_steps_gives_them_and_the_first_step_that_differs() -> None:
    def step(turn: int, action: str, run: list[str], failed: list[str]) -> dict[str, Any]:
        return {"turn": turn, "action": action, "run": run, "failed": failed}

    stop = {**step(2, "stop", [], []), "reason": "done", "ok": True}
    # toy on a-tools: read_file (turn 0), edit_file (turn 1), then stop on the answer (turn 2)
    agrees = [step(0, "continue", ["read_file"], []), step(1, "continue", ["edit_file"], []), stop]
    edit_failed = [step(0, "continue", ["read_file"], []), step(1, "continue", [], ["edit_file"]), stop]
    record = {"version": 1, "driver": "toyloop", "port": "toy", "install": "pip install toy==1",
              "sequences": {"a-tools": {"port": "x", "original": "x", "original_steps": agrees},
                            "b-trunc": {"port": "x", "original": "x"}}}
    conf = data_of(results(), {"toy": record})["cells"]["a-tools\ttoy"]["conformance"]
    assert conf["original_steps"] == agrees and conf["first_step"] is None
    record["sequences"]["a-tools"]["original_steps"] = edit_failed
    conf = data_of(results(), {"toy": record})["cells"]["a-tools\ttoy"]["conformance"]
    assert conf["first_step"] == 1
    record["sequences"]["a-tools"]["original_steps"] = agrees[:2]
    assert data_of(results(), {"toy": record})["cells"]["a-tools\ttoy"]["conformance"]["first_step"] == 2
    # a record written before steps were kept: no steps, nothing compared (the page says so)
    old = data_of(results(), {"toy": record})["cells"]["b-trunc\ttoy"]["conformance"]
    assert "original_steps" not in old and "first_step" not in old


def test_the_summary_counts_verdicts_violations_by_kind_wasted_requests_and_tokens() -> None:
    row = data_of(results())["summary"]["rows"][0]
    assert row["verdicts"] == {"ok": 2, "not-ok": 0, "running": 0, "capped": 0, "crashed": 0}
    assert row["by_kind"] == {"stops_within": 1}
    assert (row["resends"], row["reminders"], row["after_unusable"], row["requests"]) == (2, 1, 3, 7)


def test_rules_carry_their_citation_links_and_the_cap_is_a_rule_too() -> None:
    rules = {r["id"]: r for r in data_of(results())["predicates"][0]["rules"]}
    assert rules["calls"]["links"] == [{"text": "ex/loop@0123abcd src/loop.py:L10-12",
                                        "url": "https://github.com/ex/loop/blob/0123abcd/src/loop.py#L10-L12"}]
    assert rules["retry"]["links"] == []
    assert "6 requests" in rules["cap"]["text"]


PKG = Source("ex/pkg", ref="v2.0", release="PyPI pkg==2.0", tree="src/")


@predicate(reasons=["done"], source=Cited(PKG.at("pkg/loop.py", "L1-40", detail="Loop.run")),
           rules={"calls": Cited(PKG.at("pkg/loop.py", "L10-12, L20"), Note("observed"), text="run the calls"),
                  "done": Cited(Note("pkg@1234 (a byte offset)"), text="return the text"),
                  "prose": "ex/loop@0123abcd src/loop.py:L10-12 - a citation left as text"})
def cited(turn: Turn, state: State) -> Decision:
    return Stop("done", ok=True, rule="done")


def test_links_come_from_the_citations_declared_as_data_never_from_the_text() -> None:
    data = predicate_data(named(cited, "cited"), None)
    assert data["links"] == [{"text": "ex/pkg@v2.0 pkg/loop.py:L1-40",
                              "url": "https://github.com/ex/pkg/blob/v2.0/src/pkg/loop.py#L1-L40"}]
    rules = {r["id"]: r for r in data["rules"]}
    assert rules["calls"]["text"] == "ex/pkg@v2.0 (PyPI pkg==2.0) pkg/loop.py:L10-12, L20; observed - run the calls"
    assert [link["url"] for link in rules["calls"]["links"]] == [
        "https://github.com/ex/pkg/blob/v2.0/src/pkg/loop.py#L10-L12",
        "https://github.com/ex/pkg/blob/v2.0/src/pkg/loop.py#L20"]
    assert rules["done"]["links"] == []
    assert rules["prose"]["links"] == []


def test_rows_are_grouped_by_catalogue_folder_in_a_fixed_order() -> None:
    shuffled = [SEQS[1], SEQS[0]]
    data = page_data(results(), shuffled, [TOY], {}, {})
    assert [(s["id"], s["group"]) for s in data["sequences"]] == [("a-tools", "constructed"), ("b-trunc", "recorded")]


# ---------------------------------------------------------------- the HTML


class Collect(HTMLParser):
    """Ids, external references and the embedded data of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[str] = []
        self.scripts: list[str] = []
        self._in_data = False
        self.data = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag in ("script", "link", "img", "iframe") and (a.get("src") or a.get("href")):
            self.refs.append(str(a.get("src") or a.get("href")))
        self._in_data = tag == "script" and a.get("id") == "stopbench-data"

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False


def test_the_page_is_self_contained_and_embeds_its_data_unbroken_by_markup_in_it() -> None:
    html = build_page(results(), SEQS, [TOY])
    page = Collect()
    page.feed(html)
    assert page.refs == []  # no script, style sheet or image fetched from anywhere
    assert "default-src 'none'" in html
    data = json.loads(page.data)  # "</script>" in a title did not end the element early
    assert data["sequences"][0]["title"] == "two tools then </script><b>answer"
    assert {"row-a-tools", "row-b-trunc", "cell-a-tools--toy", "cell-b-trunc--toy", "drill", "stepper",
            "summary"} <= page.ids


def test_embedded_json_escapes_every_angle_bracket() -> None:
    text = embed_json({"k": "</script><!--", "b": 1})
    assert "<" not in text
    assert json.loads(text) == {"b": 1, "k": "</script><!--"}


def test_each_cell_shows_its_verdict_as_a_glyph_and_marks_violations() -> None:
    html = build_page(results(), SEQS, [TOY])
    a = re.search(r'<td class="([^"]*)" id="cell-a-tools--toy"[^>]*>(.*?)</td>', html)
    b = re.search(r'<td class="([^"]*)" id="cell-b-trunc--toy"[^>]*>(.*?)</td>', html)
    assert a and b
    assert "v-ok" in a[1] and "has-viol" not in a[1] and a[2].startswith('<span class="glyph">✓</span>')
    assert "has-viol" in b[1] and 'class="mk mk-viol"' in b[2] and 'class="mk mk-unrev"' in b[2]


def test_the_same_inputs_give_a_byte_identical_page() -> None:
    assert build_page(results(), SEQS, [TOY]) == build_page(results(), list(reversed(SEQS)), [TOY])


def test_a_predicate_that_did_not_load_is_a_column_of_crashed_cells_saying_why() -> None:
    broken = Broken("nope", "predicates/nope.py", "SyntaxError: invalid syntax (nope.py:3)")
    res = list(run(SEQS, [TOY, broken], None))
    data = page_data(res, SEQS, [TOY, broken], {}, {})
    assert data["predicates"][1]["broken"] == "SyntaxError: invalid syntax (nope.py:3)"
    assert {data["cells"][f"{s.id}\tnope"]["v"] for s in SEQS} == {"crashed"}
    html = build_page(res, SEQS, [TOY, broken])
    assert 'id="cell-a-tools--nope"' in html and '<span class="glyph">‼</span>' in html


def test_the_shipped_catalogue_gives_a_page_under_1_kb_a_cell_with_every_sequence_and_predicate() -> None:
    """The page carries every cell's drill-down (steps, citations, conformance), so it grows with
    the matrix: the bar is per cell. Each repeated fact is embedded once (a step, an original's recorded
    step, a label, a golden expectation, a conformance row: bench.report.page.data.by_reference), and a
    cell's sequence, column and tooltip are set by the script from its row, column and data, not written
    into every cell's markup; repeating them was 2.3 KB a cell."""
    cat = load_catalogue(ROOT / "sequences")
    preds = discover(ROOT / "predicates", entry_points_too=False)
    res = list(run(cat.sequences, preds, load_golden(ROOT / "expected")))
    records = load_conformance(ROOT / "reports")
    html = build_page(res, cat.sequences, preds, records)
    size = len(html.encode("utf-8"))
    print(f"index.html: {size:,} bytes for {len(cat.sequences)} sequences x {len(preds)} predicates")
    assert size < 1024 * len(cat.sequences) * len(preds)
    page = Collect()
    page.feed(html)
    assert {f"row-{s.id}" for s in cat.sequences} <= page.ids
    assert {f"cell-{s.id}--{p.name}" for s in cat.sequences for p in preds} <= page.ids
    assert html == build_page(list(res), list(cat.sequences), list(preds), dict(records))
    embedded = json.loads(page.data)  # each fact once, and every cell as the page data has it
    assert all(len(rows) == len({json.dumps(r, sort_keys=True) for r in rows}) for rows in embedded["tables"].values())
    unfolded = unfold(embedded)
    unfolded.pop("verdicts")
    assert unfolded == json.loads(json.dumps(page_data(res, cat.sequences, preds, records, {})))


def test_the_bar_chart_lists_loops_by_violations_with_each_count_written_out() -> None:
    svg = bar_chart([{"predicate": "a", "violations": 2}, {"predicate": "b", "violations": 9},
                     {"predicate": "c", "violations": 2}])
    names = re.findall(r'class="lbl">([^<]+)</text>', svg)
    values = re.findall(r'class="val">(\d+)</text>', svg)
    assert (names, values) == (["b", "a", "c"], ["9", "2", "2"])
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == 360 and widths[1] == widths[2] == 80  # 360 * 2 / 9


def test_the_heat_map_writes_each_nonzero_count_in_its_square_and_leaves_zero_squares_blank() -> None:
    rows = [{"predicate": "p", "by_kind": {"ok": 3, "stops_within": 0}},
            {"predicate": "q", "by_kind": {"ok": 1, "stops_within": 6}}]
    svg = heat_map(["ok", "stops_within"], rows)
    assert re.findall(r"<title>([^<]+)</title></rect>", svg) == ["p, ok: 3", "q, ok: 1", "p, stops_within: 0",
                                                                 "q, stops_within: 6"]
    assert re.findall(r'class="num(?: dark)?">(\d+)</text>', svg) == ["3", "1", "6"]
    assert 'class="h0"' in svg and 'class="h5"' in svg
