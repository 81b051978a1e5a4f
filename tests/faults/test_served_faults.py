"""The replay server with a fault recipe, driven by plain HTTP and the official clients: the faults
arrive as a provider sends them, the loop's retry gets the turn the fault kept from it, and what
was injected is in the records."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.faults import parse_recipe_text
from tests.serve.serving import CHAT_TOOLS, CLAUDE_TOOLS, GEMINI_TOOLS, RESPONSES_TOOLS, make_sequence, serving

USER = [{"role": "user", "content": "hi"}]
LONG = "The failing test was caused by an off-by-one error in the loop bound; it is fixed now."
TURNS: list[dict[str, Any]] = [{"finish": "stop", "content": LONG}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "messages": USER, "tools": CHAT_TOOLS}),
    "anthropic": ("/v1/messages", {"model": "m", "max_tokens": 9, "messages": USER, "tools": CLAUDE_TOOLS}),
    "openai-responses": ("/v1/responses", {"model": "m", "input": USER, "tools": RESPONSES_TOOLS}),
    "gemini": ("/v1beta/models/m:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                                                   "tools": GEMINI_TOOLS}),
}


@pytest.mark.parametrize(("wire", "status", "says"), [
    ("openai-chat", 429, "rate_limit_exceeded"), ("openai-responses", 429, "rate_limit_exceeded"),
    ("anthropic", 429, "rate_limit_error"), ("anthropic", 529, "overloaded_error"),
    ("gemini", 429, "RESOURCE_EXHAUSTED"),
])
def test_a_status_fault_reaches_the_client_as_the_providers_error_with_retry_after(wire: str, status: int,
                                                                                  says: str) -> None:
    path, body = REQUESTS[wire]
    recipe = parse_recipe_text(f"faults: [{{fault: status, status: {status}, retry_after: 3, requests: [1]}}]")
    with serving(make_sequence(TURNS, wire), faults=recipe) as srv:
        first = httpx.post(srv.url + path, json=body, timeout=10)
        second = httpx.post(srv.url + path, json=body, timeout=10)
        records = srv.session.records()
    assert first.status_code == status and first.headers["retry-after"] == "3"
    assert says in first.text
    assert second.status_code == 200 and "off-by-one" in second.text  # the retry gets the turn the 429 kept back
    assert [r.turn for r in records] == [0, 0]
    assert records[0].injected is not None and records[0].injected.retry_after == 3
    assert records[1].injected is None


def test_the_openai_client_waits_out_retry_after_before_its_retry() -> None:
    recipe = parse_recipe_text("faults: [{fault: status, status: 429, retry_after: 1, requests: [1]}]")
    with serving(make_sequence(TURNS), faults=recipe) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=2)
        started = time.monotonic()
        reply = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        took = time.monotonic() - started
        records = srv.session.records()
    assert reply.choices[0].message.content == LONG
    assert records[1].at - records[0].at >= 1.0 and took >= 1.0


def test_the_anthropic_client_waits_out_an_overloaded_529_with_retry_after() -> None:
    recipe = parse_recipe_text("faults: [{fault: status, status: 529, retry_after: 1, requests: [1]}]")
    with serving(make_sequence(TURNS, "anthropic"), faults=recipe) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=2)
        reply = client.messages.create(model="m", max_tokens=9, messages=USER)  # type: ignore[arg-type]
        records = srv.session.records()
    assert reply.content[0].type == "text" and reply.content[0].text == LONG
    assert records[1].at - records[0].at >= 1.0


def test_a_disconnect_reaches_the_openai_client_as_a_connection_error() -> None:
    recipe = parse_recipe_text("faults: [{fault: disconnect, after_frames: 2, requests: [1]}]")
    with serving(make_sequence(TURNS), faults=recipe) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises((openai.APIConnectionError, httpx.HTTPError)):
            for _ in client.chat.completions.create(model="m", messages=USER, stream=True):  # type: ignore[arg-type]
                pass


def test_pacing_delays_the_first_frame_by_the_time_to_first_token() -> None:
    recipe = parse_recipe_text("pace: {ttft_ms: 400, tokens_per_second: 600}")
    path, body = REQUESTS["openai-chat"]
    with serving(make_sequence(TURNS), faults=recipe) as srv:
        started = time.monotonic()
        with httpx.stream("POST", srv.url + path, json={**body, "stream": True}, timeout=10) as resp:
            arrivals = [time.monotonic() - started for _ in resp.iter_raw()]
    assert arrivals[0] >= 0.4
    assert len(arrivals) > 1  # one write per frame: the client reads them apart


def test_serve_refuses_a_bad_recipe_in_one_line_with_exit_2(tmp_path: Any) -> None:
    bad = tmp_path / "r.yaml"
    bad.write_text("faults: [{fault: status}]\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["serve", "any", "--faults", str(bad)])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [f"--faults: {bad}: faults[0].status.status: required, but missing"]


def test_check_refuses_an_unknown_preset_in_one_line_with_exit_2() -> None:
    r = CliRunner().invoke(cli, ["check", "--faults", "cut-after-four", "--", "true"])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith("--faults: cut-after-four: no such recipe file, nor a preset (cut-after-3,")
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_sessions_report_says_what_was_injected_by_step() -> None:
    recipe = parse_recipe_text("faults: [{fault: status, status: 429, retry_after: 2, requests: [1]}]")
    path, body = REQUESTS["openai-chat"]
    with serving(make_sequence(TURNS), faults=recipe) as srv:
        httpx.post(srv.url + path, json=body, timeout=10)
        httpx.post(srv.url + path, json=body, timeout=10)
        (run,) = srv.session.report()
        records = httpx.get(srv.url + "/_stopbench/records", timeout=10).json()
    (step,) = run["injected"]
    assert (step["step"], step["status"], step["retry_after"], step["kind"]) == (1, 429, 2, "rate_limit")
    assert step["waited"] is not None
    assert [r["injected"] is not None for r in records] == [True, False]
