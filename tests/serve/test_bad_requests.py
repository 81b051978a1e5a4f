"""Bad requests are the client's problem: the provider's 400, a note in the run, and every report
still written (the observation, /_stopbench/records, `serve --observed` on SIGTERM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.serving import CHAT_TOOLS, make_sequence, serve_command, serving

CALL: dict[str, Any] = {"finish": "tool_calls", "content": None, "tool_calls": [
    {"id": "call_1", "name": "read_file", "arguments": '{"path": "a"}'}]}
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}

PATHS = {"openai-chat": "/v1/chat/completions", "anthropic": "/v1/messages", "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/m:generateContent"}
VALID: dict[str, dict[str, Any]] = {
    "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "go"}]},
    "anthropic": {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "go"}]},
    "openai-responses": {"model": "m", "input": "go"},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "go"}]}]},
}
MISTYPED: dict[str, dict[str, Any]] = {
    "openai-chat": {"model": "m", "messages": 5},
    "anthropic": {"model": "m", "max_tokens": 9, "messages": 5},
    "openai-responses": {"model": "m", "input": 5},
    "gemini": {"contents": 5},
}
# a part of the conversation of the wrong type: not the field itself but what is inside it
MISTYPED_INSIDE: dict[str, dict[str, Any]] = {
    "openai-chat": {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": 5}]},
}
DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def is_provider_400(wire: str, got: httpx.Response) -> bool:
    body = got.json()
    if wire == "anthropic":
        return got.status_code == 400 and body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    if wire == "gemini":
        return got.status_code == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
    return got.status_code == 400 and body["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("wire", list(PATHS))
def test_a_mistyped_request_after_a_valid_one_is_the_providers_400_and_a_note(wire: str) -> None:
    seq = make_sequence([ANSWER, ANSWER])
    with serving(seq) as srv:
        ok = httpx.post(srv.url + PATHS[wire], json=VALID[wire], timeout=10)
        bad = httpx.post(srv.url + PATHS[wire], json=MISTYPED[wire], timeout=10)
        steps = srv.session.observed()
        report = srv.session.report()
        records = httpx.get(srv.url + "/_stopbench/records", timeout=10)
    assert ok.status_code == 200
    assert is_provider_400(wire, bad), bad.text
    assert [s.action for s in steps] == ["stop"]
    assert "refused" in steps[0].note
    assert len(report[0]["notes"]) == 1 and "expected" in report[0]["notes"][0]
    assert records.status_code == 200 and len(records.json()) == 2


@pytest.mark.parametrize("wire", list(MISTYPED_INSIDE))
def test_a_part_of_the_conversation_of_the_wrong_type_is_refused_not_a_crash(wire: str) -> None:
    seq = make_sequence([CALL, ANSWER])
    with serving(seq) as srv:
        httpx.post(srv.url + PATHS[wire], json=VALID[wire], timeout=10)
        bad = httpx.post(srv.url + PATHS[wire], json=MISTYPED_INSIDE[wire], timeout=10)
        report = srv.session.report()
    assert is_provider_400(wire, bad), bad.text
    assert report[0]["steps"][0]["action"] == "stop"


@pytest.mark.parametrize("wire", list(PATHS))
def test_nan_in_a_body_is_refused_and_the_records_stay_json(wire: str) -> None:
    seq = make_sequence([ANSWER])
    with serving(seq) as srv:
        raw = json.dumps(VALID[wire])[:-1] + ', "temperature": NaN}'
        bad = httpx.post(srv.url + PATHS[wire], content=raw.encode(), timeout=10,
                         headers={"content-type": "application/json"})
        records = httpx.get(srv.url + "/_stopbench/records", timeout=10)
        tool = httpx.post(srv.url + "/_stopbench/tools/read_file", content=b'{"path": NaN}', timeout=10)
    assert is_provider_400(wire, bad), bad.text
    assert records.status_code == 200
    json.loads(records.text, parse_constant=lambda c: pytest.fail(f"{c} in the records"))
    assert tool.status_code == 400


@pytest.mark.parametrize("wire", list(PATHS))
def test_a_body_nested_100000_deep_is_the_providers_400(wire: str) -> None:
    seq = make_sequence([ANSWER])
    with serving(seq) as srv:
        got = httpx.post(srv.url + PATHS[wire], content=DEEP, timeout=30, headers={"content-type": "application/json"})
        also = httpx.post(srv.url + PATHS[wire], timeout=30, headers={"content-type": "application/json"},
                          content=json.dumps({**VALID[wire], "metadata": json.loads("[" * 90 + "]" * 90)}).encode())
        state = httpx.get(srv.url + "/_stopbench/state", timeout=10).json()
    assert is_provider_400(wire, got), got.text[:300]
    assert is_provider_400(wire, also), also.text[:300]
    assert state["answered"] == 0


def test_serve_writes_its_observed_file_on_sigterm_after_a_bad_request(tmp_path: Path) -> None:
    with serve_command(tmp_path) as served:
        url = served.url
        httpx.post(url + "/v1/chat/completions", json={**VALID["openai-chat"], "tools": CHAT_TOOLS})
        httpx.post(url + "/v1/chat/completions", json=MISTYPED["openai-chat"])
        httpx.post(url + "/v1/chat/completions", content=b'{"messages": [], "x": NaN}')
    assert served.process.returncode == 0, served.stderr.decode()
    report = json.loads(served.observed.read_text(encoding="utf-8"))
    assert [s["action"] for s in report[0]["steps"]] == ["stop"]
    assert len(report[0]["notes"]) == 2
