"""A background server ends as soon as it is asked, and still lets a response in flight finish.

A check or conformance run starts one server per (loop, sequence) and stops it when the loop is done,
so the time a stop takes is paid once per run: it must not be a fixed wait."""

from __future__ import annotations

import json
import socket
import threading
import time

import openai

from tests.serve.serving import CHAT_TOOLS, make_sequence, serving

TURNS = [{"finish": "stop", "content": "done"}]


def test_a_server_with_an_idle_keep_alive_connection_stops_within_a_tenth_of_a_second() -> None:
    # uvicorn on its own polls its exit flag every 0.1 s and sleeps 0.1 s before it closes: no stop
    # under a tenth of a second, ever; the quickest of three stops shows the waits are gone
    took = []
    for _ in range(3):
        with serving(make_sequence(TURNS)) as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                           tools=CHAT_TOOLS)  # the client keeps its connection open
            started = time.perf_counter()
            srv.stop()
            took.append(time.perf_counter() - started)
            assert not srv.thread.is_alive()
            client.close()
    assert min(took) < 0.1, took


def test_a_stop_during_a_request_lets_its_response_finish() -> None:
    # the request's body is half sent when the stop comes: the server waits for the rest, answers, then ends
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS}).encode()
    with serving(make_sequence(TURNS)) as srv, socket.create_connection(("127.0.0.1", srv.port)) as conn:
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n" % len(body) + body[:10])
        time.sleep(0.1)  # the request is in, its body unfinished
        stopping = threading.Thread(target=srv.stop)
        stopping.start()
        time.sleep(0.2)
        assert stopping.is_alive()  # waiting for the request in flight
        conn.sendall(body[10:])
        answer = conn.makefile("rb").read()  # to the end: the server closes the connection after answering
        stopping.join(5)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert b'"content":"done"' in answer.replace(b" ", b"")
    assert not stopping.is_alive() and not srv.thread.is_alive()
