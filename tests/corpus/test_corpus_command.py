"""`stopbench corpus` as a user runs it: the report files, exit statuses, bad input, and Dask."""

from __future__ import annotations

import csv
import itertools
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.corpus.generate import corpus_lines
from tests.helpers import ROOT

# the decoder collects garbage after every block it reads: each test here walks its own objects only
pytestmark = pytest.mark.usefixtures("frozen_heap")

PREDICATES = ("seed000_tool_calls", "finish_only", "reference")
FILES = ("cells.csv", "cells.parquet", "findings.csv", "findings.parquet", "edge_cases.csv", "edge_cases.parquet",
         "index.html")


@pytest.fixture
def preds(tmp_path: Path) -> Path:
    folder = tmp_path / "predicates"
    folder.mkdir()
    for name in PREDICATES:
        shutil.copy(ROOT / "predicates" / f"{name}.py", folder)
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b"".join(itertools.islice(corpus_lines(40_000), 150)))
    return path


def corpus_cmd(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["corpus", "--no-entry-points", *map(str, args)])


def test_the_report_has_every_predicate_outcome_and_finding_and_a_page(tmp_path: Path, preds: Path,
                                                                        corpus: Path) -> None:
    res = corpus_cmd(corpus, "--out", tmp_path / "out", "--predicates", preds)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(FILES)
    with (tmp_path / "out" / "cells.csv").open() as fh:
        cells = list(csv.DictReader(fh))
    assert {r["predicate"] for r in cells} == set(PREDICATES)
    assert all(sum(int(r["cells"]) for r in cells if r["predicate"] == p) == 150 for p in PREDICATES)
    with (tmp_path / "out" / "findings.csv").open() as fh:
        findings = {(r["predicate"], r["finding"]): r for r in csv.DictReader(fh)}
    naive = findings[("finish_only", "truncated_as_success")]
    assert int(naive["cells"]) > 0 and naive["examples"].startswith("sess-")
    assert findings[("reference", "truncated_as_success")]["cells"] == "0"
    page = (tmp_path / "out" / "index.html").read_text()
    assert "stopbench corpus" in page and "anthropic / claude-sonnet-4" in page


def test_a_bad_line_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, preds: Path, corpus: Path) -> None:
    lines = corpus.read_bytes().splitlines(keepends=True)
    doc = orjson.loads(lines[99])
    doc["turns"][0]["finish"] = "sideways"
    lines[99] = orjson.dumps(doc) + b"\n"
    corpus.write_bytes(b"".join(lines))
    out = tmp_path / "out"
    out.mkdir()
    (out / "cells.csv").write_text("the previous report\n")
    res = corpus_cmd(corpus, "--out", out, "--predicates", preds)
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert "corpus.jsonl: line 100: turns[0].finish: expected one of 'stop'" in res.output
    assert [p.name for p in out.iterdir()] == ["cells.csv"]
    assert (out / "cells.csv").read_text() == "the previous report\n"


def test_a_file_in_no_known_format_exits_2_naming_it(tmp_path: Path, preds: Path) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("hello\n")
    res = corpus_cmd(odd, "--out", tmp_path / "out", "--predicates", preds)
    assert res.exit_code == 2
    assert "notes.txt: not a corpus format stopbench knows" in res.output
    assert not (tmp_path / "out").exists()


def test_a_predicate_that_raises_crashes_its_cells_and_the_run_exits_1(tmp_path: Path, preds: Path,
                                                                        corpus: Path) -> None:
    (preds / "boom.py").write_text(
        "from bench import Decision, State, Turn, predicate\n"
        "@predicate(reasons=['x'], rules={'r': 'r'})\n"
        "def decide(turn: Turn, state: State) -> Decision:\n"
        "    raise RuntimeError('boom')\n")
    res = corpus_cmd(corpus, "--out", tmp_path / "out", "--predicates", preds)
    assert res.exit_code == 1, res.output
    with (tmp_path / "out" / "cells.csv").open() as fh:
        crashed = [r for r in csv.DictReader(fh) if r["predicate"] == "boom" and r["outcome"] == "crashed"]
    assert crashed[0]["cells"] == "150"


def test_a_local_dask_cluster_of_two_workers_gives_the_local_report_bit_for_bit(tmp_path: Path, preds: Path,
                                                                                  corpus: Path) -> None:
    shards = ("--shard-bytes", "150000")  # several shards for two workers
    local = corpus_cmd(corpus, "--out", tmp_path / "local", "--predicates", preds, *shards)
    assert local.exit_code == 0, local.output
    dask = corpus_cmd(corpus, "--out", tmp_path / "dask", "--predicates", preds, *shards, "--dask", "local",
                      "--workers", "2")
    assert dask.exit_code == 0, dask.output
    assert "in 6 shard(s)" in dask.output and "on Dask local" in dask.output
    for name in FILES:
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
