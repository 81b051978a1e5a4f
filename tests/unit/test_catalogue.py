"""Loading sequence files: strict validation, one clear line per bad file, safe YAML only."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.catalogue.load import SequenceError, load_catalogue, load_sequence

GOOD = """\
title: one answer
kind: constructed
dialect: openai-chat
source: test
turns:
  - finish: stop
    content: hi
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(SequenceError) as info:
        load_sequence(write(tmp_path, "x.yaml", text))
    return str(info.value)


def test_a_good_file_loads_with_its_stem_as_id_and_the_dialect_default_raw_finish(tmp_path: Path) -> None:
    s = load_sequence(write(tmp_path, "hello.yaml", GOOD))
    assert s.id == "hello"
    assert s.turns[0].finish == "stop" and s.turns[0].finish_raw == "stop"
    assert s.then == "end"


def test_a_bad_finish_names_the_field_path_and_the_allowed_values(tmp_path: Path) -> None:
    text = GOOD.replace("  - finish: stop\n", "  - finish: stop\n  - finish: stop\n  - finish: done\n")
    msg = error_of(tmp_path, text)
    assert msg.startswith("turns[2].finish: expected one of 'stop', 'tool_calls'")
    assert "'done'" in msg


def test_an_unknown_key_is_an_error_not_dropped(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD.replace("    content: hi\n", "    content: hi\n    finish_reason: stop\n"))
    assert msg.startswith("turns[0].finish_reason: unknown key")


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    assert error_of(tmp_path, GOOD.replace("source: test\n", "")).startswith("source: required")


def test_a_raw_finish_that_contradicts_the_canonical_one_is_an_error(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD.replace("content: hi", "finish_raw: length"))
    assert msg.startswith("turns[0].finish_raw: 'length' maps to 'length' in openai-chat, but finish says 'stop'")


def test_a_non_standard_raw_string_is_unknown(tmp_path: Path) -> None:
    text = GOOD.replace("finish: stop", "finish: unknown\n    finish_raw: tool_call")
    s = load_sequence(write(tmp_path, "t.yaml", text))
    assert s.turns[0].finish == "unknown" and s.turns[0].finish_raw == "tool_call"


def test_null_finish_raw_means_none_sent(tmp_path: Path) -> None:
    s = load_sequence(write(tmp_path, "t.yaml", GOOD.replace("finish: stop", "finish: unknown\n    finish_raw: null")))
    assert s.turns[0].finish_raw is None


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD + "title: again\n")
    assert "duplicate key 'title'" in msg and "line 8" in msg


def test_python_object_tags_are_refused_by_the_safe_loader(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD.replace("title: one answer", "title: !!python/object/apply:os.system ['true']"))
    assert msg.startswith("not valid YAML")


def test_invalid_yaml_reports_line_and_column(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "title: [unclosed\n")
    assert msg.startswith("not valid YAML: line")


def test_one_bad_file_does_not_hide_the_good_ones(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "sub/b.yaml", GOOD)
    write(tmp_path, "c.yaml", GOOD.replace("kind: constructed", "kind: invented"))
    cat = load_catalogue(tmp_path)
    assert [s.id for s in cat.sequences] == ["a", "b"]
    assert len(cat.problems) == 1
    assert cat.problems[0].path.endswith("c.yaml")
    assert cat.problems[0].message.startswith("kind: expected one of 'recorded' or 'constructed', got 'invented'")


def test_the_same_id_in_two_folders_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "sub/a.yaml", GOOD)
    cat = load_catalogue(tmp_path)
    assert len(cat.sequences) == 1
    assert "already used" in cat.problems[0].message



LONG_HEAD = "title: long\nkind: constructed\ndialect: openai-chat\nsource: test\nturns:\n"


def _tool_turns(n: int) -> str:
    return "".join(f"  - finish: tool_calls\n    tool_calls: [{{id: c{i}, name: grep}}]\n" for i in range(n))


def test_a_long_file_loads_every_turn(tmp_path: Path) -> None:
    s = load_sequence(write(tmp_path, "long.yaml", LONG_HEAD + _tool_turns(3000) + "  - finish: stop\n"))
    assert len(s.turns) == 3001
    assert s.turns[2999].tool_calls[0].id == "c2999" and s.turns[-1].finish == "stop"


def test_a_problem_deep_in_a_long_file_names_its_turn_and_counts_the_others(tmp_path: Path) -> None:
    body = _tool_turns(3000).replace("id: c2500,", "id: 7,").replace("id: c2990,", "id: 8,")
    msg = error_of(tmp_path, LONG_HEAD + body)
    assert msg == "turns[2500].tool_calls[0].id: Input should be a valid string, got 7 (and 1 more problem)"


def test_a_schema_problem_comes_before_a_finish_that_contradicts_its_raw_string(tmp_path: Path) -> None:
    text = (LONG_HEAD + "  - finish: stop\n    finish_raw: length\n" + _tool_turns(3)
            + "  - finish: done\n")
    assert error_of(tmp_path, text).startswith("turns[4].finish: expected one of 'stop'")
    assert error_of(tmp_path, LONG_HEAD + "  - finish: stop\n    finish_raw: length\n").startswith(
        "turns[0].finish_raw: 'length' maps to 'length'")


def test_an_unhashable_key_is_one_line_with_line_and_column(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD + "? [a, b]\n: 1\n")
    assert msg == "not valid YAML: line 8, column 3: a mapping key must be a plain value, not a list"


def test_an_alias_is_refused(tmp_path: Path) -> None:
    msg = error_of(tmp_path, GOOD.replace("content: hi", "content: &x hi\n  - finish: stop\n    content: *x"))
    assert msg == "not valid YAML: line 9, column 14: alias *x: aliases are not allowed here (write the value out)"


ERRORED = GOOD.replace("  - finish: stop\n    content: hi\n", "  - finish: error\n    error: {ERROR}\n")


def test_an_error_kind_is_read_with_its_status_code_and_message(tmp_path: Path) -> None:
    text = ERRORED.replace("{ERROR}", "{kind: rate_limit, status: 429, code: rate_limit_error, message: slow down}")
    err = load_sequence(write(tmp_path, "x.yaml", text)).turns[0].error
    assert err is not None and (err.kind, err.status, err.code, err.message) == (
        "rate_limit", 429, "rate_limit_error", "slow down")


def test_an_error_without_a_kind_is_one_line_naming_the_field(tmp_path: Path) -> None:
    msg = error_of(tmp_path, ERRORED.replace("{ERROR}", "{status: 429}"))
    assert msg == "turns[0].error.kind: required, but missing"


def test_an_error_kind_outside_the_vocabulary_lists_the_kinds(tmp_path: Path) -> None:
    msg = error_of(tmp_path, ERRORED.replace("{ERROR}", "{kind: rate_limit_error}"))
    assert msg.startswith("turns[0].error.kind: expected one of 'rate_limit', 'quota', 'overloaded'")
    assert msg.endswith("got 'rate_limit_error'")


def test_the_old_free_text_error_type_is_an_unknown_key(tmp_path: Path) -> None:
    msg = error_of(tmp_path, ERRORED.replace("{ERROR}", "{kind: timeout, type: timeout_error}"))
    assert msg == "turns[0].error.type: unknown key (not part of the sequence format)"
