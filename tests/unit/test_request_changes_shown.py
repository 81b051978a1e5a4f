"""A decision's request changes reach every output: golden paths, labels, CSV, JSON lines, the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import Continue, Decision, RequestChanges, Resend, Stop, predicate
from bench.engine.changes import ChangesError, changes_data, changes_from, changes_text
from bench.engine.model import Turn
from bench.engine.predicate import State
from bench.golden.expected import compare, expected_of, path_of
from bench.golden.run import run
from bench.report.labels import cell_record, label
from bench.report.page.data import page_data
from bench.report.tables import cells_frame
from tests.helpers import answer, seq, truncated


@predicate(reasons=["done"], rules={"boost": "", "calls": "", "done": ""})
def booster(turn: Turn, state: State) -> Decision:
    if turn.finish == "length":
        return Resend("boost", changes=RequestChanges(max_tokens=4096 * 2 ** (state.resends + 1)))
    if turn.tool_calls:
        return Continue("calls")
    return Stop("done", ok=True, rule="done")


BOOSTER = booster.named("booster", "test booster")
SEQ = seq(truncated(), truncated(), answer(), sid="cut-twice")


def test_changes_are_written_in_field_order_with_only_the_set_fields() -> None:
    every = RequestChanges(max_tokens=8192, model="backup", compact=True, tool_choice="required")
    assert list(changes_data(every) or {}) == ["max_tokens", "model", "compact", "tool_choice"]
    assert changes_text(every) == "+max_tokens=8192 +model=backup +compact +tool_choice=required"
    assert changes_data(RequestChanges(compact=True)) == {"compact": True}
    assert changes_data(None) is None and changes_text(None) == ""
    assert changes_from(changes_data(every)) == every


@pytest.mark.parametrize(("data", "message"), [
    ({"max_token": 5}, "changes.max_token: not a request change"),
    ({"max_tokens": "8k"}, "changes.max_tokens: expected a positive whole number"),
    ({"compact": "yes"}, "changes.compact: expected true or false"),
    ({"model": ""}, "changes.model: expected a non-empty string"),
    ([1], "changes: expected a mapping"),
])
def test_a_bad_changes_mapping_names_the_field(data: object, message: str) -> None:
    with pytest.raises(ChangesError, match=message):
        changes_from(data)


def test_the_golden_path_carries_each_step_s_changes_and_a_different_boost_is_a_mismatch() -> None:
    cell = next(iter(run([SEQ], [BOOSTER]))).cell
    assert path_of(cell) == ["resend boost +max_tokens=8192", "resend boost +max_tokens=16384", "stop done"]
    exp = expected_of(cell, "rule")
    assert compare(cell, exp) is None
    wrong = exp.model_copy(update={"path": ["resend boost +max_tokens=8192", "resend boost", "stop done"]})
    mismatch = compare(cell, wrong)
    assert mismatch is not None and mismatch.what == "step 2 (turn 1) differs"
    assert mismatch.actual == "resend boost +max_tokens=16384"


def test_label_csv_and_json_show_the_changes() -> None:
    result = next(iter(run([SEQ], [BOOSTER])))
    assert label(result.cell).endswith("changes[1:+max_tokens=8192,2:+max_tokens=16384]")
    record = cell_record(result)
    assert [d["changes"] for d in record["decisions"]] == [{"max_tokens": 8192}, {"max_tokens": 16384}, None]
    json.dumps(record)
    frame = cells_frame([result])
    assert frame.loc[0, "changes"] == "changes[1:+max_tokens=8192,2:+max_tokens=16384]"
    assert frame.loc[0, "path"] == "resend boost +max_tokens=8192 | resend boost +max_tokens=16384 | stop done"


def test_the_page_shows_each_step_s_changes_and_a_reactive_turn_s_after() -> None:
    reactive = seq(Turn("tool_calls", finish_raw="tool_calls", after=(("resend", 1), ("remind", 2))),
                   truncated(), answer(), sid="reactive")
    results = list(run([SEQ, reactive], [BOOSTER]))
    data = page_data(results, [SEQ, reactive], [BOOSTER], {}, {})
    steps = data["cells"]["cut-twice\tbooster"]["steps"]
    assert [s[7] for s in steps] == ["+max_tokens=8192", "+max_tokens=16384", ""]
    turns = next(s for s in data["sequences"] if s["id"] == "reactive")["turns"]
    assert turns[0]["after"] == {"resend": 1, "remind": 2}
    assert "after" not in turns[1]


def test_accept_with_a_note_relabels_a_matching_cell_and_without_one_leaves_it(tmp_path: Path) -> None:
    from bench.golden.expected import plan_accept, read_golden_file

    cells = [next(iter(run([SEQ], [BOOSTER]))).cell]
    plan_accept(tmp_path, "booster", cells, derived="test", basis="source").write()
    assert plan_accept(tmp_path, "booster", cells, mode="all", basis="observed").text is None
    plan_accept(tmp_path, "booster", cells, mode="all", basis="observed", note="seen driving it").write()
    cell = read_golden_file(tmp_path / "booster.yaml").cells["cut-twice"]
    assert (cell.basis, cell.note) == ("observed", "seen driving it")
    assert cell.path == ["resend boost +max_tokens=8192", "resend boost +max_tokens=16384", "stop done"]
