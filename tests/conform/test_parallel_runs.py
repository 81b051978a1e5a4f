"""`stopbench conform --jobs`: (loop, sequence) runs side by side, each on its own replay server,
with the report in the catalogue's order whatever order they finish in; a run that timed out is run
again once and the report says so; a run that finished is never run again."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from bench import Continue, Stop, predicate
from bench.conform.campaign import Port, run_drivers
from bench.conform.report import conformance_markdown, make_record, record_text
from bench.conform.runner import TIMED_OUT, ConformResult, Driver
from bench.engine.model import Decision, Turn
from bench.engine.predicate import State
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
PACE = Driver("pace", "paceport", "tests/conform/pace_driver.py", "openai-chat", "nothing to install",
              interpreter=sys.executable)
OTHER = Driver("other", "otherport", "tests/conform/pace_driver.py", "openai-chat", "nothing to install",
               interpreter=sys.executable)


@predicate(reasons=["done"], rules={"calls": "runs every call", "answer": "no calls"})
def like_pace(turn: Turn, state: State) -> Decision:
    return Continue("calls") if turn.tool_calls else Stop("done", ok=True, rule="answer")


@predicate(reasons=["done"], rules={"first": "stops at once"})
def stops_at_once(turn: Turn, state: State) -> Decision:
    return Stop("done", ok=True, rule="first")


def calling(tool: str, sid: str):  # type: ignore[no-untyped-def]
    return make_sequence([{"finish": "tool_calls", "content": None,
                           "tool_calls": [{"id": "a", "name": tool, "arguments": '{"q": "x"}'}]},
                          {"finish": "stop", "content": "done"}], sid=sid)


MEET, FAST, HANG = calling("meet", "a-meet"), calling("fast", "b-fast"), calling("hang", "c-hang")


def runs_of(folder: Path, tool: str) -> list[str]:
    """The base URLs of the runs of the sequence calling `tool` (tests/conform/pace_driver.py's log)."""
    path = folder / f"runs-{tool}"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [line.split(" ", 1)[1] for line in lines if line.startswith("run ")]


def test_runs_side_by_side_are_reported_in_the_catalogue_order_not_the_order_they_finish(tmp_path: Path) -> None:
    # both loops' a-meet runs wait for each other (so they ran at once) and for both b-fast runs to end
    # (so they finish last); one folder for both loops, as the pace driver's log is shared
    loops = {"pace": tmp_path, "other": tmp_path}
    ports = {"pace": Port(like_pace), "other": Port(like_pace)}
    finished: list[tuple[str, str]] = []

    def seen(driver: Driver, res: ConformResult) -> None:
        finished.append((driver.name, res.sequence))

    runs = run_drivers([PACE, OTHER], [MEET, FAST], loops, ports, root=ROOT, timeout=60, jobs=4, progress=seen)
    assert set(finished[:2]) == {("pace", "b-fast"), ("other", "b-fast")}
    assert [[r.sequence for r in run.results] for run in runs] == [["a-meet", "b-fast"], ["a-meet", "b-fast"]]
    assert all(r.difference is None for run in runs for r in run.results)
    # each (loop, sequence) pair was served by a server of its own
    served = runs_of(tmp_path, "meet") + runs_of(tmp_path, "fast")
    assert len(served) == len(set(served)) == 4
    # run again: the same records, byte for byte
    for f in tmp_path.iterdir():
        f.unlink()
    again = run_drivers([PACE, OTHER], [MEET, FAST], loops, ports, root=ROOT, timeout=60, jobs=4)
    assert [record_text(make_record(r.driver, r.results, r.not_run)) for r in runs] == \
        [record_text(make_record(r.driver, r.results, r.not_run)) for r in again]


def test_a_run_that_timed_out_is_run_again_once_and_the_report_says_so(tmp_path: Path) -> None:
    # the first run hangs until the timeout; the second, a plain run, takes under a second
    runs = run_drivers([PACE], [HANG], {"pace": tmp_path}, {"pace": Port(like_pace)}, root=ROOT, timeout=10,
                       jobs=2)
    [run] = runs
    [res] = run.results
    assert res.difference is None and not res.result.get(TIMED_OUT)  # the second run's result
    assert len(runs_of(tmp_path, "hang")) == 2
    assert run.retried == {"c-hang": "run again after a timeout: the driver did not finish within 10 s"}
    assert "run again after a timeout" in run.summary()
    record = make_record(PACE, run.results, run.not_run, retried=run.retried)
    assert record["sequences"]["c-hang"]["retried"] == run.retried["c-hang"]
    md = conformance_markdown(["c-hang"], [PACE], {"pace": record}, {"pace": {}})
    row = next(line for line in md.splitlines() if line.startswith("| c-hang"))
    assert row.rstrip(" |").endswith("same (run again: the first run timed out)")
    summary = next(line for line in md.splitlines() if line.startswith("| pace "))
    assert [c.strip() for c in summary.strip("|").split("|")][-1] == "1"
    # the timed-out run's child (a CLI's binary) was ended with it
    child = int((tmp_path / "child-pid").read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)


def test_a_run_that_finished_with_a_difference_is_never_run_again(tmp_path: Path) -> None:
    [run] = run_drivers([PACE], [FAST], {"pace": tmp_path}, {"pace": Port(stops_at_once)}, root=ROOT, timeout=60,
                        retries=3)
    assert run.differing == 1 and run.retried == {} and run.failing
    assert len(runs_of(tmp_path, "fast")) == 1


def test_with_no_retries_a_timeout_is_a_failed_driver(tmp_path: Path) -> None:
    [run] = run_drivers([PACE], [HANG], {"pace": tmp_path}, {"pace": Port(like_pace)}, root=ROOT, timeout=3,
                        retries=0)
    [res] = run.results
    assert res.result.get(TIMED_OUT) and run.failing == (res,) and run.retried == {}


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, exited but not yet reaped by its parent, counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_an_interrupted_run_ends_the_drivers_still_running(tmp_path: Path) -> None:
    # a callback that fails (as Ctrl-C would) once b-fast is in: the hung c-hang run is ended with its
    # child at once, not left to its timeout
    def interrupt(driver: Driver, res: ConformResult) -> None:
        raise KeyboardInterrupt

    try:
        run_drivers([PACE], [HANG, FAST], {"pace": tmp_path}, {"pace": Port(like_pace)}, root=ROOT, timeout=300,
                    jobs=2, retries=0, progress=interrupt)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert len(runs_of(tmp_path, "hang")) == 1
    child = int((tmp_path / "child-pid").read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)
