"""`stopbench record` and `stopbench diff` as a user runs them: a proxy process stopped by SIGTERM, a
loop whose requests match its recording (0), differ in a body (1) or stop early (1), and unusable input (2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.serve import BackgroundServer, Session
from tests.record.recording import SECRET, conversation_sequence, recording_proxy
from tests.serve.serving import free_port

LOOP = '''\
import os, sys
import openai
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="sk-proj-" + "k" * 40, max_retries=0)
tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}}}]
messages = [{"role": "user", "content": "read a.txt"}]
for _ in range(int(sys.argv[2])):
    msg = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools).choices[0].message
    messages.append(msg.model_dump(exclude_none=True))
    for call in msg.tool_calls or []:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": sys.argv[1]})
'''


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The loop's conversation recorded once for this file's diffs."""
    return _record_loop(tmp_path_factory.mktemp("recorded"))


def _record_loop(tmp_path: Path) -> Path:
    """The loop's conversation recorded through the proxy in front of the bench's server: rec-1.yaml."""
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    out = tmp_path / "rec"
    with BackgroundServer(Session(conversation_sequence("openai-chat"))) as upstream, \
            recording_proxy(upstream.url, out) as (proxy, _):
        subprocess.run([sys.executable, str(script), "hello", "2"], check=True, timeout=60,
                       env={**os.environ, "OPENAI_BASE_URL": f"{proxy.url}/v1"})
    return out / "rec-1.yaml"


def _diff(recording: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["diff", str(recording), "--", sys.executable,
                                    str(recording.parent.parent / "loop.py"), *args])


def test_diff_of_a_loop_that_sends_what_was_recorded_is_clean(recorded: Path) -> None:
    proc = _diff(recorded, "hello", "2")
    assert proc.exit_code == 0, proc.output
    assert "request(s) match the recording's" in proc.output


def test_diff_shows_the_first_request_whose_body_differs_with_both_sides(recorded: Path) -> None:
    proc = _diff(recorded, "HELLO", "2")
    assert proc.exit_code == 1, proc.output
    assert "first differ from the recording's at request 2 (the bodies differ" in proc.output
    assert '--- recorded request 2' in proc.output and "+++ the loop's request 2" in proc.output
    assert '-      "content": "hello",' in proc.output and '+      "content": "HELLO",' in proc.output


def test_diff_of_a_loop_that_stops_early_names_the_request_it_never_sent(recorded: Path) -> None:
    proc = _diff(recorded, "hello", "1")
    assert proc.exit_code == 1, proc.output
    assert "at request 2 (the loop sent 1 request(s), the recording has 2" in proc.output
    assert "+(no such request)" in proc.output


def test_diff_of_a_sequence_without_its_cassette_is_one_line_and_exit_2(tmp_path: Path) -> None:
    recording = tmp_path / "rec-1.yaml"
    recording.write_text((Path(__file__).parents[2] / "sequences/constructed/chat-length-text-cut.yaml").read_text())
    result = CliRunner().invoke(cli, ["diff", str(recording), "--", "true"])
    assert result.exit_code == 2 and "has no cassette beside it" in result.output


def test_record_with_a_pattern_that_is_no_regular_expression_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--redact", "(",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "is not a regular expression" in result.output


def test_record_as_a_process_records_until_sigterm_and_exits_0(tmp_path: Path) -> None:
    port = free_port()
    body = {"model": "m", "messages": [{"role": "user", "content": f"my key is {SECRET}"}]}
    with BackgroundServer(Session(conversation_sequence("openai-chat"))) as upstream:
        proc = subprocess.Popen([sys.executable, "-m", "bench", "record", "--upstream", upstream.url, "--port",
                                 str(port), "--out", str(tmp_path), "--name", "cli"], stderr=subprocess.PIPE,
                                text=True)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    got = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=10)
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.1)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
    assert got.status_code == 200 and got.json()["choices"][0]["message"]["content"] == "reading it"
    assert proc.returncode == 0, err
    assert "recorded 1 conversation(s)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli-1.cassette", "cli-1.yaml"]
    assert SECRET not in (tmp_path / "cli-1.cassette").read_text()


