"""OpenTelemetry GenAI spans exported by the real SDK from instrumented official clients, imported back.

Each fixture holds the OTLP/HTTP JSON bodies the SDK's exporter sent while the client ran against the
replay server (fixtures/otel/HOW.md says which instrumentation and which served sequence); the
importer must recover the turns the server sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.engine.model import Sequence
from bench.errors import UnusableInput
from bench.importers import otel
from bench.wires.capture import CaptureError
from tests.importers.served import FIXTURES, assert_sequence_recovered, corpus_on

DIR = FIXTURES / "otel"
# fixture -> (served sequence, the turn that answered each request, fields the instrumentation drops)
CASES: dict[str, tuple[str, list[int], dict[str, set[int]]]] = {
    "openai-tool-rounds": ("chat-tool-rounds", [0, 1, 2, 3], {}),
    # a stream without include_usage: the client never saw the served usage
    "openai-length-stream": ("chat-length-text-cut", [0, 1], {"usage": {1}}),
    "openai-error-500": ("chat-error-500-repeat", [0], {}),
    # OpenLLMetry 0.40.14 writes no gen_ai.completion.0.content for an empty string
    "openai-legacy-attributes": ("chat-tool-rounds", [0, 1, 2, 3], {"content": {0}}),
    "openai-events": ("chat-tool-rounds", [0, 1, 2, 3], {}),
    "openai-legacy-rate-limit": ("chat-error-rate-limit", [0], {}),
    "anthropic-tool-rounds": ("anthropic-tool-use-rounds", [0, 1, 2], {}),
    "anthropic-max-tokens-stream": ("anthropic-max-tokens-partial-tool-use", [0, 1, 2], {}),
}


def only(path: Path) -> Sequence:
    records = list(otel.iter_records(path, path.name))
    assert len(records) == 1
    return records[0].sequence


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_inference_span_is_the_served_turn(name: str) -> None:
    sequence_id, answered, lost = CASES[name]
    assert_sequence_recovered(only(DIR / f"{name}.jsonl"), sequence_id, answered, **lost)


SENT_MAX_TOKENS = {"openai-tool-rounds": 1024, "openai-length-stream": 256, "openai-error-500": 1024,
                   "openai-events": 1024, "openai-legacy-attributes": 1024, "openai-legacy-rate-limit": 1024,
                   "anthropic-tool-rounds": 2048, "anthropic-max-tokens-stream": 4096}
"""The max_tokens client.py sent in each case (make_fixtures.CASES)."""


@pytest.mark.parametrize("name", sorted(SENT_MAX_TOKENS))
def test_the_requests_max_tokens_is_the_sequences(name: str) -> None:
    assert only(DIR / f"{name}.jsonl").max_tokens == SENT_MAX_TOKENS[name]


def test_spans_group_by_conversation_id_else_by_trace() -> None:
    assert only(DIR / "openai-tool-rounds.jsonl").id == "conv-openai-tool-rounds"
    seq = only(DIR / "anthropic-tool-rounds.jsonl")
    trace = json.loads((DIR / "anthropic-tool-rounds.jsonl").read_bytes())["resourceSpans"][0]["scopeSpans"][0][
        "spans"][0]["traceId"]
    assert seq.id == f"trace-{trace}"


def test_the_sdk_span_and_the_instrumentation_span_of_one_call_are_one_turn() -> None:
    # the anthropic SDK and opentelemetry-instrumentation-anthropic each write a span per call: six spans,
    # three turns, the provider's own stop reason from the SDK's span
    seq = only(DIR / "anthropic-tool-rounds.jsonl")
    assert [t.finish_raw for t in seq.turns] == ["tool_use", "tool_use", "end_turn"]


def test_provider_model_and_request_cap_are_recorded() -> None:
    record = next(otel.iter_records(DIR / "anthropic-max-tokens-stream.jsonl", "x.jsonl"))
    assert (record.provider, record.model) == ("anthropic", "claude-stopbench")
    assert "request max_tokens: 4096" in record.sequence.source


def test_an_error_status_gives_the_kind_and_http_status() -> None:
    seq = only(DIR / "openai-legacy-rate-limit.jsonl")
    err = seq.turns[0].error
    assert err is not None and (err.kind, err.status) == ("rate_limit", 429)


def test_a_collector_file_of_many_requests_gives_each_conversation(tmp_path: Path) -> None:
    path = tmp_path / "collector.jsonl"
    path.write_bytes(b"".join((DIR / f"{name}.jsonl").read_bytes() for name in sorted(CASES)))
    ids = [r.sequence.id for r in otel.iter_records(path, "collector.jsonl")]
    assert len(ids) == len(CASES) == len(set(ids))


def test_one_pretty_printed_export_document_is_read_whole(tmp_path: Path) -> None:
    body = json.loads((DIR / "openai-tool-rounds.jsonl").read_bytes())
    path = tmp_path / "export.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    assert_sequence_recovered(only(path), "chat-tool-rounds", [0, 1, 2, 3])


def test_sniff_knows_an_export_and_refuses_a_transcript() -> None:
    path = DIR / "openai-error-500.jsonl"
    assert otel.sniff(path, path.read_bytes()[:65536])
    other = FIXTURES / "claude_code" / "anthropic-pause-turn.jsonl"
    assert not otel.sniff(other, other.read_bytes()[:65536])


def test_a_broken_span_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    good = (DIR / "openai-error-500.jsonl").read_bytes()
    broken = good.replace(b'"startTimeUnixNano": "', b'"startTimeUnixNano": "x', 1)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(good + broken)
    with pytest.raises(UnusableInput) as err:
        list(otel.iter_records(path, "spans.jsonl"))
    assert str(err.value) == ("spans.jsonl: line 2: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: "
                              "expected nanoseconds")


def test_a_trace_is_yielded_lag_requests_after_its_root_span(tmp_path: Path) -> None:
    # trace A's root comes in request 1; after LAG more requests (other traces) A is complete and comes
    # out before the reader reaches the broken line after them: the reader holds the open traces, not the file
    other = (DIR / "openai-legacy-attributes.jsonl").read_bytes()
    trace = json.loads(other)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    lines = [other.replace(trace.encode(), f"{n:032x}".encode()) for n in range(otel.LAG)]
    path = tmp_path / "spans.jsonl"
    path.write_bytes((DIR / "anthropic-tool-rounds.jsonl").read_bytes() + b"".join(lines)
                     + b'{"resourceSpans": 1}\n')
    records = otel.iter_records(path, "spans.jsonl")
    assert next(records).sequence.dialect == "anthropic"  # at request LAG + 1, before any of the others
    with pytest.raises(CaptureError, match=rf"^spans\.jsonl: line {otel.LAG + 2}: resourceSpans: expected an array$"):
        list(records)


def test_log_record_events_join_their_span_when_they_come_after_it() -> None:
    # openai-v2 with EVENT_ONLY content: the spans carry no messages; the call's
    # gen_ai.client.inference.operation.details log record, exported on the next line, carries them
    assert_sequence_recovered(only(DIR / "openai-events.jsonl"), "chat-tool-rounds", [0, 1, 2, 3])


def test_log_records_may_come_before_their_spans(tmp_path: Path) -> None:
    spans, logs = (DIR / "openai-events.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(logs + spans)
    assert otel.sniff(path, path.read_bytes())
    assert_sequence_recovered(only(path), "chat-tool-rounds", [0, 1, 2, 3])


def test_a_conversation_waits_for_the_gap_or_the_end_of_the_file(tmp_path: Path) -> None:
    # a conversation has no root to end it: it is complete only after GAP_NS of span time without
    # a span of it, or at the end of the file
    path = tmp_path / "spans.jsonl"
    path.write_bytes((DIR / "openai-tool-rounds.jsonl").read_bytes() + b'{"resourceSpans": 1}\n')
    with pytest.raises(CaptureError, match="line 2"):
        next(otel.iter_records(path, "spans.jsonl"))


def test_a_conversation_is_yielded_after_a_gap_of_span_time(tmp_path: Path) -> None:
    # conversation A, then spans of conversation B ending more than GAP_NS later: A is complete and
    # comes out before the reader reaches the broken third line
    later = json.loads((DIR / "openai-length-stream.jsonl").read_bytes())
    for scope in later["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for key in ("startTimeUnixNano", "endTimeUnixNano"):
                span[key] = str(int(span[key]) + otel.GAP_NS + 10**9)
    path = tmp_path / "spans.jsonl"
    path.write_bytes((DIR / "openai-tool-rounds.jsonl").read_bytes() + json.dumps(later).encode() + b"\n"
                     + b'{"resourceSpans": 1}\n')
    records = otel.iter_records(path, "spans.jsonl")
    assert next(records).sequence.id == "conv-openai-tool-rounds"
    with pytest.raises(CaptureError, match="line 3"):
        next(records)


def test_a_conversation_that_comes_back_after_its_gap_is_a_second_sequence_that_says_so(tmp_path: Path) -> None:
    first = (DIR / "openai-tool-rounds.jsonl").read_bytes()
    again = json.loads(first)
    for scope in again["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for key in ("startTimeUnixNano", "endTimeUnixNano"):
                span[key] = str(int(span[key]) + 2 * otel.GAP_NS)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(first + json.dumps(again).encode() + b"\n")
    seqs = [r.sequence for r in otel.iter_records(path, "spans.jsonl")]
    assert [s.id for s in seqs] == ["conv-openai-tool-rounds", "conv-openai-tool-rounds"]
    assert "continues an earlier sequence" not in seqs[0].source
    assert "note: continues an earlier sequence conv-openai-tool-rounds" in seqs[1].source


def test_gen_ai_choice_span_events_give_the_turn_when_no_attribute_does(tmp_path: Path) -> None:
    # no instrumentation driven here still writes span events (both emit log records now), so this one
    # is made from a real span: its indexed completion attributes moved into a gen_ai.choice event with
    # the fields semantic conventions 1.28 gave the event (index, finish_reason, message)
    body = json.loads((DIR / "openai-legacy-attributes.jsonl").read_bytes())
    for scope in body["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            attrs = {a["key"]: a["value"].get("stringValue") for a in span.get("attributes", [])}
            if "gen_ai.completion.0.finish_reason" not in attrs:
                continue
            message: dict[str, object] = {"role": "assistant"}
            if attrs.get("gen_ai.completion.0.content") is not None:
                message["content"] = attrs["gen_ai.completion.0.content"]
            calls = [{"id": attrs[f"gen_ai.completion.0.tool_calls.{n}.id"], "type": "function", "function": {
                "name": attrs[f"gen_ai.completion.0.tool_calls.{n}.name"],
                "arguments": attrs[f"gen_ai.completion.0.tool_calls.{n}.arguments"]}}
                for n in range(4) if f"gen_ai.completion.0.tool_calls.{n}.id" in attrs]
            if calls:
                message["tool_calls"] = calls
            span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("gen_ai.completion.")]
            span["events"] = [{"name": "gen_ai.choice", "timeUnixNano": span["endTimeUnixNano"], "attributes": [
                {"key": "index", "value": {"intValue": "0"}},
                {"key": "finish_reason", "value": {"stringValue": attrs["gen_ai.completion.0.finish_reason"]}},
                {"key": "message", "value": {"stringValue": json.dumps(message)}}]}]
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(body) + "\n", encoding="utf-8")
    assert_sequence_recovered(only(path), "chat-tool-rounds", [0, 1, 2, 3], content={0})


def test_the_semantic_conventions_finish_words_are_read_as_the_dialects_own(tmp_path: Path) -> None:
    # opentelemetry-instrumentation-anthropic's own span writes the conventions' word ("tool_call") where
    # Anthropic said "tool_use"; without the SDK's span the importer reads the word, and says so
    body = json.loads((DIR / "anthropic-tool-rounds.jsonl").read_bytes())
    body["resourceSpans"][0]["scopeSpans"] = [s for s in body["resourceSpans"][0]["scopeSpans"]
                                              if s["scope"]["name"] != "com.anthropic.sdk.python"]
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(body) + "\n", encoding="utf-8")
    seq = only(path)
    assert [(t.finish, t.finish_raw) for t in seq.turns] == [
        ("tool_calls", "tool_use"), ("tool_calls", "tool_use"), ("stop", "end_turn")]
    assert "finish 'tool_call' is the semantic conventions' word" in seq.source


def test_stopbench_corpus_on_a_broken_export_exits_2_with_one_line(tmp_path: Path) -> None:
    good = (DIR / "openai-error-500.jsonl").read_bytes()
    path = tmp_path / "spans.jsonl"
    path.write_bytes(good + good.replace(b'"traceId": "', b'"traceId": 5, "x": "', 1))
    status, _, err = corpus_on(path, tmp_path / "out")
    assert (status, err) == (2, f"{path}: line 2: resourceSpans[0].scopeSpans[0].spans[0].traceId: "
                                "expected a hex string\n")
    assert not (tmp_path / "out").exists()


def test_log_records_join_the_span_of_their_own_trace_when_span_ids_repeat(tmp_path: Path) -> None:
    # two exports of the same run under different trace ids (span ids equal): spans of both first, then
    # the log records of both; each sequence gets its own trace's messages
    spans, logs = (DIR / "openai-events.jsonl").read_bytes().splitlines(keepends=True)
    trace = json.loads(spans)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    other = "f" * 32
    second_logs = logs.replace(trace.encode(), other.encode()).replace(b"Fixed the off-by-one", b"FIXED the off-by-one")
    path = tmp_path / "spans.jsonl"
    path.write_bytes(spans + spans.replace(trace.encode(), other.encode()) + logs + second_logs)
    seqs = {r.sequence.id: r.sequence for r in otel.iter_records(path, "spans.jsonl")}
    assert seqs[f"trace-{trace}"].turns[3].content == "Fixed the off-by-one in parse.py; all tests pass."
    assert seqs[f"trace-{other}"].turns[3].content == "FIXED the off-by-one in parse.py; all tests pass."
