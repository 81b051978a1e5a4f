"""The streamed POST the plain-HTTP reference clients share: what each kind of answer becomes."""

from __future__ import annotations

import json

import httpx

from bench.wires.client import ReplyError
from bench.wires.httpstream import body_message, status_error, stream_post


def _client(handler: httpx.MockTransport) -> httpx.Client:
    return httpx.Client(base_url="http://model.test", transport=handler)


def _on_status(response: httpx.Response) -> ReplyError:
    return status_error(response, body_message(response, "error"))


def _lines(response: httpx.Response) -> ReplyError | None:
    for line in response.iter_lines():
        int(line)  # a line that is not a number does not parse
    return None


def test_an_error_status_is_the_wires_error_with_its_message_and_retry_after() -> None:
    answer = httpx.Response(429, json={"error": "slow down"}, headers={"Retry-After": "3"})
    err = stream_post(_client(httpx.MockTransport(lambda r: answer)), "/chat", {}, _lines, _on_status)
    assert err is not None
    assert (err.kind, err.status, err.message, err.retry_after) == ("rate_limit", 429, "slow down", 3.0)


def test_an_error_body_that_is_not_json_gives_its_text_as_the_message() -> None:
    answer = httpx.Response(500, text="upstream fell over")
    err = stream_post(_client(httpx.MockTransport(lambda r: answer)), "/chat", {}, _lines, _on_status)
    assert err is not None
    assert (err.kind, err.message, err.retry_after) == ("server_error", "upstream fell over", None)


def test_a_frame_that_does_not_parse_is_a_broken_stream_not_a_crash() -> None:
    answer = httpx.Response(200, text="1\nnot a number\n")
    err = stream_post(_client(httpx.MockTransport(lambda r: answer)), "/chat", {}, _lines, _on_status)
    assert err is not None and err.kind == "stream_error"


def test_a_connection_that_fails_is_a_transport_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    err = stream_post(_client(httpx.MockTransport(refuse)), "/chat", {}, _lines, _on_status)
    assert err is not None and err.kind == "connection_reset"


def test_a_stream_read_whole_hands_back_what_the_reader_returned_and_sends_the_body() -> None:
    sent: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(200, text="1\n2\n")

    assert stream_post(_client(httpx.MockTransport(answer)), "/chat", {"a": 1}, _lines, _on_status) is None
    assert [json.loads(b) for b in sent] == [{"a": 1}]
