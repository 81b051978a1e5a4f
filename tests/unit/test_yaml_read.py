"""The one YAML reader: PyYAML's safe data, strictly; every refusal one line with line and column.

Each test runs with libyaml's C parser and with PyYAML's pure-Python one (the fallback where
PyYAML was built without libyaml), so the two give the same data and the same refusals.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bench.catalogue import yaml_read
from bench.catalogue.yaml_read import YamlError, parse_yaml, read_yaml

BOMB = b"""\
a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


@pytest.fixture(params=["c", "python"], autouse=True)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "c":
        if not hasattr(yaml, "CSafeLoader"):
            pytest.skip("PyYAML built without libyaml")
        monkeypatch.setattr(yaml_read, "LOADER", yaml.CSafeLoader)
    else:
        monkeypatch.setattr(yaml_read, "LOADER", yaml.SafeLoader)
    yield request.param


def refusal(data: str | bytes, **kw: Any) -> str:
    with pytest.raises(YamlError) as info:
        parse_yaml(data, **kw)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_plain_data_reads_as_pyyaml_safe_load_reads_it() -> None:
    text = ("title: t\nn: 3\nneg: -4\nhex: 0x1F\noctal: 017\nsep: 1_000\nf: 1.5\ninf: .inf\nflag: yes\noff: off\n"
            "nothing: ~\nempty:\nday: 2025-01-02\nbin: !!binary aGk=\nquoted: '3'\nstr: !!str 12\n"
            "list: [a, 'b', 1]\nblock: |\n  two\n  lines\nnested: {a: [1, {b: c}]}\n")
    assert parse_yaml(text) == yaml.safe_load(text)
    data = parse_yaml(text)
    assert data["hex"] == 31 and data["octal"] == 15 and data["flag"] is True and data[False] is False
    assert data["day"] == datetime.date(2025, 1, 2) and data["bin"] == b"hi" and data["str"] == "12"


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20)
                    | st.floats(allow_nan=False),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
                    max_leaves=20))
def test_whatever_pyyaml_writes_reads_back_equal(value: Any) -> None:
    text = yaml.safe_dump({"v": value}, allow_unicode=True)
    assert parse_yaml(text) == {"v": value}
    assert parse_yaml(text.encode("utf-8")) == {"v": value}


def test_an_empty_document_is_none() -> None:
    assert parse_yaml("") is None
    assert parse_yaml(b"# only a comment\n") is None


def test_a_duplicate_key_names_its_line_and_column() -> None:
    assert refusal("title: a\nkind: x\ntitle: b\n") == "not valid YAML: line 3, column 1: duplicate key 'title'"


@pytest.mark.parametrize("text", ["? [a, b]\n: 1\n", "x: {[1]: x}\n", "? {a: 1}\n: 2\n"])
def test_an_unhashable_key_is_one_line_not_a_type_error(text: str) -> None:
    assert "a mapping key must be a plain value" in refusal(text)


def test_an_alias_is_refused_at_its_line() -> None:
    message = refusal(BOMB)
    assert message == ("not valid YAML: line 2, column 8: alias *a: aliases are not allowed here "
                       "(write the value out)")


def test_where_aliases_are_allowed_a_bomb_stops_at_the_budget() -> None:
    assert "aliases expand to more than 1,000,000 values" in refusal(BOMB, aliases=True)


def test_where_aliases_are_allowed_a_small_one_is_the_same_value() -> None:
    data = parse_yaml("headers: &h {a: 1}\nagain: *h\n", aliases=True)
    assert data == {"headers": {"a": 1}, "again": {"a": 1}}


def test_an_alias_to_an_unfinished_anchor_is_refused() -> None:
    assert "refers to no finished anchor" in refusal("- &a [*a]\n", aliases=True)


