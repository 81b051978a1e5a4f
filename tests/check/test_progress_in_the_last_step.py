"""`require: progress`: a loop that runs a stuck round once more in the step where it stops.

Mastra (Agent.generate, maxSteps 5) on chat-polling-stalls ran check_build in its fifth step, the
fourth run of the same call with the same result, then stopped at its step cap without sending the
result back. The run reached the bench's tool, so the server saw it; running the round again is what
`progress: 3` forbids, whether or not a request follows it."""

from __future__ import annotations

from bench.engine.judge import judge
from bench.engine.model import Cell, Decision, Requirement, Step, ToolCall, Turn
from tests.helpers import seq


def poll(i: int) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls",
                tool_calls=(ToolCall(f"c{i}", "check_build", '{"id": 42}', "running: 45%"),))


def live_cell(*actions: str, ran_in_stop: bool) -> Cell:
    steps = []
    for i, a in enumerate(actions):
        d = Decision(a, "observed", ok=True if a == "stop" else None,  # type: ignore[arg-type]
                     reason="tool-calls" if a == "stop" else None)
        ran = a == "continue" or (a == "stop" and ran_in_stop)
        steps.append(Step(i + 1, i, d, ("check_build",) if ran else ()))
    return Cell("s", "mastra@live", "stopped", tuple(steps), ok=True, reason="tool-calls")


SEQ = seq(*[poll(i) for i in range(5)], then="repeat", require=Requirement(progress=3))


def test_running_a_stuck_round_once_more_in_the_last_step_breaks_progress() -> None:
    (v,) = judge(SEQ, live_cell("continue", "continue", "continue", "stop", ran_in_stop=True))
    assert (v.requirement, v.step) == ("progress: 3", 4)
    assert "ran check_build again" in v.detail


def test_a_stop_that_runs_nothing_after_the_stuck_rounds_keeps_progress() -> None:
    assert judge(SEQ, live_cell("continue", "continue", "continue", "stop", ran_in_stop=False)) == ()


def test_a_last_step_run_within_the_allowed_rounds_keeps_progress() -> None:
    assert judge(SEQ, live_cell("continue", "continue", "stop", ran_in_stop=True)) == ()
