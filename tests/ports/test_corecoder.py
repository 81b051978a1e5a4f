"""CoreCoder's Agent.chat (predicates/corecoder.py) against the pinned source: CoreCoder v0.4.0 from
the PyPI wheel (corecoder/agent.py, corecoder/llm.py) and the openai client's default retries."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.engine.discovery import load_file
from bench.engine.model import Cell, ErrorKind, Turn, TurnError
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from tests.helpers import ROOT, answer, call, seq, tools


@pytest.fixture(scope="module")
def cc() -> Predicate:
    loaded = load_file(ROOT / "predicates" / "corecoder.py")
    assert isinstance(loaded, Predicate), loaded
    return loaded


def run(pred: Predicate, *turns: Turn, then: str = "end", dialect: str = "openai-chat") -> Cell:
    return replay(replace(seq(*turns, then=then), dialect=dialect), pred)  # type: ignore[arg-type]


def error(status: int | None, kind: ErrorKind = "server_error") -> Turn:
    return Turn(finish="error", error=TurnError(kind, status=status))


def test_finish_reason_is_never_read_only_tool_calls_decide(cc: Predicate) -> None:
    # llm.py L110-191 never reads finish_reason; agent.py L62-64 tests resp.tool_calls
    stop_with_call = Turn(finish="stop", finish_raw="stop", tool_calls=(call("read_file"),))
    dropped = Turn(finish="tool_calls", finish_raw="tool_calls")
    cell = run(cc, stop_with_call, dropped, answer())
    assert [s.decision.action for s in cell.steps] == ["continue", "stop"]
    assert (cell.reason, cell.ok, cell.tools_run) == ("text", True, ("read_file",))


def test_fiftieth_tool_round_returns_the_fixed_string_as_success(cc: Predicate) -> None:
    # agent.py L28 max_rounds=50, L54 range(max_rounds), L99 return "(reached maximum tool-call rounds)"
    cell = run(cc, tools("bash"), then="repeat")
    assert cell.n_steps == 50 and len(cell.tools_run) == 50
    assert (cell.outcome, cell.reason, cell.ok) == ("stopped", "max_rounds", True)
    assert cell.steps[-1].decision.rule == "max-rounds"


def test_retries_do_not_count_as_rounds(cc: Predicate) -> None:
    # the retries live inside llm.chat (llm.py L130-134, L193-209), one round of agent.py L54
    turns = [t for _ in range(50) for t in (error(429, "rate_limit"), tools("bash"))]
    cell = run(cc, *turns, answer())
    assert cell.resends == 50 and len(cell.tools_run) == 50 and cell.reason == "max_rounds"


def test_persistent_5xx_costs_three_attempts_of_three_requests(cc: Predicate) -> None:
    # _call_with_retry: 3 attempts (L193-209); each create() is retried twice by the openai client
    cell = run(cc, error(500), then="repeat")
    assert cell.n_steps == 9 and cell.resends == 8
    assert (cell.reason, cell.ok) == ("api_error", False)


def test_bad_request_gets_one_more_call_without_stream_options(cc: Predicate) -> None:
    # llm.py L130-134: except BadRequestError -> pop stream_options -> _call_with_retry again, once
    cell = run(cc, error(400, "invalid_request"), then="repeat")
    assert [s.decision.rule for s in cell.steps] == ["bad-request-fallback", "raise"]


def test_a_401_is_not_retried_at_all(cc: Predicate) -> None:
    # openai _should_retry: not 408/409/429/5xx; llm.py L203-209: status < 500 -> raise
    cell = run(cc, error(401, "authentication"), then="repeat")
    assert (cell.n_steps, cell.reason) == (1, "api_error")


def test_an_error_inside_the_stream_is_not_retried_even_with_a_payload_status(cc: Predicate) -> None:
    # llm.py L141: iterating the stream is outside _call_with_retry (which wraps only create(), L197)
    cell = run(cc, error(400, "stream_error"), then="repeat")
    assert (cell.n_steps, cell.reason, cell.ok) == (1, "stream_error", False)


def test_cut_arguments_fail_but_empty_arguments_run(cc: Predicate) -> None:
    # llm.py L177-180 -> {}; agent.py L108-111 'Error: bad arguments' when bind fails
    turn = Turn(finish="length", finish_raw="length",
                tool_calls=(call("write_file", 0, '{"path": "a'), call("llm_version", 1, ""),
                            call("grep", 2, "[1, 2]")))
    cell = run(cc, turn, answer())
    first = cell.steps[0].decision
    assert (first.action, first.run, first.failed) == ("continue", (1,), (0, 2))


def test_a_body_cut_after_the_headers_is_a_stream_error_but_a_refused_connect_is_retried(cc: Predicate) -> None:
    # httpx's "incomplete chunked read" happens while llm.py L141 iterates (no retry); a refused
    # connect fails inside create() and gets both retry layers (openai client x2, L193-209 x3)
    cut = Turn(finish="error", error=TurnError("connection_reset",
                                               message="peer closed connection (incomplete chunked read)"))
    refused = Turn(finish="error", error=TurnError("connection_refused", message="Connection refused"))
    assert run(cc, cut, then="repeat").n_steps == 1
    assert run(cc, refused, then="repeat").n_steps == 9
