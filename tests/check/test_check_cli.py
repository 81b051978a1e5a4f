"""``stopbench check -- COMMAND``: a program run once per sequence, its steps observed from its
requests, its cell judged; exit 0 clean, 1 a requirement broken or no verdict, 2 unusable input."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import bench.check.mcp
from bench.catalogue.document import dump_sequence
from bench.check import PROMPT, run_program
from bench.check.program import DUMMY_KEY
from bench.check.report import load_live
from bench.check.runner import run_all
from bench.cli import cli
from bench.report.labels import label
from tests.check.conftest import ANSWER, CALL, fake, small_sequence
from tests.helpers import ROOT, ctrl_c_as_in_a_terminal


def check(*args: str, cwd: Path | None = None) -> Result:
    return CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)


def test_a_loop_that_meets_every_requirement_exits_0_with_a_table_and_the_wall_time(catalogue: Path,
                                                                                  tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "--reports", str(tmp_path / "r"), "-s", "answer-once",
              "--name", "mine", "--", *fake("answer"))
    assert r.exit_code == 0, r.output
    assert "| answer-once | stop:answered@1 ok [] |" in r.stdout
    assert "mine@live: 1 of 1 sequence(s) meet their requirements" in r.stdout
    assert "wall time" in r.output


def test_success_on_a_truncated_turn_breaks_ok_false_and_exits_1(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "truncated", "--", *fake("answer"))
    assert r.exit_code == 1
    assert "| truncated | stop:answered@1 ok [] ⚠ reported success on a cut-off reply |" in r.stdout
    assert ("fake_loop@live truncated: reported success on a cut-off reply (breaks ok: false at step 1): the loop "
            "reported success (answered)") in r.stdout


def test_without_a_result_file_the_exit_status_is_the_verdict(catalogue: Path) -> None:
    ok = check("--sequences", str(catalogue), "--no-report", "-s", "truncated", "--", *fake("exit", "0"))
    failed = check("--sequences", str(catalogue), "--no-report", "-s", "truncated", "--", *fake("exit", "4"))
    assert ok.exit_code == 1 and "stop:exit 0@1 ok" in ok.stdout
    assert failed.exit_code == 0 and "stop:exit 4@1 not-ok" in failed.stdout


def test_a_loop_that_never_stops_is_killed_past_the_safety_cap_and_reported_capped(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-repeat", "--safety-cap", "5",
              "--", *fake("forever"))
    assert r.exit_code == 1
    assert "capped@5 [] resends=5" in r.stdout
    assert "stops_within: 3" in r.stdout


def test_a_safety_cap_past_the_servers_journal_still_observes_every_step(catalogue: Path) -> None:
    """The server keeps its first DEFAULT_JOURNAL requests with their bodies; check's own sessions keep
    up to the safety cap, so a loop capped past the journal is still seen step by step."""
    from bench.serve.app import DEFAULT_JOURNAL

    cap = DEFAULT_JOURNAL + 50
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-repeat", "--safety-cap", str(cap),
              "--timeout", "300", "--", *fake("forever"))
    assert r.exit_code == 1, r.output
    assert f"capped@{cap} [] resends={cap}" in r.stdout


def test_a_program_that_hangs_is_killed_at_the_time_limit_and_its_cell_crashed(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-once", "--timeout", "2",
              "--", *fake("sleep"))
    assert r.exit_code == 1
    assert "| answer-once | crashed@0 after 1 request served [] (still running after 2 s; killed)" in r.stdout


def test_a_bad_result_file_is_named_and_crashes_the_cell(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-once", "--", *fake("bad"))
    assert r.exit_code == 1
    assert "STOPBENCH_RESULT: ok: expected true or false, got 'yes'" in r.stdout


def test_a_program_that_makes_no_request_is_crashed_with_its_stderr(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-once", "--", *fake("silent"))
    assert r.exit_code == 1
    assert "made no model request and exited 3: boom: cannot start" in r.stdout


def test_the_program_gets_the_servers_urls_dummy_keys_the_task_and_the_tool_schemas() -> None:
    seq = small_sequence("call-then-answer", [CALL, ANSWER], dialect="anthropic")
    run = run_program(seq, fake("answer"), name="env@live")
    env = json.loads(run.result.final if run.result else "{}")
    assert env["OPENAI_BASE_URL"].startswith("http://127.0.0.1:") and env["OPENAI_BASE_URL"].endswith("/v1")
    assert env["ANTHROPIC_BASE_URL"] + "/v1" == env["OPENAI_BASE_URL"]
    assert env["OPENAI_API_KEY"] == env["ANTHROPIC_API_KEY"] == DUMMY_KEY
    assert env["STOPBENCH_PROMPT"] == PROMPT and env["STOPBENCH_DIALECT"] == "anthropic"
    assert env["STOPBENCH_SEQUENCE"] == "call-then-answer" and env["STOPBENCH_MODEL"] == "claude-sonnet-4-5"
    # the call carries path and limit: both required, typed after their values
    assert json.loads(env["STOPBENCH_TOOLS"]) == [{
        "name": "read_file", "description": "the read_file tool (stopbench: run it as your loop would)",
        "parameters": {"type": "object", "properties": {"limit": {"type": "integer"}, "path": {"type": "string"}},
                       "required": ["limit", "path"]}}]


BOTO3_LOOP = """
import json, os
import boto3
reply = boto3.client("bedrock-runtime").converse(
    modelId=os.environ["STOPBENCH_MODEL"],
    messages=[{"role": "user", "content": [{"text": os.environ["STOPBENCH_PROMPT"]}]}])
