"""Request bodies are released: past a run's body budget each step whose next request has arrived is
observed at once and the bodies it read are dropped, so a run of large bodies holds a bounded amount of
memory; the steps observed so are the ones a run that keeps every body observes (``keep_bodies``)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from typing import Any

from bench.serve import Session
from bench.serve.app import create_app
from tests.serve.serving import CHAT_TOOLS, asgi_request, make_sequence, status_of

MiB = 1024 * 1024
CALL = {"id": "call_1", "name": "read_file", "arguments": "{}"}
LOOPING = [{"finish": "tool_calls", "content": None, "tool_calls": [CALL]}]


async def post(app: Any, body: bytes, path: str = "/v1/chat/completions") -> int:
    """One request straight into the ASGI app (no sockets): its status."""
    sent: list[Any] = []
    await asgi_request(app, path, body, sent)
    await asyncio.sleep(0)
    return status_of(sent)


def chat(*messages: dict[str, Any], model: str = "m", **more: Any) -> bytes:
    return json.dumps({"model": model, "tools": CHAT_TOOLS, "messages": list(messages), **more}).encode()


USER = {"role": "user", "content": "go"}
ECHO = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}


def result(text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "call_1", "content": text}


def test_a_run_of_thirty_7_mb_bodies_holds_a_bounded_amount_of_memory() -> None:
    # issue 24: 30 accepted 7 MB bodies grew the server by about 210 MB until the next run started
    session = Session(make_sequence(LOOPING, then="repeat"))
    app = create_app(session)
    document = {"role": "user", "content": "x" * (7 * MiB)}
    body = chat(document)
    loop = asyncio.new_event_loop()
    tracemalloc.start()
    try:
        for _ in range(30):
            assert loop.run_until_complete(post(app, body)) == 200
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        loop.close()
    assert held < 48 * MiB, f"{held / MiB:.0f} MiB held after 30 bodies of 7 MiB"
    steps = session.observed()
    assert len(steps) == 30 and all(s.action == "resend" for s in steps[:-1]), steps[:3]


def drive(session: Session, bodies: list[bytes | str]) -> None:
    """Each body posted in turn; a str runs that bench tool with no arguments instead."""
    app = create_app(session)
    loop = asyncio.new_event_loop()
    try:
        for body in bodies:
            if isinstance(body, str):
                session.execute(body, {})
            else:
                assert loop.run_until_complete(post(app, body)) == 200
    finally:
        loop.close()


RUN: list[bytes | str] = [
    chat(USER),
    chat(USER, ECHO, result("error: no such file")),  # continue, failed by wording
    chat(USER, ECHO, result("error: no such file")),  # resend
    chat(USER, ECHO, result("error: no such file"), {"role": "user", "content": "please stop"}, model="m2",
         max_tokens=50),  # remind
    chat(USER, ECHO, result("error: no such file"), {"role": "user", "content": "please stop"}, ECHO, result("ok")),
    "read_file",  # the program runs the bench's tools from here on: earlier results are judged so too
    chat(USER, ECHO, result("error: no such file"), {"role": "user", "content": "please stop"}, ECHO, result("ok"),
         ECHO, result("done")),
    chat({"role": "user", "content": "another conversation"}),  # unknown
    chat({"role": "user", "content": "another conversation"}),
]


def test_steps_observed_as_bodies_are_released_are_the_steps_of_a_run_that_keeps_every_body() -> None:
    sequence = make_sequence(LOOPING, then="repeat")
    kept, released = Session(sequence, keep_bodies=True), Session(sequence, body_budget=1)
    drive(kept, RUN)
    drive(released, RUN)
    assert [r.body for r in released.records()[:-1]] == [None] * 7  # the last request keeps its body
    assert all(r.body is not None for r in kept.records())
    assert [s.as_json() for s in released.observed()] == [s.as_json() for s in kept.observed()]
    assert {s.action for s in kept.observed()} >= {"continue", "resend", "remind", "unknown", "stop"}


def test_a_step_observed_before_the_program_ran_the_bench_tools_is_judged_as_if_it_had_once_it_has() -> None:
    sequence = make_sequence(LOOPING, then="repeat")
    before = Session(sequence, body_budget=1)
    drive(before, RUN[:5])
    assert before.observed()[0].known == ((0, "wording"),)
    drive(before, RUN[5:])
    kept = Session(sequence, keep_bodies=True)
    drive(kept, RUN)
    assert before.observed()[0].known == kept.observed()[0].known == ((0, "executed"),)


def test_an_ended_run_keeps_the_steps_observed_as_its_bodies_were_released() -> None:
    sequence = make_sequence(LOOPING, then="repeat")
    kept, released = Session(sequence, keep_bodies=True), Session(sequence, body_budget=1)
    for session in (kept, released):
        drive(session, RUN)
        session.start(sequence)
    assert [s.as_json() for s in released.observed(released.runs[0])] == \
        [s.as_json() for s in kept.observed(kept.runs[0])]
