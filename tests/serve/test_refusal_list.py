"""The server's refusals are one list (bench.serve.refusals.RULES): the docs page is what the list generates,
every function that makes a refusal is a rule of it, and what the server answers is what the rule's function
makes, on every wire and on Claude on Bedrock in Bedrock's own shape."""

from __future__ import annotations

import inspect
from typing import Any

import httpx
import pytest

from bench.serve import refusals
from bench.wires.registry import wire
from tests.serve.serving import make_sequence, serving
from tests.serve.surfaces import ROOT

PAGE = ROOT / "docs" / "reference" / "server-refusals.md"
ANSWER: dict[str, Any] = {"finish": "stop", "content": "done"}
NAN = b'{"messages": NaN}'
NOT_JSON = "the body is not valid JSON: NaN is not a JSON value"
PATHS = [("openai-chat", "/v1/chat/completions", ""), ("anthropic", "/v1/messages", ""),
         ("openai-responses", "/v1/responses", ""), ("gemini", "/v1beta/models/m:generateContent", ""),
         ("bedrock-converse", "/model/m/converse", ""), ("ollama", "/api/chat", ""), ("cohere", "/v2/chat", ""),
         ("anthropic", "/model/anthropic.claude-sonnet/invoke", "bedrock"),
         ("anthropic", "/v1/projects/p/locations/l/publishers/anthropic/models/claude:rawPredict", "vertex")]


def test_the_committed_page_is_what_the_list_generates() -> None:
    assert PAGE.read_text() == refusals.page(), (
        "docs/reference/server-refusals.md differs from bench/serve/refusals.py's RULES: "
        "python -m bench.serve.refusals > docs/reference/server-refusals.md")


def test_every_function_that_makes_a_refusal_is_a_rule_of_the_list() -> None:
    makers = {name for name, f in inspect.getmembers(refusals, inspect.isfunction)
              if f.__module__ == refusals.__name__ and inspect.signature(f).return_annotation == "Refused"
              and name != "provider_error"}
    listed = {r.made_by.__name__ for r in refusals.RULES if not isinstance(r.made_by, str)}
    assert makers and makers <= listed, makers - listed


@pytest.mark.parametrize(("name", "path", "gateway"), PATHS, ids=[p for _, p, _ in PATHS])
def test_a_body_that_is_not_json_is_answered_as_its_rule_makes_it(name: str, path: str, gateway: str) -> None:
    with serving(make_sequence([ANSWER])) as srv:
        got = httpx.post(srv.url + path, content=NAN, timeout=10)
        notes = srv.session.notes()
    want = refusals.bad_request(wire(name), gateway, NOT_JSON)
    assert (got.status_code, got.json()) == (want.status, want.body)
    assert all(got.headers.get(k) == v for k, v in want.headers.items())
    assert notes == [f"request 1: {want.note}"]


def test_claude_on_bedrock_refuses_in_bedrocks_shape() -> None:
    with serving(make_sequence([ANSWER])) as srv:
        got = httpx.post(srv.url + "/model/anthropic.claude-sonnet/invoke", content=NAN, timeout=10)
    assert (got.status_code, got.json()) == (400, {"message": NOT_JSON})
    assert got.headers["x-amzn-ErrorType"] == "ValidationException"
