"""What the server does besides answering turns: side requests, the script's end, limits, switching."""

from __future__ import annotations

import socket
import time

import httpx
import openai
import pytest

from tests.serve.serving import make_sequence, serving

USER = [{"role": "user", "content": "hi"}]
TWO = [{"finish": "stop", "content": "first"}, {"finish": "stop", "content": "second"}]


def test_side_requests_are_answered_without_consuming_turns() -> None:
    seq = make_sequence(TWO)
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        ids = [m.id for m in client.models.list()]
        assert client.models.retrieve("fake-model").id == "fake-model"
        probes = [httpx.get(srv.url + "/api/v1/models").status_code,
                  httpx.post(srv.url + "/api/show", json={"name": "fake-model"}).status_code,
                  httpx.post(srv.url + "/v1/messages/count_tokens", json={"messages": USER}).status_code]
        first = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        kinds = [r.kind for r in srv.session.records()]
    assert ids == ["stopbench"]
    assert probes == [404, 404, 200]
    assert first.choices[0].message.content == "first"
    assert kinds == ["side"] * 5 + ["model"]


def test_past_the_end_of_a_then_end_script_the_answer_says_the_script_ended() -> None:
    seq = make_sequence(TWO[:1], then="end")
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        running = srv.session.ended_running()
    assert info.value.status_code == 410
    assert "script" in str(info.value) and "ended" in str(info.value)
    assert running


def test_then_repeat_answers_every_further_request_with_the_last_turn() -> None:
    seq = make_sequence(TWO, then="repeat")
    with serving(seq) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        texts = [client.chat.completions.create(model="m", messages=USER).choices[0].message.content  # type: ignore[arg-type]
                 for _ in range(4)]
    assert texts == ["first", "second", "second", "second"]


def test_a_body_over_the_limit_gets_413_and_consumes_no_turn() -> None:
    seq = make_sequence(TWO)
    with serving(seq, max_body=1000) as srv:
        big = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER,
                                                                   "pad": "x" * 5000})
        small = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert big.status_code == 413
    assert small.json()["choices"][0]["message"]["content"] == "first"


def test_a_client_that_never_sends_its_body_gets_408_instead_of_blocking_the_server() -> None:
    seq = make_sequence(TWO)
    with serving(seq, read_timeout=0.3) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"model\"")
            start = time.monotonic()
            reply = sock.recv(4096)
            waited = time.monotonic() - start
        after = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert reply.startswith(b"HTTP/1.1 408")
    assert waited < 3
    assert after.json()["choices"][0]["message"]["content"] == "first"


def test_the_server_binds_to_loopback_by_default() -> None:
    with serving(make_sequence(TWO)) as srv:
        sockets = [s for server in srv.server.servers for s in server.sockets]
        assert {s.getsockname()[0] for s in sockets} == {"127.0.0.1"}


def test_a_dialect_restricted_server_refuses_the_other_apis_without_consuming_turns() -> None:
    with serving(make_sequence(TWO), dialect="anthropic") as srv:
        refused = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
        served = httpx.post(srv.base_url + "/messages", json={"model": "m", "max_tokens": 5, "messages": USER})
    assert refused.status_code == 404
    assert served.json()["content"] == [{"type": "text", "text": "first"}]


def test_switching_sequences_starts_a_new_run_from_turn_zero() -> None:
    first = make_sequence(TWO, sid="one")
    other = make_sequence([{"finish": "stop", "content": "other"}], sid="two")
    with serving(first, catalogue={"one": first, "two": other}) as srv:
        a = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
        switched = httpx.post(srv.url + "/_stopbench/run", json={"sequence": "two"})
        b = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
        state = httpx.get(srv.url + "/_stopbench/state").json()
        missing = httpx.post(srv.url + "/_stopbench/run", json={"sequence": "nope"})
    assert a.json()["choices"][0]["message"]["content"] == "first"
    assert switched.json() == {"run": 2, "sequence": "two"}
    assert b.json()["choices"][0]["message"]["content"] == "other"
    assert (state["run"], state["sequence"], state["answered"]) == (2, "two", 1)
    assert missing.status_code == 404
