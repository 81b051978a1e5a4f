"""One shard's counts: outcomes, the findings a recorded trace supports, edge cases; merged in any order."""

from __future__ import annotations

import itertools
from pathlib import Path

from bench.corpus.aggregate import Partial, cell_findings, count_records
from bench.corpus.generate import corpus_lines
from bench.corpus.output import tables
from bench.corpus.record import Traced
from bench.corpus.run import Job, process_shard
from bench.corpus.sources import plan
from bench.engine.discovery import load_file
from bench.engine.model import Turn
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools, truncated


def _pred(name: str) -> Predicate:
    pred = load_file(ROOT / "predicates" / f"{name}.py")
    assert isinstance(pred, Predicate)
    return pred


def _findings(name: str, *turns: Turn) -> list[str]:
    s = seq(*turns)
    pred = _pred(name)
    return cell_findings(s, replay(s, pred, judged=False), pred)


def test_success_on_a_cut_off_turn_is_a_finding_for_the_naive_loop_and_not_for_the_reference() -> None:
    assert _findings("finish_only", tools("a"), truncated()) == ["truncated_as_success"]  # any finish but tool_calls
    assert "truncated_as_success" not in _findings("reference", tools("a"), truncated())


def test_dropped_calls_and_calls_under_stop_are_findings() -> None:
    stop_with_call = Turn("stop", "stop", "I'll run it", (call("grep"),))
    assert _findings("seed000_finish", stop_with_call) == ["stop_calls_run"]  # stops, running ALL
    assert _findings("finish_only", stop_with_call) == ["calls_dropped", "stop_calls_not_run"]  # "drops the calls"


def test_a_loop_stopped_by_its_own_cap_before_the_recording_ended_is_a_finding() -> None:
    pred = _pred("seed000_fixed")
    assert pred.max_steps is not None
    many = [tools("a")] * (pred.max_steps + 3) + [answer()]
    assert "stopped_at_cap" in _findings("seed000_fixed", *many)
    assert "stopped_at_cap" not in _findings("seed000_fixed", tools("a"), answer())


def test_examples_are_the_smallest_ids_and_counts_are_exact() -> None:
    preds = [_pred("seed000_tool_calls")]
    recs = [Traced(seq(tools("a"), truncated(), sid=f"s{i:02d}"), "openai", "m") for i in (7, 3, 9, 1, 5)]
    part = count_records(recs, preds, 200)
    assert part.findings[("seed000_tool_calls", "truncated_as_success")] == 5
    assert part.examples[("seed000_tool_calls", "truncated_as_success")] == ["s01", "s03", "s05"]
    assert part.edges[("openai", "m", "truncation")] == [5, 5]
    assert part.groups[("openai", "m")] == [5, 10]


def test_merging_shards_in_any_order_gives_the_same_tables(tmp_path: Path, frozen_heap: None) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(itertools.islice(corpus_lines(50_000), 120)))
    shards = plan([path], "jsonl", shard_bytes=20_000)
    assert len(shards) >= 4
    job = Job(str(ROOT / "predicates"), False, ("seed000_tool_calls", "reference", "finish_only"), 200)
    parts = [process_shard(s, job) for s in shards]
    first = tables(_merged(parts))
    assert tables(_merged(list(reversed(parts)))) == first
    assert tables(_merged(parts[1::2] + parts[::2])) == first
    assert sum(r["cells"] for r in first["cells"]) == 3 * 120


def _merged(parts: list[Partial]) -> Partial:
    total = Partial(predicates=parts[0].predicates)
    for p in parts:
        total.merge(p)
    return total
