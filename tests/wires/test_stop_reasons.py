"""The stop reasons users hit, served as each provider sends them and parsed by the official client:
every Gemini finishReason of the table, an Anthropic refusal with its ``stop_details`` and
``model_context_window_exceeded``, Responses ``incomplete`` for each reason and a ``completed``
status over a cut reply, and an unknown finish served as its raw string (never another meaning)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from bench.engine.model import Turn
from bench.importers import import_capture
from bench.serve.render import Context, render
from bench.wires.dialects import TABLES
from tests.serve.serving import CLAUDE_TOOLS, GEMINI_TOOLS, RESPONSES_TOOLS, make_sequence, serving
from tests.serve.test_official_clients import USER, claude, oai

STREAM = [False, True]
IDS = ["json", "stream"]
DETAILS = {"type": "refusal", "category": "cyber",
           "explanation": "This request was declined because it could enable cyber harm."}


def _genai(base_url: str) -> genai.Client:
    options = types.HttpOptions(base_url=base_url.removesuffix("/v1"), timeout=10_000)
    return genai.Client(api_key="k", http_options=options)


def _gemini_finish(raw: str, stream: bool, content: str | None) -> tuple[str | None, str | None]:
    """(finishReason as the client parsed it, the text) of one served Gemini turn."""
    turn = {"finish": TABLES["gemini"][raw].finish, "finish_raw": raw, "content": content}
    with serving(make_sequence([turn], "gemini")) as srv:
        client = _genai(srv.base_url)  # held: a client collected mid-call closes its connection
        models = client.models
        config = types.GenerateContentConfig(tools=GEMINI_TOOLS)
        if stream:
            chunks = list(models.generate_content_stream(model="gemini-2.5-pro", contents="hi", config=config))
        else:
            chunks = [models.generate_content(model="gemini-2.5-pro", contents="hi", config=config)]
    finish = next(c.candidates[0].finish_reason for c in chunks if c.candidates and c.candidates[0].finish_reason)
    text = "".join(p.text for c in chunks for p in (c.candidates[0].content.parts or []) if c.candidates
                   and c.candidates[0].content and p.text) or None
    return (finish.value if isinstance(finish, types.FinishReason) else finish), text


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("raw", ["UNEXPECTED_TOOL_CALL", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
                                 "MALFORMED_FUNCTION_CALL", "TOO_MANY_TOOL_CALLS", "SAFETY", "LANGUAGE"])
def test_each_gemini_finish_reason_reaches_google_genai_as_its_own_enum_value(raw: str, stream: bool) -> None:
    finish, _ = _gemini_finish(raw, stream, None)
    assert finish == raw


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_a_recitation_keeps_the_text_streamed_before_it(stream: bool) -> None:
    assert _gemini_finish("RECITATION", stream, "It begins: Everyone is permitted to copy and") == (
        "RECITATION", "It begins: Everyone is permitted to copy and")


def test_the_gemini_table_holds_exactly_the_finish_reasons_google_genai_knows() -> None:
    # an entry the official client does not know would be parsed as a bare string, not the enum; a reason
    # it knows that the table lacks would be read as unknown whatever Google documents for it
    assert set(TABLES["gemini"]) == {f.value for f in types.FinishReason}


def _claude_message(turn: dict[str, Any], stream: bool) -> Any:
    with serving(make_sequence([turn], "anthropic")) as srv:
        client = claude(srv.url)
        args: dict[str, Any] = {"model": "m", "max_tokens": 100, "messages": USER, "tools": CLAUDE_TOOLS}
        if stream:
            with client.messages.stream(**args) as s:
                return s.get_final_message()
        return client.messages.create(**args)


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_an_anthropic_refusal_carries_its_stop_details_and_the_text_before_it(stream: bool) -> None:
    turn = {"finish": "content_filter", "finish_raw": "refusal", "content": "Hello..",
            "finish_detail": json.dumps(DETAILS, separators=(",", ":"))}
    message = _claude_message(turn, stream)
    assert message.stop_reason == "refusal"
    assert message.stop_details is not None
    assert (message.stop_details.type, message.stop_details.category, message.stop_details.explanation) == (
        "refusal", "cyber", DETAILS["explanation"])
    assert [getattr(b, "text", None) for b in message.content] == ["Hello.."]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_a_refusal_whose_detail_is_not_a_stop_details_object_is_sent_without_one(stream: bool) -> None:
    message = _claude_message({"finish": "content_filter", "finish_raw": "refusal", "content": None,
                               "finish_detail": "refusal/cyber"}, stream)
    assert (message.stop_reason, message.stop_details) == ("refusal", None)


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_other_stop_reasons_carry_no_stop_details(stream: bool) -> None:
    message = _claude_message({"finish": "length", "finish_raw": "model_context_window_exceeded",
                               "content": "The build log shows", "finish_detail": json.dumps(DETAILS)}, stream)
    assert (message.stop_reason, message.stop_details) == ("model_context_window_exceeded", None)


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_an_unknown_anthropic_stop_reason_is_served_as_its_raw_string(stream: bool) -> None:
    message = _claude_message({"finish": "unknown", "finish_raw": "compaction", "content": "summary so far"}, stream)
    assert message.stop_reason == "compaction"


def _response(turn: dict[str, Any], stream: bool, **extra: Any) -> Any:
    with serving(make_sequence([turn], "openai-responses")) as srv:
        client = oai(srv.base_url)
        if not stream:
            return client.responses.create(model="m", input="hi", tools=RESPONSES_TOOLS, **extra)
        # the SDK's stream helper keeps only response.completed; an incomplete response ends with
        # response.incomplete (as the real API ends it), so the terminal event is taken as it came
        terminal = [ev.response for ev in client.responses.create(model="m", input="hi", tools=RESPONSES_TOOLS,
                                                                   stream=True, **extra)
                    if ev.type in ("response.completed", "response.incomplete", "response.failed")]
        assert len(terminal) == 1
        return terminal[0]


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
@pytest.mark.parametrize("reason", ["max_output_tokens", "content_filter", "steered", "max_messages"])
def test_responses_incomplete_carries_each_reason(reason: str, stream: bool) -> None:
    raw = f"incomplete/{reason}"
    response = _response({"finish": TABLES["openai-responses"][raw].finish, "finish_raw": raw,
                          "content": "The migration touches"}, stream)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None and response.incomplete_details.reason == reason


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_a_completed_status_over_a_cut_reply_is_served_as_recorded(stream: bool) -> None:
    # jundot/omlx#2817: status completed, a reasoning item and an empty message, output at the limit
    turn = {"finish": "stop", "finish_raw": "completed", "content": "", "reasoning": "The failure is in",
            "usage": {"input_tokens": 50, "output_tokens": 300}}
    response = _response(turn, stream, max_output_tokens=300)
    assert (response.status, response.incomplete_details) == ("completed", None)
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output_text == ""
    assert response.usage is not None and response.usage.output_tokens == 300


@pytest.mark.parametrize("stream", STREAM, ids=IDS)
def test_a_served_refusal_imports_back_with_the_same_stop_details(tmp_path: Path, stream: bool) -> None:
    detail = json.dumps(DETAILS, separators=(",", ":"))
    turn = Turn("content_filter", "refusal", content="Hello..", finish_detail=detail)
    rendered = render("anthropic", turn, Context("msg_rt", "m", "refusal"), stream)
    path = tmp_path / f"refusal.{'sse' if stream else 'json'}"
    if rendered.streaming:
        path.write_bytes(b"".join(rendered.frames))
    else:
        path.write_text(json.dumps(rendered.body))
    (back,) = import_capture(path, "anthropic").turns
    assert (back.turn.finish_raw, back.turn.content, back.turn.finish_detail) == ("refusal", "Hello..", detail)


def test_every_incomplete_reason_the_client_knows_is_in_the_responses_table() -> None:
    from typing import get_args

    from openai.types.responses.response import IncompleteDetails

    reasons = {r for arg in get_args(IncompleteDetails.model_fields["reason"].annotation) for r in get_args(arg)}
    assert "max_output_tokens" in reasons
    assert {f"incomplete/{r}" for r in reasons} <= set(TABLES["openai-responses"])


def test_the_stop_reasons_page_lists_every_table_entry_and_where_the_catalogue_serves_it() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_hook", Path(__file__).parents[2] / "docs/_hooks/site.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.GENERATORS["stop-reasons"]()
    rows = {line.split(" | ")[0].strip("| `") for line in page.splitlines() if line.startswith("| `")}
    for dialect, table in TABLES.items():
        assert f"### {dialect}" in page
        assert set(table) <= rows
    for reason, sequence in [("UNEXPECTED_TOOL_CALL", "gemini-unexpected-tool-call"), ("SPII", "gemini-spii"),
                             ("incomplete/steered", "responses-incomplete-steered")]:
        (row,) = [line for line in page.splitlines() if line.startswith(f"| `{reason}` |")]
        assert f"`{sequence}`" in row


def test_the_anthropic_table_holds_exactly_the_stop_reasons_the_client_knows() -> None:
    from typing import get_args

    from anthropic.types import StopReason

    assert set(TABLES["anthropic"]) == set(get_args(StopReason))
