"""The one YAML writer: what it writes reads back as the same document, laid out for small diffs."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bench.catalogue.yaml_read import parse_yaml as load_yaml
from bench.catalogue.yaml_write import dump

# Text that stresses the emitter: YAML indicators, words YAML 1.1 reads as other types, every line
# break YAML knows, tabs, spaces at either end, control characters and non-ASCII letters.
_tricky = st.sampled_from(["yes", "No", "null", "~", "on", "0x1F", "1e3", "12:30", "- a", ": b", "# c",
                           "&x", "*y", "!z", "'", '"', "|", ">", "%", "@", "`", "---", "...", "[", "{",
                           "\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\t", " ", "\x00", "\x1b",
                           "\ufeff", "é", "日本", "😀", "\u00a0"])
texts = st.one_of(
    st.text(),
    st.lists(st.one_of(_tricky, st.text(max_size=5)), max_size=12).map("".join),
    st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=90), min_size=2,
             max_size=6).map("\n".join),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                    st.floats(allow_nan=False), texts)
keys = st.one_of(texts, st.integers(), st.booleans())
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from True and 0.0 from -0.0 (== does not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(documents)
def test_a_dumped_document_loads_back_identical(doc: Any) -> None:
    text = dump(doc)
    back = load_yaml(text)
    assert _same(back, doc), f"{doc!r}\nwas written as\n{text}\nand read back as\n{back!r}"


@given(documents)
def test_dumping_is_deterministic_and_a_fixed_point(doc: Any) -> None:
    text = dump(doc)
    assert dump(load_yaml(text)) == text


def test_multi_line_text_is_a_literal_block_so_an_edit_changes_one_line() -> None:
    before = dump({"note": "first line\nsecond line\nthird line\n", "n": 1})
    after = dump({"note": "first line\nsecond line, edited\nthird line\n", "n": 1})
    assert before.startswith("note: |\n  first line\n")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("  second line", "  second line, edited")]


def test_a_long_line_is_never_folded() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    text = dump({"derived": words, "quoted": words + " #"})
    assert text.count("\n") == 2


def test_short_scalar_lists_are_flow_longer_or_nested_ones_block() -> None:
    text = dump({"path": ["continue tools", "stop end"], "long": ["x" * 50, "y" * 50],
                 "nested": [{"a": 1}], "empty": []})
    assert text == ("path: [continue tools, stop end]\n"
                    "long:\n  - " + "x" * 50 + "\n  - " + "y" * 50 + "\n"
                    "nested:\n  - a: 1\n"
                    "empty: []\n")


def test_a_repeated_object_is_written_twice_not_as_an_alias() -> None:
    shared = ["bash"]
    text = dump({"a": shared, "b": shared})
    assert "&" not in text and "*" not in text
    assert text == "a: [bash]\nb: [bash]\n"


def test_strings_that_read_as_other_types_are_quoted() -> None:
    doc = {"a": "yes", "b": "null", "c": "3", "d": "x: y", "e": "# c", "f": "nel\x85", "g": "cr\r"}
    text = dump(doc)
    assert load_yaml(text) == doc
    assert '"nel\\N"' in text and '"cr\\r"' in text