text = "".join(block.get("text", "") for block in reply["output"]["message"]["content"])
json.dump({"ok": reply["stopReason"] == "end_turn", "final": text}, open(os.environ["STOPBENCH_RESULT"], "w"))
"""


def test_an_aws_sdk_with_no_settings_reaches_the_server_with_dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3's bedrock-runtime client built with no arguments reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the
    dummy keys and the region from the run's environment; an inherited profile or session token (a real
    credential, or a profile that does not exist here) is removed."""
    pytest.importorskip("boto3")
    monkeypatch.setenv("AWS_PROFILE", "a-profile-this-machine-does-not-have")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "a-real-token")
    seq = small_sequence("bedrock-answer", [{"content": "done", "finish": "stop"}], dialect="bedrock-converse")
    run = run_program(seq, [sys.executable, "-c", BOTO3_LOOP], name="boto3@live")
    assert run.result is not None, run.stderr
    assert (run.result.ok, run.result.final) == (True, "done")
    assert run.cell.outcome == "stopped" and not run.failed


def test_the_program_gets_what_real_clients_read_and_the_tool_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """google-genai and the Gemini CLI read GOOGLE_GEMINI_BASE_URL (the root: they append /v1beta/...),
    LlamaIndex reads OPENAI_API_BASE; an inherited GOOGLE_GENAI_USE_VERTEXAI would send google-genai to
    Vertex AI; STOPBENCH_MCP_COMMAND is the stdio MCP server's argv with an absolute interpreter."""
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    seq = small_sequence("call-then-answer", [CALL, ANSWER], dialect="gemini")
    run = run_program(seq, fake("answer"), name="env@live")
    env = json.loads(run.result.final if run.result else "{}")
    root = env["ANTHROPIC_BASE_URL"]
    assert env["GOOGLE_GEMINI_BASE_URL"] == root and env["OPENAI_API_BASE"] == root + "/v1"
    assert env["GEMINI_API_KEY"] == env["GOOGLE_API_KEY"] == DUMMY_KEY
    assert env["GOOGLE_GENAI_USE_VERTEXAI"] is None
    assert env["STOPBENCH_MODEL"] == "gemini-2.5-flash"
    assert env["STOPBENCH_TOOLS_URL"] == root + "/_stopbench/tools"
    argv = json.loads(env["STOPBENCH_MCP_COMMAND"])
    mcp_file = os.path.abspath(bench.check.mcp.__file__)
    assert os.path.isabs(argv[0]) and argv[1:] == ["-P", mcp_file, "--tools-url", root + "/_stopbench/tools"]
    assert env["STOPBENCH_MCP_URL"].startswith("http://127.0.0.1:") and env["STOPBENCH_MCP_URL"].endswith("/mcp")


@pytest.mark.parametrize("bad", [
    ["-s", "no-such-sequence", "--", sys.executable, "-c", "pass"],
    ["--tag", "no-such-tag", "--", sys.executable, "-c", "pass"],
    ["--", "/no/such/program"],
    [],
])
def test_unusable_input_exits_2_with_one_line(catalogue: Path, bad: list[str]) -> None:
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--no-report", *bad])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


def test_a_broken_sequence_file_exits_2_before_anything_runs(catalogue: Path) -> None:
    (catalogue / "broken.yaml").write_text("title: x\nkind: constructed\n", encoding="utf-8")
    r = check("--sequences", str(catalogue), "--no-report", "--", *fake("answer"))
    assert r.exit_code == 2
    assert "broken.yaml" in r.output and "|" not in r.stdout


