"""Codex rollout files made by the real Codex (0.169.0, the conformance driver) against the replay server.

Each fixture is the rollout Codex wrote while the server served a catalogue sequence on the Responses
wire (fixtures/codex_rollout/HOW.md); the importer must recover the turns the server sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.engine.model import Sequence
from bench.errors import UnusableInput
from bench.importers import codex_rollout
from bench.wires.capture import CaptureError
from tests.importers.served import FIXTURES, assert_sequence_recovered, corpus_on, served

DIR = FIXTURES / "codex_rollout"
# fixture -> (served sequence, the turn that answered each request, from the server's records, fields the
# rollout cannot have)
CASES: dict[str, tuple[str, list[int], dict[str, set[int]]]] = {
    "responses-function-call-rounds": ("responses-function-call-rounds", [0, 1, 2], {}),
    "responses-incomplete-max-output-tokens": ("responses-incomplete-max-output-tokens", [0], {}),
    "chat-error-rate-limit": ("chat-error-rate-limit", [0], {}),
    "rec-responses-function-call-stream": ("rec-responses-function-call-stream", [0, 1], {}),
    "responses-reasoning-only": ("responses-reasoning-only", [0], {}),
    # a Chat sequence on the Responses wire: the server sent statuses "tool_calls" and "stop", which no
    # Responses server sends; Codex took each response.completed event as completed, and a rollout keeps
    # no status, so the finish is not compared
    "chat-steer-mid-run": ("chat-steer-mid-run", [0, 1, 2, 3, 4], {"finish": {0, 1, 2, 3, 4}}),
    # six requests: Codex retried the incomplete stream five times; each attempt's message is in the
    # rollout, but only the last one's cause (the task's error)
    "responses-incomplete-content-filter": ("responses-incomplete-content-filter", [0] * 6,
                                            {"finish": {0, 1, 2, 3, 4}}),
    # a stream cut inside a call (no finish), then Chat statuses on the Responses wire (see above)
    "chat-stream-cut-mid-call": ("chat-stream-cut-mid-call", [0, 1, 2], {"finish": {1, 2}}),
    # six requests, the connection dropped each time: Codex's stream retries leave no item in the rollout
    "chat-connection-dropped-repeat": ("chat-connection-dropped-repeat", [0], {}),
    "responses-end-turn-false": ("responses-end-turn-false", [0, 1, 2], {}),
}


def only(path: Path) -> Sequence:
    records = list(codex_rollout.iter_records(path, path.name))
    assert len(records) == 1
    assert records[0].provider == "openai" and records[0].model == "stopbench"
    return records[0].sequence


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_model_response_is_the_served_turn(name: str) -> None:
    sequence_id, answered, cannot = CASES[name]
    seq = only(DIR / f"{name}.jsonl")
    assert seq.dialect == "openai-responses"
    assert_sequence_recovered(seq, sequence_id, answered, **cannot)


def test_an_incomplete_response_is_read_from_codexs_task_error() -> None:
    seq = only(DIR / "responses-incomplete-max-output-tokens.jsonl")
    assert (seq.turns[0].finish, seq.turns[0].finish_raw) == ("length", "incomplete/max_output_tokens")


def test_a_failed_task_without_a_response_is_an_error_turn_with_codexs_variant() -> None:
    seq = only(DIR / "chat-error-rate-limit.jsonl")
    err = seq.turns[0].error
    assert err is not None
    assert (err.kind, err.status, err.code) == ("rate_limit", 429, "response_too_many_failed_attempts")


def test_a_message_typed_after_a_response_is_that_turns_steer() -> None:
    seq = only(DIR / "chat-steer-mid-run.jsonl")
    assert [t.steer for t in seq.turns] == [None, None, "Also update the README's option table.", None, None]


def test_usage_comes_from_each_responses_usage_record() -> None:
    seq = only(DIR / "rec-responses-function-call-stream.jsonl")
    assert [(u.input_tokens, u.output_tokens) for t in seq.turns if (u := t.usage)] == [(58, 23), (94, 18)]


def test_sniff_knows_a_rollout_and_refuses_a_transcript() -> None:
    path = DIR / "responses-reasoning-only.jsonl"
    assert codex_rollout.sniff(path, path.read_bytes()[:65536])
    other = FIXTURES / "claude_code" / "anthropic-pause-turn.jsonl"
    assert not codex_rollout.sniff(other, other.read_bytes()[:65536])


def test_a_broken_line_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    lines = (DIR / "responses-function-call-rounds.jsonl").read_bytes().splitlines(keepends=True)
    n = next(i for i, raw in enumerate(lines) if b'"type":"function_call"' in raw)
    lines[n] = lines[n].replace(b'"call_id":"fc_01"', b'"call_id":1', 1)
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(UnusableInput) as err:
        list(codex_rollout.iter_records(path, "rollout.jsonl"))
    assert str(err.value) == f"rollout.jsonl: line {n + 1}: payload.call_id: expected a string, got int"


def test_a_rollout_must_open_with_its_session(tmp_path: Path) -> None:
    lines = (DIR / "responses-reasoning-only.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines[1:]))
    with pytest.raises(UnusableInput, match=r"^rollout\.jsonl: line 1: type: a rollout starts with a session_meta"):
        list(codex_rollout.iter_records(path, "rollout.jsonl"))


def test_two_sessions_stream_one_at_a_time(tmp_path: Path) -> None:
    a = (DIR / "responses-reasoning-only.jsonl").read_bytes()
    b = (DIR / "responses-function-call-rounds.jsonl").read_bytes()
    path = tmp_path / "two.jsonl"
    path.write_bytes(a + b + b"[1]\n")
    records = codex_rollout.iter_records(path, "two.jsonl")
    assert next(records).sequence.turns[0].reasoning is not None  # yielded before the bad line is read
    with pytest.raises(CaptureError, match=r"two\.jsonl: line \d+: not a JSON object"):
        list(records)


def test_stopbench_corpus_on_a_broken_rollout_exits_2_with_one_line(tmp_path: Path) -> None:
    lines = (DIR / "responses-function-call-rounds.jsonl").read_bytes().splitlines(keepends=True)
    n = next(i for i, raw in enumerate(lines) if b'"type":"function_call"' in raw)
    lines[n] = lines[n].replace(b'"name":"shell"', b'"name":null', 1)
    path = tmp_path / "rollout-x.jsonl"
    path.write_bytes(b"".join(lines))
    status, _, err = corpus_on(path, tmp_path / "out")
    assert (status, err) == (2, f"{path}: line {n + 1}: payload.name: expected a string, got NoneType\n")
    assert not (tmp_path / "out").exists()


def test_a_failed_response_after_codexs_retries_is_a_stream_error() -> None:
    # served: status failed (response.failed) six times; the rollout keeps Codex's final error only
    seq = only(DIR / "responses-failed.jsonl")
    assert served("responses-failed").turns[0].finish_raw == "failed"
    assert [(t.finish, t.error.kind if t.error else None) for t in seq.turns] == [("error", "stream_error")]


def test_a_provider_error_body_codex_quotes_gives_the_kind_from_its_type() -> None:
    seq = only(DIR / "chat-context-overflow-after-tools.jsonl")
    sent = served("chat-context-overflow-after-tools").turns[1].error
    err = seq.turns[1].error
    assert sent is not None and err is not None
    assert (err.kind, err.code, err.message) == (sent.kind, sent.code, sent.message)
    assert err.status is None  # Codex keeps the body, not the HTTP status