@pytest.mark.parametrize(("text", "problem"), [
    ("<<: {a: 1}\nb: 2\n", "merge keys (<<) are not allowed"),
    ("a: !!python/object/apply:os.system ['true']\n", "the tag !!python/object/apply:os.system is not allowed"),
    ("a: !!set {x}\n", "the tag !!set is not allowed"),
    ("a: !!int abc\n", "'abc' is not a valid !!int"),
    ("a: 1\n---\nb: 2\n", "expected one document, found another"),
    ("a: [1\n", "line 2, column 1"),
])
def test_what_is_not_plain_data_is_refused_with_its_place(text: str, problem: str) -> None:
    message = refusal(text)
    assert message.startswith("not valid YAML: line ")
    assert problem in message


def test_a_tab_where_yaml_forbids_one_names_its_line() -> None:
    message = refusal("turns:\n- finish: stop\n\tcontent: hi\n")
    assert message.startswith("not valid YAML: line 3, column 1:")


def test_nesting_too_deep_is_refused_not_a_recursion_error() -> None:
    message = refusal("[" * 5000)
    assert message.startswith("not valid YAML: line 1, column ")


def test_bytes_that_are_not_utf8_name_line_and_column() -> None:
    assert refusal(b"title: t\nsource: ab\xffc\n") == \
        "not UTF-8 text: line 2, column 11: byte 0xff (invalid start byte)"


def test_a_utf16_file_is_refused_with_the_reason() -> None:
    assert "UTF-16 byte-order mark" in refusal("title: t\n".encode("utf-16"))


def test_a_utf8_byte_order_mark_at_the_start_is_allowed_as_yaml_allows_it() -> None:
    assert parse_yaml(b"\xef\xbb\xbftitle: t\n") == {"title": "t"}


def test_read_yaml_puts_the_file_in_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.yaml").write_bytes(b"a: 1\na: 2\n")
    with pytest.raises(YamlError) as info:
        read_yaml(tmp_path / "x.yaml")
    assert str(info.value) == "x.yaml: not valid YAML: line 2, column 1: duplicate key 'a'"
    assert info.value.detail == "not valid YAML: line 2, column 1: duplicate key 'a'"


def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(YamlError) as info:
        read_yaml(tmp_path / "missing.yaml", shown="missing.yaml")
    assert str(info.value) == "missing.yaml: cannot be read: No such file or directory"


@pytest.mark.parametrize("data", ["title: t\nkind: b\x07c\n", b"title: t\nkind: b\x07c\n"])
def test_a_control_character_names_its_line_and_column(data: str | bytes) -> None:
    assert refusal(data) == "not valid YAML: line 2, column 8: the character U+0007 is not allowed in YAML"


def test_a_lone_surrogate_in_text_is_one_line() -> None:
    assert refusal("a: b\ud800\n") == "not valid YAML: line 1, column 5: the character U+D800 is not allowed in YAML"


@given(st.one_of(st.binary(max_size=120),
                 st.text(alphabet=st.sampled_from(list("ab:-?[]{},&*!|>'\"#%@`\t\n \x07\x85\ufeff<=~0.")),
                         max_size=80)))
def test_any_input_is_data_or_one_yaml_error_never_another_exception(data: str | bytes) -> None:
    try:
        parse_yaml(data, aliases=True)
    except YamlError as exc:
        assert "\n" not in str(exc)


def test_every_shipped_yaml_file_reads_as_pyyaml_safe_load_reads_it() -> None:
    from tests.helpers import ROOT

    paths = sorted([*(ROOT / "sequences").rglob("*.yaml"), *(ROOT / "expected").glob("*.yaml")])
    assert len(paths) > 50
    for path in paths:
        assert read_yaml(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path


def test_the_garbage_collector_runs_again_after_a_read_and_after_a_refusal() -> None:
    import gc

    assert gc.isenabled()
    parse_yaml("a: [1, 2]\n")
    assert gc.isenabled()
    refusal("a: 1\na: 2\n")
    assert gc.isenabled()
