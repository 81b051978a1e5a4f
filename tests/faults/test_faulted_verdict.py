"""The judge knows what was injected: a step whose answer a fault broke reads as the error the loop
got, success on it breaks a requirement, and an early retry after Retry-After is shown."""

from __future__ import annotations

from types import SimpleNamespace

from bench.check.faulted import NO_SUCCESS_ON_FAULT, RETRY_AFTER, StepFault, judge_faulted, received, step_faults
from bench.engine.judge import judge
from bench.engine.model import Cell, Decision, Resend, Step, Stop
from bench.faults import Injected
from tests.check.conftest import CALL, small_sequence

CUT = Injected(("cut after 3 frames (stream ended without a finish)",), "stream_cut")
LIMITED = Injected(("HTTP 429, Retry-After: 1",), "rate_limit", 429, 1)
ANSWER = {"finish": "stop", "content": "The answer is 42."}


def cell(*steps: Step) -> Cell:
    last = steps[-1].decision
    return Cell("s", "loop@live", "stopped", steps, last.reason, last.ok)


def test_success_reported_on_a_cut_stream_breaks_no_success_on_fault() -> None:
    seq = small_sequence("s", [ANSWER], require={"stops_within": 2})
    naive = cell(Step(1, 0, Stop("no_tool_calls", True, "observed")))
    assert judge(seq, naive) == ()  # without knowing the cut, the naive loop looks right
    got = judge_faulted(seq, naive, [StepFault(1, CUT)])
    assert [v.requirement for v in got] == [NO_SUCCESS_ON_FAULT]
    assert got[0].step == 1 and "cut after 3 frames" in got[0].detail


def test_giving_up_openly_on_a_cut_stream_meets_it() -> None:
    seq = small_sequence("s", [ANSWER], require={"stops_within": 2})
    careful = cell(Step(1, 0, Stop("unknown_finish", False, "observed")))
    assert judge_faulted(seq, careful, [StepFault(1, CUT)]) == ()


def test_a_resend_of_a_cut_turn_with_calls_is_not_a_dropped_call() -> None:
    seq = small_sequence("s", [CALL, ANSWER], require={"no_dropped_calls": True, "stops_within": 2})
    retried = cell(Step(1, 0, Resend("observed")),
                   Step(2, 0, Decision("continue", "observed", run="all"), tools_run=("read_file",)),
                   Step(3, 1, Stop("no_tool_calls", True, "observed")))
    plain = judge(seq, retried)
    assert {v.requirement for v in plain} == {"no_dropped_calls", "stops_within: 2"}
    assert judge_faulted(seq, retried, [StepFault(1, CUT)]) == ()  # the retry the cut cost is allowed


def test_a_retry_after_the_wait_meets_retry_after() -> None:
    seq = small_sequence("s", [ANSWER], require={"ok": True})
    waited = cell(Step(1, 0, Resend("observed")), Step(2, 0, Stop("no_tool_calls", True, "observed")))
    assert judge_faulted(seq, waited, [StepFault(1, LIMITED, waited=1.04)]) == ()


def test_a_retry_before_the_wait_is_over_breaks_retry_after() -> None:
    seq = small_sequence("s", [ANSWER], require={"ok": True})
    hasty = cell(Step(1, 0, Resend("observed")), Step(2, 0, Stop("no_tool_calls", True, "observed")))
    got = judge_faulted(seq, hasty, [StepFault(1, LIMITED, waited=0.02)])
    assert [(v.requirement, v.step) for v in got] == [(RETRY_AFTER, 2)]
    assert "0.02 s" in got[0].detail and "Retry-After: 1" in got[0].detail


def test_the_received_view_points_a_broken_step_at_the_error_the_loop_got() -> None:
    seq = small_sequence("s", [ANSWER], require={"stops_within": 1})
    c = cell(Step(1, 0, Resend("observed")), Step(2, 0, Stop("no_tool_calls", True, "observed")))
    view_seq, view_cell = received(seq, c, [StepFault(1, LIMITED)])
    err = view_seq.turns[view_cell.steps[0].turn].error
    assert err is not None and (err.kind, err.status) == ("rate_limit", 429)
    assert view_cell.steps[1].turn == 0 and view_seq.require.stops_within == 2
    assert seq.turns == small_sequence("s", [ANSWER]).turns  # the sequence itself is untouched


def test_pacing_alone_changes_no_verdict() -> None:
    seq = small_sequence("s", [ANSWER], require={"ok": True})
    c = cell(Step(1, 0, Stop("no_tool_calls", True, "observed")))
    assert judge_faulted(seq, c, [StepFault(1, Injected(("paced: first frame after 300 ms",)))]) == ()


def test_step_faults_number_steps_as_the_observation_does_and_time_the_retry() -> None:
    rec = SimpleNamespace
    records = [rec(kind="side", at=0.0, injected=None), rec(kind="model", at=10.0, injected=LIMITED),
               rec(kind="refused", at=10.5, injected=None), rec(kind="model", at=11.25, injected=None),
               rec(kind="model", at=12.0, injected=CUT)]
    assert step_faults(records) == (StepFault(1, LIMITED, 1.25), StepFault(3, CUT, None))


def test_a_detail_names_the_sequences_turn_not_the_received_views_error_turn() -> None:
    seq = small_sequence("s", [CALL, ANSWER], require={"answer_on": [1]})
    naive = cell(Step(1, 0, Stop("no_tool_calls", True, "observed")))
    got = judge_faulted(seq, naive, [StepFault(1, CUT)])
    answer_on = next(v for v in got if v.requirement.startswith("answer_on"))
    assert "turn 0 (as a fault broke it)" in answer_on.detail and "turn 2" not in answer_on.detail
