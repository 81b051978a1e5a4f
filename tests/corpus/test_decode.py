"""The corpus formats: a JSON line is a catalogue sequence document; every problem names file, line and field."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import orjson
import pytest

from bench.catalogue.document import sequence_data
from bench.catalogue.load import load_catalogue
from bench.corpus.decode import CorpusError, iter_json_lines, iter_parquet
from bench.corpus.generate import corpus_lines, write_parquet
from bench.corpus.sources import plan, records
from tests.helpers import ROOT

# the decoder collects garbage after every block it reads: each test here walks its own objects only
pytestmark = pytest.mark.usefixtures("frozen_heap")


def _line(doc: dict[str, object]) -> bytes:
    return orjson.dumps(doc) + b"\n"


def _catalogue_lines() -> tuple[list[bytes], dict[str, object]]:
    cat = load_catalogue(ROOT / "sequences")
    assert not cat.problems and cat.sequences
    lines = [_line({"id": s.id, **sequence_data(s)}) for s in cat.sequences]
    return lines, {s.id: s for s in cat.sequences}


def test_every_catalogue_sequence_as_a_json_line_decodes_to_the_sequence_the_catalogue_loads(tmp_path: Path) -> None:
    lines, by_id = _catalogue_lines()
    path = tmp_path / "catalogue.jsonl"
    path.write_bytes(b"".join(lines))
    got = list(iter_json_lines(path, "catalogue.jsonl"))
    assert [r.sequence.id for r in got] == list(by_id)
    for rec in got:
        assert rec.sequence == dataclasses.replace(by_id[rec.sequence.id], path="")  # type: ignore[type-var]


def test_a_generated_line_is_what_the_sequence_writer_writes_for_the_decoded_sequence(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(itertools.islice(corpus_lines(20_000), 400)))
    for raw, rec in zip(path.read_bytes().splitlines(), iter_json_lines(path, "c.jsonl"), strict=True):
        doc = orjson.loads(raw)
        provider, model = doc.pop("provider"), doc.pop("model")
        assert (rec.provider, rec.model) == (provider, model)
        assert {"id": rec.sequence.id, **sequence_data(rec.sequence)} == doc


def test_an_absent_finish_raw_is_the_dialects_string_and_null_means_none_sent(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(_line({"id": "a", "dialect": "anthropic", "turns": [
        {"finish": "tool_calls", "tool_calls": [{"id": "1", "name": "x"}]},
        {"finish": "unknown", "finish_raw": None}]}))
    (rec,) = iter_json_lines(path, "c.jsonl")
    assert [t.finish_raw for t in rec.sequence.turns] == ["tool_use", None]
    assert (rec.provider, rec.model, rec.sequence.kind) == ("anthropic", "", "recorded")


@pytest.mark.parametrize(("turn", "message"), [
    ({"finish": "stop", "bogus": 1}, "line 3: turns[0].bogus: unknown key"),
    ({"finish": "stop", "finish_raw": "length"}, "line 3: turns[0].finish_raw: 'length' maps to 'length'"),
    ({"finish": "sideways"}, "line 3: turns[0].finish: expected one of 'stop', 'tool_calls', "),
    ({"finish": "error", "error": {"kind": "gremlins"}}, "line 3: turns[0].error.kind: expected one of 'rate_limit'"),
    ({"finish": "stop", "usage": {"input_tokens": -1}}, "line 3: turns[0].usage.input_tokens: Expected `int` >= 0"),
    ({"finish": "stop", "error": {"kind": "timeout"}}, "line 3: turns[0].finish: a turn with an error must have "),
])
def test_a_bad_line_is_one_line_naming_the_file_the_line_and_the_field(tmp_path: Path, turn: dict[str, object],
                                                                        message: str) -> None:
    good = _line({"id": "ok", "dialect": "openai-chat", "turns": [{"finish": "stop"}]})
    path = tmp_path / "c.jsonl"
    path.write_bytes(good + good + _line({"id": "bad", "dialect": "openai-chat", "turns": [turn]}) + good)
    with pytest.raises(CorpusError) as exc:
        list(iter_json_lines(path, "corpus/c.jsonl"))
    text = str(exc.value)
    assert text.startswith("corpus/c.jsonl: " + message), text
    assert "\n" not in text


def test_a_line_that_is_not_json_is_named_by_its_number_in_a_later_block(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bench.corpus.decode.BLOCK_BYTES", 256)
    good = _line({"id": "ok", "dialect": "openai-chat", "turns": [{"finish": "stop"}]})
    path = tmp_path / "c.jsonl"
    path.write_bytes(good * 40 + b'{"id": "x", "dialect": \n' + good)
    with pytest.raises(CorpusError, match=r"^c\.jsonl: line 41: not valid JSON"):
        list(iter_json_lines(path, "c.jsonl"))
    # the same error found by a shard that starts inside the file
    with pytest.raises(CorpusError, match=r"^c\.jsonl: line 41: not valid JSON"):
        list(iter_json_lines(path, "c.jsonl", start=len(good) * 30 + 5))


def test_shards_cut_at_any_offsets_read_every_line_exactly_once(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Against a line, an edge falls on the newline ending the line before, on the line's first byte, one byte
    # into it, or inside it; a shard may hold no line start at all, or several blocks. Each kind of edge is
    # cut alone at the first, a middle and the last line boundary, and all of them at once (shards of one
    # byte), then the file is planned as the command plans it, at sizes that are no multiple of a line.
    lines = list(itertools.islice(corpus_lines(30_000), 12))
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(lines))
    size = path.stat().st_size
    whole = [r.sequence.id for r in iter_json_lines(path, "c.jsonl")]
    assert len(whole) == len(lines)
    starts = [0, *itertools.accumulate(len(line) for line in lines)][:-1]  # where each line begins
    widths = [len(line) for line in lines]
    edges = {kind: [e for b, w in zip(starts, widths, strict=True) if 0 < (e := b + offset(w)) < size]
             for kind, offset in [("on the newline", lambda w: -1), ("first byte", lambda w: 0),
                                  ("one byte in", lambda w: 1), ("inside", lambda w: w // 2)]}

    def read(cuts: list[int]) -> list[str]:
        bounds = [0, *sorted(set(cuts)), size]
        return [r.sequence.id for a, z in itertools.pairwise(bounds) for r in iter_json_lines(path, "c.jsonl", a, z)]

    for kind, at in edges.items():
        for edge in (at[0], at[len(at) // 2], at[-1]):
            assert read([edge]) == whole, (kind, edge)
    every = [e for at in edges.values() for e in at]
    assert read(every + [e + 1 for e in every]) == whole  # with one-byte shards that start no line
    monkeypatch.setattr("bench.corpus.decode.BLOCK_BYTES", 2048)  # under most lines: a shard reads block on block
    for shard_bytes in (997, 4096, 40_000, 10**9):
        got = [r.sequence.id for s in plan([path], "jsonl", shard_bytes=shard_bytes) for r in records(s)]
        assert got == whole, shard_bytes


def test_parquet_rows_decode_to_the_same_records_as_the_json_lines(tmp_path: Path) -> None:
    jsonl, parquet = tmp_path / "c.jsonl", tmp_path / "c.parquet"
    jsonl.write_bytes(b"".join(corpus_lines(5_000)))
    write_parquet(parquet, 5_000, row_group=50)
    from_json = list(iter_json_lines(jsonl, "c.jsonl"))
    from_parquet = [r for s in plan([parquet]) for r in records(s)]
    assert len(plan([parquet])) > 1  # row groups make shards
    assert from_parquet == from_json


def test_a_bad_parquet_row_names_the_row_and_field(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "c.parquet"
    rows = [{"id": "a", "dialect": "openai-chat", "turns": [{"finish": "stop", "finish_raw": "stop"}]},
            {"id": "b", "dialect": "openai-chat", "turns": [{"finish": "stop", "finish_raw": "length"}]}]
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(CorpusError, match=r"^c\.parquet: row 2: turns\[0\]\.finish_raw: 'length' maps to"):
        list(iter_parquet(path, "c.parquet"))


@pytest.mark.parametrize("turns", [
    [{"finish": "stop", "finish_raw": "length"}],
    [{"finish": "stop", "finish_raw": None}],
    [{"finish": "unknown"}],
    [{"finish": "stop", "error": {"kind": "timeout"}}],
    [{"finish": "error"}],
    [{"finish": "stop", "after": {"remind": 3}}],
    [{"finish": "stop", "after": {"stop": 0}}],
    [{"finish": "stop", "after": {"sideways": 0}}],
], ids=["raw-maps-elsewhere", "null-raw", "unknown-without-raw", "error-not-error-finish", "error-without-error",
        "after-past-the-end", "after-stop", "after-not-an-action"])
def test_a_turn_the_catalogue_refuses_is_refused_by_the_corpus_with_the_catalogues_words(
        tmp_path: Path, turns: list[dict[str, object]]) -> None:
    from bench.catalogue.load import SequenceError, parse_sequence

    doc = {"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "s", "turns": turns}
    with pytest.raises(SequenceError) as from_catalogue:
        parse_sequence(doc, "x")
    path = tmp_path / "c.jsonl"
    path.write_bytes(_line({"id": "x", **doc}))
    with pytest.raises(CorpusError) as from_corpus:
        list(iter_json_lines(path, "c.jsonl"))
    assert str(from_corpus.value) == f"c.jsonl: line 1: {from_catalogue.value}"


def test_after_null_or_absent_is_no_after_in_both_formats(tmp_path: Path) -> None:
    from bench.catalogue.load import parse_sequence

    doc = {"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "s",
           "turns": [{"finish": "stop", "after": None}, {"finish": "stop", "after": {"resend": 0}}, {"finish": "stop"}]}
    path = tmp_path / "c.jsonl"
    path.write_bytes(_line({"id": "x", **doc}))
    (rec,) = iter_json_lines(path, "c.jsonl")
    assert rec.sequence.turns == parse_sequence(doc, "x").turns
    assert [t.after for t in rec.sequence.turns] == [(), (("resend", 0),), ()]