def test_parallel_runs_give_the_same_table_and_the_same_report_bytes(catalogue: Path, tmp_path: Path) -> None:
    one = check("--sequences", str(catalogue), "--reports", str(tmp_path / "a"), "--", *fake("exit", "0"))
    two = check("--sequences", str(catalogue), "--reports", str(tmp_path / "b"), "-j", "3",
                "--", *fake("exit", "0"))
    assert one.exit_code == two.exit_code == 1
    assert one.stdout.split("\n\n")[0] == two.stdout.split("\n\n")[0]
    assert (tmp_path / "a/live/fake_loop.json").read_bytes() == (tmp_path / "b/live/fake_loop.json").read_bytes()


def test_two_loops_side_by_side_show_where_they_differ(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "truncated",
              "-c", f"yes={sys.executable} {fake('exit', '0')[1]} exit 0",
              "-c", f"no={sys.executable} {fake('exit', '1')[1]} exit 1")
    assert r.exit_code == 1
    assert "| sequence | yes@live | no@live | difference |" in r.stdout
    assert "⚠ only yes@live" in r.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
def test_the_node_example_loop_runs_under_check(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "call-then-answer", "-s", "truncated",
              "--", "node", str(ROOT / "examples" / "node_loop.mjs"))
    assert "| call-then-answer | stop:no_tool_calls@2 ok [read_file] |" in r.stdout
    assert "| truncated | stop:no_tool_calls@1 ok [] ⚠ reported success on a cut-off reply |" in r.stdout
    assert r.exit_code == 1


def test_json_prints_one_object_per_cell_and_the_live_record_reads_back_as_judged_cells(catalogue: Path,
                                                                                     tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "--reports", str(tmp_path), "--json", "--", *fake("exit", "0"))
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["sequence"] for o in objs] == ["answer-once", "answer-repeat", "call-then-answer", "truncated"]
    assert {o["golden"] for o in objs} == {"live"} and all(o["predicate"] == "fake_loop@live" for o in objs)
    cells = load_live(tmp_path)["fake_loop@live"]
    assert [c.sequence for c in cells] == [o["sequence"] for o in objs]
    truncated = cells[3]
    assert truncated.outcome == "stopped" and truncated.ok is True
    assert [v.requirement for v in truncated.violations] == ["ok: false"]
    assert label(truncated) == "stop:exit 0@1 ok []"


def test_ctrl_c_ends_every_running_program_and_exits_2_without_a_report(catalogue: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "bench", "check", "--sequences", str(catalogue), "--reports",
                             str(tmp_path / "r"), "-j", "2", "--", *fake("sleep")], cwd=ROOT,
                            env={**os.environ, "FAKE_PID_DIR": str(pids)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_as_in_a_terminal)
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "interrupted (Ctrl-C) after 0 of 4 run(s)" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_example_python_loop_on_the_openai_client_runs_under_check() -> None:
    r = check("--no-report", "--sequences", str(ROOT / "sequences"), "-s", "chat-tool-rounds",
              "-s", "chat-length-text-cut", "--", sys.executable, str(ROOT / "examples" / "openai_loop.py"))
    assert "| chat-tool-rounds | stop:no_tool_calls@4 ok [read_file,edit_file,run_tests] |" in r.stdout
    assert "| chat-length-text-cut | stop:no_tool_calls@2 ok [read_file] ⚠ reported success on a cut-off reply |" \
        in r.stdout
    assert r.exit_code == 1


