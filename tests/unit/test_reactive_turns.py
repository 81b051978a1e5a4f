"""The reactive form of a sequence (``after:``): how it loads, how it is refused, how it is written,
and the one rule (:func:`bench.next_turn`) that says which turn answers a loop's follow-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import RequestChanges, Resend, Turn, next_turn
from bench.catalogue.document import sequence_to_yaml
from bench.catalogue.load import SequenceError, load_sequence, parse_sequence
from bench.catalogue.yaml_read import parse_yaml

HEAD = "title: reactive\nkind: constructed\ndialect: openai-chat\nsource: test\nturns:\n"
TURNS = ("  - finish: tool_calls\n    content: null\n    tool_calls: []\n    after: {AFTER}\n"
         "  - finish: stop\n    content: plain resend\n"
         "  - finish: stop\n    content: reminded\n")


def _write(tmp_path: Path, after: str) -> Path:
    path = tmp_path / "r.yaml"
    path.write_text(HEAD + TURNS.replace("{AFTER}", after), encoding="utf-8")
    return path


def load(tmp_path: Path, after: str) -> Turn:
    return load_sequence(_write(tmp_path, after)).turns[0]


def error_of(tmp_path: Path, after: str) -> str:
    with pytest.raises(SequenceError) as info:
        load(tmp_path, after)
    return str(info.value)


def test_after_loads_as_pairs_in_action_order_whatever_order_the_file_gives(tmp_path: Path) -> None:
    assert load(tmp_path, "{remind: 2, resend: 1}").after == (("resend", 1), ("remind", 2))


def test_a_turn_without_after_is_open_loop(tmp_path: Path) -> None:
    assert load(tmp_path, "{}").after == ()
    turn = Turn("stop")
    assert [next_turn(turn, 4, a) for a in ("continue", "resend", "remind", "stop")] == [5, 5, 5, 5]


def test_next_turn_follows_after_for_the_actions_it_names_and_the_next_turn_for_the_others() -> None:
    turn = Turn("tool_calls", after=(("resend", 1), ("remind", 2)))
    assert next_turn(turn, 0, "resend") == 1
    assert next_turn(turn, 0, "remind") == 2
    assert next_turn(turn, 0, "continue") == 1  # left out: the next turn
    assert next_turn(Turn("stop", after=(("continue", 0),)), 5, "continue") == 0  # back to an earlier turn


def test_stop_in_after_is_one_line_naming_the_field(tmp_path: Path) -> None:
    assert error_of(tmp_path, "{stop: 1}") == ("turns[0].after.stop: a stop sends no request, so no turn answers "
                                               "it (expected one of continue, resend, remind)")


def test_an_unknown_action_in_after_is_named(tmp_path: Path) -> None:
    assert error_of(tmp_path, "{retry: 1}") == ("turns[0].after.retry: not an action "
                                                "(expected one of continue, resend, remind)")


def test_a_turn_past_the_last_is_named_with_the_count(tmp_path: Path) -> None:
    assert error_of(tmp_path, "{remind: 3}") == ("turns[0].after.remind: turn 3 does not exist (the sequence has "
                                                 "3 turns, numbered from 0)")
    assert error_of(tmp_path, "{resend: -1}").startswith("turns[0].after.resend: turn -1 does not exist")


def test_an_index_that_is_not_an_integer_is_a_schema_error(tmp_path: Path) -> None:
    assert error_of(tmp_path, "{resend: one}").startswith("turns[0].after.resend: ")


def test_a_bad_after_in_a_catalogue_names_the_file(tmp_path: Path) -> None:
    from bench.catalogue.load import load_catalogue

    (tmp_path / "bad.yaml").write_text(HEAD + TURNS.replace("{AFTER}", "{stop: 1}"), encoding="utf-8")
    problem = load_catalogue(tmp_path).problems[0]
    assert str(problem).endswith("bad.yaml: turns[0].after.stop: a stop sends no request, so no turn answers it "
                                 "(expected one of continue, resend, remind)")


def test_after_survives_the_writer(tmp_path: Path) -> None:
    seq = load_sequence(_write(tmp_path, "{remind: 2, resend: 1}"))
    text = sequence_to_yaml(seq)
    assert "after:\n" in text and "resend: 1" in text
    assert parse_sequence(parse_yaml(text), seq.id, seq.path) == seq
    open_loop = sequence_to_yaml(load_sequence(_write(tmp_path, "{}")))
    assert "after:" not in open_loop


def test_changes_ride_on_the_decision_and_default_to_none() -> None:
    assert Resend("r").changes is None
    d = Resend("r", changes=RequestChanges(max_tokens=8192))
    assert d.action == "resend" and d.changes == RequestChanges(8192, None, False, None)
