"""The replay server reads a request body as ``json.loads`` does (bench.serve.bad_requests.parse reads
with orjson first): on generated bodies, valid and broken, it gives the standard library's value, type
for type (1 is not 1.0, -0.0 is not 0.0, an integer past 64 bits stays an integer), or refuses with the
standard library's words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bench.serve.bad_requests import MAX_DEPTH, BadRequest, depth, parse, parse_by_json

SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text() | st.text(alphabet="\t\n\"\\\ud800\x00é"))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)
NUMBER_TEXTS = st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?\Z", fullmatch=True)


def outcome(read: Any, raw: bytes) -> tuple[str, str]:
    try:
        return "value", repr(read(raw))
    except BadRequest as exc:
        return "refused", str(exc)


def same(raw: bytes) -> None:
    assert outcome(parse, raw) == outcome(parse_by_json, raw)


@given(VALUES, st.booleans(), st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32-le"]))
def test_a_valid_body_reads_as_the_standard_library_reads_it(value: Any, ascii_only: bool, encoding: str) -> None:
    text = json.dumps({"messages": [value], "x": value}, ensure_ascii=ascii_only)
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form: sent escaped
        raw = json.dumps(value, ensure_ascii=True).encode(encoding)
    same(raw)


@given(NUMBER_TEXTS)
@example("123456789012345678901234567890")
@example("18446744073709551616")
@example("-9223372036854775809")
@example("1e400")
@example("2.2250738585072011e-308")
def test_a_number_reads_as_the_same_value_of_the_same_type(number: str) -> None:
    same(f'{{"n": {number}, "a": [{number}]}}'.encode())


@given(VALUES, st.integers(min_value=0, max_value=200), st.binary(min_size=1, max_size=3))
@example(0, 0, b"\xef\xbb\xbf")
def test_a_broken_body_is_refused_in_the_standard_library_s_words(value: Any, at: int, junk: bytes) -> None:
    raw = json.dumps({"messages": [value]}).encode()
    at = min(at, len(raw))
    same(raw[:at] + junk + raw[at:])
    same(raw[:at])


def test_constants_deep_nesting_and_control_characters_are_refused_as_before() -> None:
    for raw in (b'{"x": NaN}', b'{"x": -Infinity}', b"[" * 70 + b"]" * 70, b"[" * 3000 + b"]" * 3000,
                b'{"x": "a\tb"}', b'{"x": "\x01"}', b"", b"  ", b'{"a": 1,}', b"01", b'"\\ud800"', b'\xed\xa0\x80'):
        same(raw)


def nesting(value: Any) -> int:
    """The nesting depth by its definition, recursively: the reference for the server's walk."""
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


@given(VALUES)
def test_the_depth_walk_measures_what_the_definition_measures(value: Any) -> None:
    assert depth(value) == nesting(value)


def test_a_body_is_read_to_the_depth_limit_and_refused_past_it() -> None:
    for read in (parse, parse_by_json):
        at_limit = read(b'{"a": ' + b"[" * (MAX_DEPTH - 1) + b"1" + b"]" * (MAX_DEPTH - 1) + b"}")
        assert depth(at_limit) == MAX_DEPTH
        with pytest.raises(BadRequest, match="nested deeper than 64"):
            read(b'{"a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}")
