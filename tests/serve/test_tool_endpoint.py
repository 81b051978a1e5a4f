"""The tool endpoint: the sequence's tools served to the program, each execution recorded, and the
observation knowing which calls ran from the executions (then markers, then wording)."""

from __future__ import annotations

from typing import Any

import httpx

from bench.serve import observed_cell
from bench.serve.tools import tool_schemas
from tests.serve.serving import make_sequence, serving

CALLS = [{"id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'},
         {"id": "call_b", "name": "grep", "arguments": '{"pattern": "def"}'}]
TWO_CALLS: dict[str, Any] = {"finish": "tool_calls", "content": None, "tool_calls": CALLS}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}
USER = [{"role": "user", "content": "go"}]
REFUSED = "1 validation error for grep\npattern\n  Field required"


def chat(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    got = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": messages, "tools": [
        {"type": "function", "function": {"name": "read_file", "parameters": {}}}]}, timeout=10)
    assert got.status_code == 200, got.text
    return got.json()["choices"][0]["message"]  # type: ignore[no-any-return]


def tool(url: str, name: str, args: Any) -> httpx.Response:
    return httpx.post(f"{url}/_stopbench/tools/{name}", json=args, timeout=10)


def round_trip(url: str, results: list[str]) -> None:
    """One tool round of a chat client: the first request, the echo and `results` (one per call)."""
    msgs = list(USER)
    echo = chat(url, msgs)
    msgs.append(echo)
    for call, text in zip(echo["tool_calls"], results, strict=True):
        msgs.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    chat(url, msgs)


def test_get_lists_the_sequence_tools_as_check_describes_them() -> None:
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        got = httpx.get(srv.url + "/_stopbench/tools", timeout=10)
    assert got.status_code == 200
    assert got.json() == {"tools": tool_schemas(seq)}
    assert [t["name"] for t in got.json()["tools"]] == ["read_file", "grep"]


def test_post_runs_a_tool_records_it_and_numbers_the_executions() -> None:
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        chat(srv.url, USER)
        first = tool(srv.url, "read_file", {"path": "a.py"})
        second = tool(srv.url, "grep", {"pattern": "def"})
        unknown = tool(srv.url, "rm_rf", {})
        bad = httpx.post(srv.url + "/_stopbench/tools/grep", content=b"{not json", timeout=10)
        listed = [e.as_json() for e in srv.session.executions()]
    assert (first.status_code, first.json()) == (200, {"content": "STOPBENCH-OK read_file #1", "is_error": False})
    assert (second.status_code, second.json()) == (200, {"content": "STOPBENCH-OK grep #2", "is_error": False})
    assert (unknown.status_code, unknown.json()) == (404, {"content": "unknown tool rm_rf", "is_error": True})
    assert bad.status_code == 400 and "\n" not in bad.json()["content"]
    assert listed == [
        {"n": 1, "name": "read_file", "arguments": {"path": "a.py"}, "answered": 1,
         "content": "STOPBENCH-OK read_file #1", "is_error": False},
        {"n": 2, "name": "grep", "arguments": {"pattern": "def"}, "answered": 1,
         "content": "STOPBENCH-OK grep #2", "is_error": False},
        {"n": 3, "name": "rm_rf", "arguments": {}, "answered": 1, "content": "unknown tool rm_rf", "is_error": True}]


def test_a_scripted_result_is_what_the_tool_answers() -> None:
    seq = make_sequence([{"finish": "tool_calls", "tool_calls": [
        {"id": "c1", "name": "poll", "arguments": "{}", "result": "still running"}]}, ANSWER])
    with serving(seq) as srv:
        chat(srv.url, USER)
        got = tool(srv.url, "poll", {})
    assert got.json() == {"content": "still running", "is_error": False}


