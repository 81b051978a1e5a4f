"""The server's journal is bounded: a run keeps its first requests with their bodies (what the
observation reads), counts the rest and keeps only the few the next answer needs, and releases its
bodies when the next run starts, its observation kept; memory stays flat over a long run. With
``journal=None`` every body is kept (debugging)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from typing import Any

import httpx

from bench.serve import Session
from bench.serve.app import create_app
from bench.serve.session import _RECENT
from tests.serve.serving import CHAT_TOOLS, RESPONSES_TOOLS, asgi_request, make_sequence, serving, status_of

CALL = {"id": "call_1", "name": "read_file", "arguments": "{}"}
LOOPING = [{"finish": "tool_calls", "content": None, "tool_calls": [CALL]}]


def _rss() -> int:
    """This process's resident memory in bytes, now."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Driver:
    """Requests straight into the ASGI app, without sockets (what a long run costs the journal, not
    the network)."""

    def __init__(self, session: Session) -> None:
        self.app = create_app(session)
        self.body = json.dumps({"model": "m", "tools": CHAT_TOOLS,
                                "messages": [{"role": "user", "content": "go " * 50}]}).encode()

    async def one(self) -> int:
        sent: list[Any] = []
        await asgi_request(self.app, "/v1/chat/completions", self.body, sent)
        return status_of(sent)

    async def many(self, n: int) -> None:
        for _ in range(n):
            assert await self.one() == 200
            # back to the loop between requests, as a server is: else the timers the requests
            # cancelled pile up in the loop's heap for the whole batch (nothing ever waits here)
            await asyncio.sleep(0)


def test_memory_after_100000_requests_is_within_a_tenth_of_memory_after_1000() -> None:
    # about 25 s on two loaded cores (the ASGI app without sockets): marked slow in tests/conftest.py
    session = Session(make_sequence(LOOPING, then="repeat"))
    driver = Driver(session)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(driver.many(1_000))
        gc.collect()
        after_1000 = _rss()
        started = time.monotonic()
        loop.run_until_complete(driver.many(99_000))
        took = time.monotonic() - started
        gc.collect()
        after_100000 = _rss()
    finally:
        loop.close()
    assert session.run.total == 100_000 and session.run.answered == 100_000
    assert len(session.run.records) == 1_000 and len(session.records()) == 1_000 + _RECENT
    print(f"rss after 1,000: {after_1000 / 2**20:.1f} MiB, after 100,000: {after_100000 / 2**20:.1f} MiB; "
          f"99,000 requests in {took:.1f} s")
    assert after_100000 <= after_1000 * 1.10, (after_1000, after_100000)


def test_every_body_is_kept_when_the_journal_is_unbounded() -> None:
    session = Session(make_sequence(LOOPING, then="repeat"), journal=None)
    asyncio.run(Driver(session).many(1_500))
    assert len(session.run.records) == 1_500 and all(isinstance(r.body, dict) for r in session.run.records)
    assert len(session.observed()) == 1_500


def test_a_run_past_its_journal_is_answered_as_before_and_its_kept_steps_observed() -> None:
    turns = [{"finish": "tool_calls", "content": None, "tool_calls": [{**CALL, "id": f"call_{k}"}]} for k in range(5)]
    got: dict[int | None, list[Any]] = {}
    for journal in (None, 3):
        with serving(make_sequence(turns), journal=journal) as srv:
            msgs: list[Any] = [{"role": "user", "content": "go"}]
            statuses: list[int] = []
            for _ in range(7):
                r = httpx.post(srv.base_url + "/chat/completions", timeout=10,
                               json={"model": f"m{len(statuses) % 2}", "messages": msgs, "tools": CHAT_TOOLS})
                statuses.append(r.status_code)
                if r.status_code == 200:
                    echo = r.json()["choices"][0]["message"]
                    msgs += [echo, {"role": "tool", "tool_call_id": echo["tool_calls"][0]["id"], "content": "ok"}]
            state = httpx.get(srv.url + "/_stopbench/state", timeout=10).json()
            models = [m["id"] for m in httpx.get(srv.base_url + "/models", timeout=10).json()["data"]]
            got[journal] = [statuses, state["requests"], state["answered"], srv.session.ended_running(),
                            [o.as_json() for o in srv.session.observed()], models, len(srv.session.records())]
    full, kept = got[None], got[3]
    assert kept[:4] == full[:4] == [[200] * 5 + [410] * 2, 7, 7, True]
    assert kept[4] == full[4][:3]  # the third kept step is observed against the fourth request, as before
    assert kept[5] == full[5] == ["stopbench", "m0", "m1"]
    assert full[6] == kept[6] == 8  # the model list is a request too; with journal=3: three kept, five recent


def test_a_reply_past_the_journal_can_be_followed_by_reference() -> None:
    turns = [{"finish": "tool_calls", "content": None, "tool_calls": [{**CALL, "id": f"call_{k}"}]} for k in range(4)]
    turns.append({"finish": "stop", "content": "done"})
    with serving(make_sequence(turns, dialect="openai-responses"), journal=2) as srv:
        prev = None
        for k in range(5):
            inputs = [{"role": "user", "content": "go"}] if prev is None else [
                {"type": "function_call_output", "call_id": f"call_{k - 1}", "output": "ok"}]
            body = {"model": "m", "input": inputs, "tools": RESPONSES_TOOLS,
                    **({"previous_response_id": prev} if prev else {})}
            r = httpx.post(srv.base_url + "/responses", json=body, timeout=10)
            assert r.status_code == 200, r.text
            prev = r.json()["id"]
        assert srv.session.run.total == 5


def test_a_finished_run_keeps_its_observation_and_releases_its_bodies() -> None:
    first = make_sequence(LOOPING, then="repeat", sid="first")
    with serving(first) as srv:
        for _ in range(3):
            httpx.post(srv.base_url + "/chat/completions", timeout=10,
                       json={"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": CHAT_TOOLS})
        before = [o.as_json() for o in srv.session.observed()]
        ended = srv.session.run
        srv.session.start(make_sequence(LOOPING, sid="second"))
        assert all(r.body is None for r in ended.records)
        assert [o.as_json() for o in srv.session.observed(ended)] == before
        assert srv.session.report()[0]["steps"] == before and srv.session.report()[0]["requests"] == 3
