"""A program that listed the bench's tools takes them: a result no execution answers is a call that
never reached a tool (failed, known ``executed``), even in a run where no call ran at all.

Mastra on chat-tool-call-blank-name-x3 listed the tools (none: the only call's name is blank), refused
every call in its own words ("Tool \"\" not found") and had no execution in the run: the results were
guessed by wording and read as run. The server's half (a run notes ``GET /_stopbench/tools``) is
bench/serve/app.py's; :class:`bench.serve.results.ResultJudge` takes it as ``bench_tools``."""

from __future__ import annotations

from bench.engine.model import ToolCall, Turn
from bench.serve.results import ResultJudge

TURN = Turn(finish="tool_calls", content=None, tool_calls=(ToolCall("c1", "", '{"q": 1}'),))


def test_a_result_without_an_execution_is_failed_when_the_program_listed_the_bench_tools() -> None:
    assert ResultJudge(TURN, step=1, bench_tools=True)(0, 'Tool "" not found', None) == (True, "executed")


def test_without_the_bench_tools_the_result_is_still_guessed_from_its_wording() -> None:
    assert ResultJudge(TURN, step=1)(0, 'Tool "" not found', None) == (False, "wording")