def test_executions_say_which_calls_ran_whatever_the_results_say() -> None:
    # the loop runs read_file through the endpoint and refuses grep in its own words (LlamaIndex
    # forwards pydantic's text): by wording both "ran"; by the executions grep failed
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        msgs = list(USER)
        echo = chat(srv.url, msgs)
        ran = tool(srv.url, "read_file", {"path": "a.py"}).json()["content"]
        msgs += [echo, {"role": "tool", "tool_call_id": "call_a", "content": f"[{{'text': '{ran}'}}]"},
                 {"role": "tool", "tool_call_id": "call_b", "content": REFUSED}]
        chat(srv.url, msgs)
        steps = srv.session.observed()
    assert (steps[0].action, steps[0].run, steps[0].failed) == ("continue", (0,), (1,))
    assert steps[0].known == ((0, "executed"), (1, "executed"))
    cell = observed_cell(seq, "p", steps, True, "done")
    assert cell.steps[0].known == ((0, "executed"), (1, "executed"))
    assert (cell.tools_run, cell.tools_failed) == (("read_file",), ("grep",))


def test_an_execution_is_matched_by_name_and_arguments_when_the_result_is_rewritten() -> None:
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        chat(srv.url, USER)
        tool(srv.url, "grep", {"pattern": "def"})
        tool(srv.url, "read_file", {"path": "a.py"})
        srv.session.start(seq)  # the same program again, its results in its own words
        msgs = list(USER)
        echo = chat(srv.url, msgs)
        tool(srv.url, "read_file", {"path": "a.py"})
        tool(srv.url, "grep", {"pattern": "def"})
        msgs += [echo, {"role": "tool", "tool_call_id": "call_a", "content": "Error: no such file"},
                 {"role": "tool", "tool_call_id": "call_b", "content": "3 matches"}]
        chat(srv.url, msgs)
        steps = srv.session.observed()
    assert (steps[0].run, steps[0].failed, steps[0].known) == ((0, 1), (), ((0, "executed"), (1, "executed")))


def test_without_executions_the_markers_then_the_wording_decide() -> None:
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        round_trip(srv.url, ["contents of a.py", REFUSED])
        by_wording = srv.session.observed()[0]
    with serving(seq, error_marker="validation error") as srv:
        round_trip(srv.url, ["contents of a.py", REFUSED])
        by_error_marker = srv.session.observed()[0]
    with serving(seq, ok_marker="TOOL-OK") as srv:
        round_trip(srv.url, ["TOOL-OK contents", REFUSED])
        by_ok_marker = srv.session.observed()[0]
    # pydantic's "1 validation error for ..." is a refusal the wording fallback knows (bench.serve.results.REFUSALS)
    assert (by_wording.run, by_wording.failed, by_wording.known) == ((0,), (1,), ((0, "wording"), (1, "wording")))
    assert (by_error_marker.run, by_error_marker.failed) == ((0,), (1,))
    assert by_error_marker.known == ((0, "marker"), (1, "marker"))
    assert (by_ok_marker.run, by_ok_marker.failed, by_ok_marker.known) == (
        (0,), (1,), ((0, "marker"), (1, "marker")))


def test_the_report_lists_each_run_executions() -> None:
    seq = make_sequence([TWO_CALLS, ANSWER])
    with serving(seq) as srv:
        chat(srv.url, USER)
        tool(srv.url, "grep", {"pattern": "def"})
        report = srv.session.report()
    assert report[0]["executions"] == [{"n": 1, "name": "grep", "arguments": {"pattern": "def"}, "answered": 1,
                                        "content": "STOPBENCH-OK grep #1", "is_error": False}]


def test_a_program_that_listed_the_tools_and_ran_none_has_its_refused_calls_known_failed() -> None:
    """A run that asked GET /_stopbench/tools takes the bench's tools: a result no execution answers
    is a call that never reached a tool, known, even when nothing ran in the whole run (Mastra's
    'Tool "" not found' on blank-named calls). Without the listing it is still read by wording."""
    blank = {"finish": "tool_calls", "content": None,
             "tool_calls": [{"id": "call_a", "name": "", "arguments": "{}"}]}
    seq = make_sequence([blank, ANSWER])
    steps = {}
    for listed in (True, False):
        with serving(seq) as srv:
            if listed:
                httpx.get(srv.url + "/_stopbench/tools", timeout=10)
            round_trip(srv.url, ['Tool "" not found'])
            steps[listed] = srv.session.observed()[0]
    assert (steps[True].failed, steps[True].known) == ((0,), ((0, "executed"),))
    assert steps[False].failed == () and steps[False].known == ((0, "wording"),)
