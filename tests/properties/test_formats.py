"""Round trips of the catalogue format, and the dialect tables' agreement with canonical()."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.catalogue.document import dump_sequence, sequence_to_yaml
from bench.catalogue.load import load_catalogue, load_sequence, load_yaml, parse_sequence
from bench.engine.model import FINISHES, Requirement, Sequence, ToolCall, Turn
from bench.fuzz.strategies import UNKNOWN_RAW, describe, finish_raws, long_sequences, sequences
from bench.wires import dialects

ROOT = Path(__file__).resolve().parents[2]

requirements = st.builds(
    Requirement,
    ok=st.one_of(st.none(), st.booleans()),
    stops_within=st.one_of(st.none(), st.integers(1, 60)),
    no_dropped_calls=st.booleans(),
    no_truncated_runs=st.booleans(),
    answer_after_tools=st.booleans(),
)
texts = st.text(min_size=1, max_size=30).map(str.strip).filter(bool)


@st.composite
def catalogue_sequences(draw: st.DrawFn) -> Sequence:
    """Generated sequences with the free-text fields a person writes: title, source, tags, require."""
    seq = draw(st.one_of(sequences(), long_sequences(min_turns=20, max_turns=60)))
    return Sequence(id="round-trip", title=draw(texts), kind=draw(st.sampled_from(("constructed", "recorded"))),
                    dialect=seq.dialect, source=draw(texts), turns=seq.turns, then=seq.then,
                    tags=tuple(draw(st.lists(texts, max_size=3))), require=draw(requirements), path="x.yaml")


@given(catalogue_sequences())
def test_a_sequence_written_and_read_back_is_the_same_sequence(seq: Sequence) -> None:
    text = sequence_to_yaml(seq)
    back = parse_sequence(load_yaml(text), seq.id, seq.path)
    assert back == seq, f"{describe(seq)}\nwas written as\n{text}\nand read back as\n{describe(back)}"


def test_a_dumped_file_loads_with_its_stem_as_id(tmp_path: Path) -> None:
    seq = _fixed_sequence()
    path = dump_sequence(seq, tmp_path / "found" / "my-find.yaml")
    back = load_sequence(path)
    assert back.id == "my-find"
    assert back.turns == seq.turns and back.require == seq.require and back.then == seq.then


def _fixed_sequence() -> Sequence:
    return Sequence(id="x", title="t", kind="constructed", dialect="anthropic", source="s",
                    turns=(Turn("tool_calls", "tool_use", None, (ToolCall("", "bash", '{"cmd": "l'),)),
                           Turn("stop", "stop_sequence", "")),
                    then="repeat", require=Requirement(ok=False, no_dropped_calls=True))


def test_every_committed_sequence_survives_a_round_trip() -> None:
    cat = load_catalogue(ROOT / "sequences")
    assert cat.sequences, "the catalogue is empty"
    for seq in cat.sequences:
        back = parse_sequence(load_yaml(sequence_to_yaml(seq)), seq.id, seq.path)
        assert back == seq, f"{seq.path} does not survive sequence_to_yaml"


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
def test_each_raw_finish_of_a_dialect_maps_to_exactly_one_canonical_finish(dialect: dialects.Dialect) -> None:
    table = dialects.TABLES[dialect]
    for raw, entry in table.items():
        assert entry.finish in FINISHES, f"{dialect} {raw!r} maps to {entry.finish!r}, not a canonical finish"
        assert dialects.canonical(dialect, raw) == entry.finish
        assert entry.cite.strip(), f"{dialect} {raw!r} has no citation"
    # a dict cannot hold a key twice, but a near-duplicate (case or spaces) would map one string two ways
    folded = [raw.strip().lower() for raw in table]
    assert len(folded) == len(set(folded)), f"{dialect} has raw strings that differ only in case or spaces"


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
def test_default_raw_of_a_finish_maps_back_to_that_finish(dialect: dialects.Dialect) -> None:
    for finish in FINISHES:
        raw = dialects.default_raw(dialect, finish)
        if raw is not None:
            assert dialects.canonical(dialect, raw) == finish


@given(st.sampled_from(dialects.DIALECTS).flatmap(lambda d: st.tuples(st.just(d), finish_raws(d))))
def test_canonical_agrees_with_the_table_and_sends_anything_else_to_unknown(pair: tuple[dialects.Dialect, str | None]
                                                                             ) -> None:
    dialect, raw = pair
    entry = dialects.TABLES[dialect].get(raw) if raw is not None else None
    expected = entry.finish if entry is not None else "unknown"
    assert dialects.canonical(dialect, raw) == expected


@given(st.sampled_from(dialects.DIALECTS), st.text(max_size=30))
def test_a_string_outside_the_table_is_unknown(dialect: dialects.Dialect, raw: str) -> None:
    if raw not in dialects.TABLES[dialect]:
        assert dialects.canonical(dialect, raw) == "unknown"


def test_the_unknown_raw_strings_are_in_no_table_they_are_used_with() -> None:
    for dialect in dialects.DIALECTS:
        known = set(dialects.TABLES[dialect])
        strangers = [s for s in UNKNOWN_RAW if s not in known]
        assert strangers, f"every hostile raw string is known to {dialect}"
        assert all(dialects.canonical(dialect, s) == "unknown" for s in strangers)