def test_ctrl_c_taken_by_a_worker_thread_still_ends_the_runs_at_once(tmp_path: Path) -> None:
    """The kernel may hand SIGINT to any thread; Python runs its handler in the main thread only when
    that thread wakes. run_all's main thread wakes in short slices, so the runs end at once rather
    than when the first one finishes (here a 40 s sleep; red when the main thread blocks until then)."""
    pids = tmp_path / "pids"
    pids.mkdir()
    seqs = [small_sequence(f"s{i}", [ANSWER]) for i in range(2)]

    def press_ctrl_c_on_a_worker() -> None:
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = next(t for t in threading.enumerate() if t.name.startswith("stopbench-check"))
        assert worker.ident is not None
        signal.pthread_kill(worker.ident, signal.SIGINT)

    # Python's own Ctrl-C handler, as in a terminal (a suite run as a background job has SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press_ctrl_c_on_a_worker)
    try:
        presser.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_all(seqs, fake("sleep"), name="fake", jobs=2, timeout=40,
                    env={**os.environ, "FAKE_PID_DIR": str(pids)})
        presser.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 30, "the runs went on to their time limit"
    for pid in (int(p.name) for p in pids.iterdir()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_sequence_that_scripts_its_tool_results_is_not_run_and_said_so(catalogue: Path, tmp_path: Path) -> None:
    """A live loop's tools are its own: a sequence whose calls say what their tools return (`result:`)
    judges results no live run gets, so check leaves it out, naming it, as the pytest plugin skips it."""
    call = {"id": "call_1", "name": "check_build", "arguments": "{}", "result": "42% built"}
    scripted = small_sequence("polling", [{"finish": "tool_calls", "content": None, "tool_calls": [call]}, ANSWER],
                              require={"ok": True})
    dump_sequence(scripted, catalogue / "polling.yaml")
    r = check("--sequences", str(catalogue), "--no-report", "-s", "polling", "-s", "answer-once",
              "--", *fake("answer"))
    assert "not run: 1 sequence(s) script their tool results (result:)" in r.stderr and "polling" in r.stderr
    assert "answer-once" in r.stdout and "| polling |" not in r.stdout
    only = check("--sequences", str(catalogue), "--no-report", "-s", "polling", "--", *fake("answer"))
    assert only.exit_code == 2 and "every chosen sequence scripts its tool results" in only.stderr


def test_a_loop_still_asking_past_what_its_sequence_allows_at_the_time_limit_breaks_stops_within(
        catalogue: Path) -> None:
    """A loop with no cap killed at the time limit, far past stops_within, is a verdict (running, the
    requirement broken), not `crashed`: it did not stop in time, whatever it would have done next."""
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-repeat", "--timeout", "3",
              "--safety-cap", "100000", "--", *fake("forever"))
    assert r.exit_code == 1
    assert "crashed" not in r.stdout.split("requirements broken:")[0].split("\n", 2)[-1]
    assert "| answer-repeat | running@" in r.stdout
    assert "stops_within: 3" in r.stdout
    assert "the loop never stopped (running: still running after " in r.stdout
    assert "requests, killed at the 3 s time limit)" in r.stdout


def test_a_program_that_hangs_within_what_its_sequence_allows_is_still_crashed(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "-s", "answer-repeat", "--timeout", "2",
              "--", *fake("sleep"))
    assert r.exit_code == 1
    assert "| answer-repeat | crashed@0" in r.stdout and "still running after 2 s; killed" in r.stdout


def _known(record_dir: Path) -> list[list[object]]:
    """How each answered call of the one cell in the record was known, step by step."""
    cell = json.loads((record_dir / "live" / "fake_loop.json").read_text(encoding="utf-8"))["cells"][0]
    return [d.get("known", []) for d in cell["decisions"]]


def test_a_loop_that_refuses_a_call_in_its_own_words_is_read_by_error_marker(catalogue: Path,
                                                                              tmp_path: Path) -> None:
    """Without a marker the result's wording is all there is ("REFUSED: ..." does not start with
    "error": read as run); --error-marker names the loop's own words for a call it did not run."""
    args = ("--sequences", str(catalogue), "-s", "call-then-answer", "--json")
    guessed = check(*args, "--reports", str(tmp_path / "a"), "--", *fake("tools", "REFUSED: not run"))
    marked = check(*args, "--reports", str(tmp_path / "b"), "--error-marker", "REFUSED", "--",
                   *fake("tools", "REFUSED: not run"))
    assert json.loads(guessed.stdout.splitlines()[0])["tools_run"] == ["read_file"]
    cell = json.loads(marked.stdout.splitlines()[0])
    assert cell["tools_run"] == [] and cell["tools_failed"] == ["read_file"]
    assert _known(tmp_path / "a")[0] == [[0, "wording"]]
    assert _known(tmp_path / "b")[0] == [[0, "marker"]]


def test_ok_marker_reads_a_result_without_it_as_failed(catalogue: Path, tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "-s", "call-then-answer", "--json", "--reports", str(tmp_path),
              "--ok-marker", "DONE", "--", *fake("tools", "file contents"))
    cell = json.loads(r.stdout.splitlines()[0])
    assert cell["tools_failed"] == ["read_file"]


def test_calls_run_on_the_tool_endpoint_are_known_as_executed_in_the_record(catalogue: Path,
                                                                            tmp_path: Path) -> None:
    r = check("--sequences", str(catalogue), "-s", "call-then-answer", "--json", "--reports", str(tmp_path),
              "--", *fake("endpoint"))
    cell = json.loads(r.stdout.splitlines()[0])
    assert cell["tools_run"] == ["read_file"] and r.exit_code == 0
    assert _known(tmp_path)[0] == [[0, "executed"]]


