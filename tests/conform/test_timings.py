"""The wall times of a campaign's runs (bench/conform/clock.py): kept in CONFORM_DIR/timings.json,
never in the records, and read back so the next campaign starts its longest runs first."""

from __future__ import annotations

import json
from pathlib import Path

from bench.conform.campaign import Port, run_drivers
from bench.conform.clock import (
    ERROR_TURN_SECONDS,
    REPEATED_ERROR_SECONDS,
    TIMINGS_FILE,
    UNKNOWN_SECONDS,
    estimate,
    read_timings,
    slowest,
    write_timings,
)
from bench.conform.report import make_record, record_text
from bench.conform.runner import ConformResult, Driver
from tests.conform.test_parallel_runs import PACE, ROOT, calling, like_pace
from tests.serve.serving import make_sequence

A, B, C = calling("fast", "a-first"), calling("fast", "b-second"), calling("fast", "c-third")
ERROR = {"finish": "error", "error": {"kind": "server_error", "status": 500}}


def test_runs_start_longest_first_by_the_last_timings(tmp_path: Path) -> None:
    started: list[str] = []

    def seen(_: Driver, res: ConformResult) -> None:
        started.append(res.sequence)

    # one worker: they finish in the order they start. c-third took longest; b-second has no timing,
    # so it is estimated at the median of the loop's known runs (27.5 s), between the two
    timings = {"pace c-third": 50.0, "pace a-first": 5.0, "other a-first": 99.0}
    runs = run_drivers([PACE], [A, B, C], {"pace": tmp_path}, {"pace": Port(like_pace)}, root=ROOT, timeout=60,
                       jobs=1, progress=seen, timings=timings)
    assert started == ["c-third", "b-second", "a-first"]
    assert [r.sequence for r in runs[0].results] == ["a-first", "b-second", "c-third"]  # the report's order


def test_without_a_timing_an_error_repeated_on_every_request_is_estimated_longest() -> None:
    once = make_sequence([ERROR, {"finish": "stop", "content": "done"}], sid="once")
    repeated = make_sequence([{"finish": "stop", "content": "hi"}, ERROR], then="repeat", sid="repeated")
    plain = make_sequence([{"finish": "stop", "content": "done"}], sid="plain")
    assert estimate(PACE, plain, {}) == UNKNOWN_SECONDS
    assert estimate(PACE, once, {}) == UNKNOWN_SECONDS + ERROR_TURN_SECONDS
    assert estimate(PACE, repeated, {}) == UNKNOWN_SECONDS + ERROR_TURN_SECONDS + REPEATED_ERROR_SECONDS
    assert estimate(PACE, plain, {"pace plain": 3.0}) == 3.0


def test_timings_are_merged_into_conform_dir_and_the_records_do_not_change_with_them(tmp_path: Path) -> None:
    [run] = run_drivers([PACE], [A, B], {"pace": tmp_path}, {"pace": Port(like_pace)}, root=ROOT, timeout=60, jobs=2)
    folder = tmp_path / "conform"
    folder.mkdir()
    (folder / TIMINGS_FILE).write_text(json.dumps({"pace c-third": 7.0, "pace a-first": 1000.0}), encoding="utf-8")
    write_timings(folder, [("pace", r) for r in run.results])
    timings = read_timings(folder)
    assert timings["pace c-third"] == 7.0  # a run this campaign did not make keeps its time
    assert timings["pace a-first"] == round(run.results[0].seconds, 2) != 1000.0
    assert slowest([("pace", r) for r in run.results], 1)[0].endswith(
        "pace " + max(run.results, key=lambda r: r.seconds).sequence)
    # the same behaviour, other wall times: the same record, byte for byte
    slower = [ConformResult(r.sequence, r.observed, r.port, r.difference, r.result, r.details, r.seconds + 60)
              for r in run.results]
    assert record_text(make_record(PACE, slower, {})) == record_text(make_record(PACE, run.results, {}))


def test_a_timings_file_that_does_not_read_orders_nothing(tmp_path: Path) -> None:
    (tmp_path / TIMINGS_FILE).write_text("{not json", encoding="utf-8")
    assert read_timings(tmp_path) == {}
    (tmp_path / TIMINGS_FILE).write_text('{"pace a": "slow", "pace b": 2}', encoding="utf-8")
    assert read_timings(tmp_path) == {"pace b": 2.0}
