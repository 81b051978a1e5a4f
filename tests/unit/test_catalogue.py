"""Loading sequence files: strict validation, one clear line per bad file, safe YAML only."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.catalogue import SequenceError, load_catalogue, load_sequence

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