def test_a_mistyped_request_after_a_valid_one_costs_no_report(catalogue: Path, tmp_path: Path) -> None:
    """{"messages": 5} after a valid request: the server refuses it (400); check still prints its
    table, its summary and writes its record, with no traceback."""
    r = CliRunner().invoke(cli, ["check", "--sequences", str(catalogue), "--reports", str(tmp_path), "-s",
                                 "call-then-answer", "-s", "answer-once", "--", *fake("mistype")])
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code in (0, 1), r.output
    assert "| call-then-answer |" in r.stdout and "| answer-once |" in r.stdout
    assert "fake_loop@live: " in r.stdout
    assert (tmp_path / "live" / "fake_loop.json").is_file()


def test_google_genai_configured_from_the_environment_alone_reaches_the_server(tmp_path: Path) -> None:
    """google-genai reads GOOGLE_GEMINI_BASE_URL and GOOGLE_API_KEY; the server takes the default
    Gemini model name (red before: it called Google's host with no usable key)."""
    pytest.importorskip("google.genai")
    program = Path(__file__).parent / "programs" / "genai_answer.py"
    seq = small_sequence("gemini-answer", [{"finish": "stop", "finish_raw": "STOP", "content": "Done."}],
                       dialect="gemini")
    run = run_program(seq, [sys.executable, str(program)], name="genai@live", timeout=30)
    assert run.cell.outcome == "stopped", (run.cell.error, run.stderr)
    assert run.result is not None and run.result.final == "Done."


def test_with_bench_tools_a_sequence_that_scripts_its_tool_results_is_run(catalogue: Path) -> None:
    """A program on the bench's tools gets the scripted result from the tool endpoint, so the
    sequence's requirements hold for it: --bench-tools runs such sequences."""
    call = {"id": "call_1", "name": "check_build", "arguments": "{}", "result": "42% built"}
    scripted = small_sequence("polling", [{"finish": "tool_calls", "content": None, "tool_calls": [call]}, ANSWER],
                              require={"ok": True})
    dump_sequence(scripted, catalogue / "polling.yaml")
    r = check("--sequences", str(catalogue), "--no-report", "--json", "-s", "polling", "--bench-tools",
              "--", *fake("endpoint"))
    assert r.exit_code == 0, r.output
    cell = json.loads(r.stdout.splitlines()[0])
    assert cell["sequence"] == "polling" and cell["tools_run"] == ["check_build"]
    assert cell["decisions"][0]["known"] == [[0, "executed"]]


def test_an_array_parameter_has_items_typed_after_its_first_values_elements() -> None:
    """The OpenAI API refuses a function whose array parameter has no `items`, and Mastra cannot
    convert such a schema: every array property says what its elements are."""
    from bench.serve.tools import tool_schemas

    call = {"id": "c", "name": "shell", "arguments": '{"command": ["ls", "-la"], "env": [], "opts": [{"a": 1}]}'}
    seq = small_sequence("arrays", [{"finish": "tool_calls", "content": None, "tool_calls": [call]}, ANSWER])
    props = tool_schemas(seq)[0]["parameters"]["properties"]
    assert props["command"] == {"type": "array", "items": {"type": "string"}}
    assert props["opts"] == {"type": "array", "items": {"type": "object"}}
    assert props["env"] == {"type": "array", "items": {}}


def test_on_the_virtual_clock_a_back_off_takes_no_real_time(catalogue: Path) -> None:
    """A loop that backs off 30 s before asking (a framework's retry) finishes within a 10 s limit on
    the virtual clock, and its own clock says the 30 s passed; on the real clock it is still waiting."""
    code = ("import os, sys, time, json, urllib.request; t = time.monotonic(); time.sleep(30); "
            "urllib.request.urlopen(urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', "
            "data=b'{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}', "
            "headers={'content-type': 'application/json'})).read(); "
            "json.dump({'ok': time.monotonic() - t >= 30, 'reason': 'slept'}, "
            "open(os.environ['STOPBENCH_RESULT'], 'w'))")
    args = ("--sequences", str(catalogue), "--no-report", "-s", "answer-once", "--timeout", "10")
    virtual = check(*args, "--virtual-clock", "--", sys.executable, "-c", code)
    assert "| answer-once | stop:slept@1 ok [] |" in virtual.stdout, virtual.output
    real = check(*args, "--timeout", "2", "--", sys.executable, "-c", code)
    assert "crashed" in real.stdout