def test_record_stopped_right_after_the_last_answer_of_a_large_conversation_keeps_every_exchange(
        tmp_path: Path) -> None:
    # three requests of 4, 5.9 and 7.8 MB: each write of the conversation's files takes seconds, and the
    # proxy is stopped as soon as the last answer arrived
    port = free_port()
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
                                                                                 "properties": {}}}}]
    messages: list[dict[str, object]] = [{"role": "user", "content": "q" * 4_000_000}]
    two_calls = conversation_sequence("openai-chat")
    two_calls = replace(two_calls, turns=(two_calls.turns[0], *two_calls.turns))
    with BackgroundServer(Session(two_calls)) as upstream:
        proc = subprocess.Popen([sys.executable, "-m", "bench", "record", "--upstream", upstream.url, "--port",
                                 str(port), "--out", str(tmp_path), "--name", "big"], stderr=subprocess.PIPE,
                                text=True)
        try:
            deadline = time.monotonic() + 20
            while len(messages) < 6:
                try:
                    got = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60,
                                     json={"model": "m", "messages": messages, "tools": tools})
                except httpx.ConnectError:
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.1)
                    continue
                reply = got.json()["choices"][0]["message"]
                messages.append(reply)
                messages += [{"role": "tool", "tool_call_id": c["id"], "content": "r" * 1_900_000}
                             for c in reply.get("tool_calls") or []]
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "(openai-chat, 3 request(s))" in (tmp_path / "big-1.yaml").read_text()


def test_record_refuses_what_it_cannot_use_in_one_line_with_exit_2(tmp_path: Path) -> None:
    import socket

    afile = tmp_path / "afile"
    afile.write_text("")
    (tmp_path / "taken-1.yaml").write_text("")
    base = ["record", "--upstream", "http://127.0.0.1:9", "--port", "0"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        cases = {
            "expected an http:// or https:// URL": ["record", "--upstream", "api.openai.com"],
            "is a file": [*base, "--out", str(afile)],
            "already holds a recording named taken": [*base, "--out", str(tmp_path), "--name", "taken"],
            "use letters, digits": [*base, "--out", str(tmp_path), "--name", "a b"],
            "--faults: cut-after-4: no such recipe file, nor a preset": [*base, "--out", str(tmp_path / "new"),
                                                                         "--faults", "cut-after-4"],
            "cannot listen on 127.0.0.1:": ["record", "--upstream", "http://127.0.0.1:9", "--port", port,
                                           "--out", str(tmp_path / "new")],
        }
        for words, args in cases.items():
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 2 and words in result.output, (args, result.output)
    assert not (tmp_path / "new").exists()


def test_record_takes_a_name_exactly_when_check_takes_it_letters_of_any_script_included(tmp_path: Path) -> None:
    """`record --name` follows `check --name`'s rule (bench.check.limits.loop_name_problem): a name it
    takes gets past the name to the next check (here a busy port); one it refuses is refused in its words."""
    import socket

    from bench.check.limits import loop_name_problem

    names = ["λ-rec", "запись.2", "rec_v2", "-rec", "a b", "a/b", "..", "r" * 51, "rec*", "é" * 50]
    assert {"λ-rec", "запись.2", "é" * 50} <= {n for n in names if loop_name_problem(n) is None}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        for name in names:
            result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", port,
                                              "--out", str(tmp_path), "--name", name])
            problem = loop_name_problem(name)
            words = f"cannot listen on 127.0.0.1:{port}" if problem is None else f"--name {name!r}: {problem}"
            assert result.exit_code == 2 and words in result.output, (name, result.output)


BIG_LOOP = '''\
import os, sys
import openai
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="sk-none", max_retries=0)
tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}}}]
messages = [{"role": "user", "content": sys.argv[1] * 4_000_000}]
while True:
    msg = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools).choices[0].message
    messages.append(msg.model_dump(exclude_none=True))
    if not msg.tool_calls:
        break
    for call in msg.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "r" * 1_900_000})
'''


def test_diff_compares_every_request_of_a_run_past_the_servers_body_budget(tmp_path: Path) -> None:
    """Three requests of 4, 5.9 and 7.8 MB pass the 16 MiB a served run keeps as bodies: diff still has
    the first ones to compare with the recording."""
    script = tmp_path / "loop.py"
    script.write_text(BIG_LOOP)
    out = tmp_path / "rec"
    two_calls = conversation_sequence("openai-chat")
    two_calls = replace(two_calls, turns=(two_calls.turns[0], *two_calls.turns))
    with BackgroundServer(Session(two_calls)) as upstream, recording_proxy(upstream.url, out) as (proxy, _):
        subprocess.run([sys.executable, str(script), "q"], timeout=120, check=True, capture_output=True,
                       env={**os.environ, "OPENAI_BASE_URL": f"{proxy.url}/v1"})
    proc = CliRunner().invoke(cli, ["diff", str(out / "rec-1.yaml"), "--", sys.executable, str(script), "q"])
    assert proc.exit_code == 0, proc.output[:2000]
    assert "3 request(s) match the recording's" in proc.output
