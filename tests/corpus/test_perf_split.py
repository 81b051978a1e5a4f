"""make perf's decode split (devtools.perf_corpus.split) reads the same sequences as the corpus reader and
times both of its parts."""

from __future__ import annotations

from pathlib import Path

from bench.corpus import decode
from bench.corpus.generate import write_json_lines
from devtools.perf_corpus import split


def test_the_split_reads_every_sequence_the_reader_reads_and_times_both_parts(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    write_json_lines(path, 3_000, distinct_turns=3_000)
    decoding, making, n = split(path)
    assert n == sum(1 for _ in decode.iter_json_lines(path, path.name)) > 10
    assert decoding > 0 and making > 0
