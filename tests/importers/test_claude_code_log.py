"""Claude Code transcripts made by the real CLI (2.1.328) against the replay server, imported back.

Each fixture is the transcript ``claude -p`` wrote while the server served a catalogue sequence
(fixtures/claude_code/HOW.md); the importer must recover the turns the server sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.engine.model import Sequence
from bench.errors import UnusableInput
from bench.importers import claude_code_log
from bench.wires.capture import CaptureError
from tests.importers.served import FIXTURES, assert_sequence_recovered, assert_turn_recovered, corpus_on, served

DIR = FIXTURES / "claude_code"
# fixture -> (served sequence, the turn that answered each request, from the server's records (None: 410 past
# the end), fields Claude Code does not keep for a turn)
CASES: dict[str, tuple[str, list[int | None], dict[str, set[int]]]] = {
    "anthropic-tool-use-rounds": ("anthropic-tool-use-rounds", [0, 1, 2], {}),
    "anthropic-max-tokens-partial-tool-use": ("anthropic-max-tokens-partial-tool-use", [0, 1, 2], {}),
    "anthropic-pause-turn": ("anthropic-pause-turn", [0], {}),
    "anthropic-pause-turn-repeat": ("anthropic-pause-turn-repeat", [0], {}),
    "anthropic-empty-end-turn-after-tools": ("anthropic-empty-end-turn-after-tools", [0, 1, 2], {}),
    "anthropic-context-window-exceeded": ("anthropic-context-window-exceeded", [0, 1, None], {}),
    # the tool_use reply without a call is retracted from the transcript: its text and usage are gone
    "anthropic-dropped-tool-use": ("anthropic-dropped-tool-use", [0, 1, 2], {"content": {0}, "usage": {0}}),
    # a refusal is withheld (the first) or replaced by a synthetic message (the second): no usage
    "anthropic-refusal": ("anthropic-refusal", [0, 1, 1], {"usage": {1, 2}}),
    "chat-error-rate-limit": ("chat-error-rate-limit", [0, 1, 2], {}),
    "chat-error-500-repeat": ("chat-error-500-repeat", [0, 0], {}),
}


def only(path: Path) -> Sequence:
    records = list(claude_code_log.iter_records(path, path.name))
    assert len(records) == 1
    assert records[0].provider == "anthropic"
    return records[0].sequence


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_model_response_is_the_served_turn(name: str) -> None:
    sequence_id, answered, lost = CASES[name]
    seq = only(DIR / f"{name}.jsonl")
    assert seq.dialect == "anthropic"
    assert_sequence_recovered(seq, sequence_id, answered, **lost)


def test_per_block_lines_of_one_message_are_one_turn() -> None:
    # Claude Code writes the text block and the tool_use block of msg_stopbench-2-1 on two lines
    seq = only(DIR / "anthropic-tool-use-rounds.jsonl")
    first = seq.turns[0]
    assert first.content == "I'll look at the failing test first."
    assert [c.name for c in first.tool_calls] == ["read_file"]


def test_a_cut_off_tool_input_keeps_the_raw_arguments() -> None:
    seq = only(DIR / "anthropic-max-tokens-partial-tool-use.jsonl")
    assert seq.turns[0].tool_calls[0].arguments == (
        '{"path": "migrations/0042_add_index.sql", "content": "CREATE INDEX CONCURRENTLY idx_orders_')


def test_a_retried_error_and_the_error_given_up_on_are_both_turns() -> None:
    seq = only(DIR / "chat-error-500-repeat.jsonl")
    assert [(t.finish, t.error.kind if t.error else None, t.error.status if t.error else None)
            for t in seq.turns] == [("error", "server_error", 500), ("error", "server_error", 500)]
    assert seq.turns[0].error is not None and seq.turns[0].error.code == "server_error"


def test_the_session_id_is_the_sequence_id_and_the_request_cap_is_its_max_tokens() -> None:
    path = DIR / "anthropic-tool-use-rounds.jsonl"
    seq = only(path)
    assert seq.id == "ab61018b-4eb1-4274-9fb2-a7908eccecd6"  # the file's own name (Claude Code names it so)
    assert seq.max_tokens == 32000  # what the server saw in every request (make_fixtures.py prints it)
    assert "request max_tokens: 32000" in seq.source
    assert "claude code: 2.1.328" in seq.source


def test_sniff_knows_a_transcript_and_refuses_a_rollout() -> None:
    path = DIR / "anthropic-pause-turn.jsonl"
    assert claude_code_log.sniff(path, path.read_bytes()[:65536])
    rollout = FIXTURES / "codex_rollout" / "responses-reasoning-only.jsonl"
    assert not claude_code_log.sniff(rollout, rollout.read_bytes()[:65536])


def test_a_broken_line_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    lines = (DIR / "anthropic-tool-use-rounds.jsonl").read_bytes().splitlines(keepends=True)
    n = next(i for i, raw in enumerate(lines) if b'"type":"assistant"' in raw)
    lines[n] = lines[n].replace(b'"content":[', b'"content":"x","was":[', 1)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(UnusableInput) as err:
        list(claude_code_log.iter_records(path, "session.jsonl"))
    assert str(err.value) == f"session.jsonl: line {n + 1}: message.content: expected an array, got str"
    assert "\n" not in str(err.value)


def test_two_sessions_stream_one_at_a_time(tmp_path: Path) -> None:
    # the first session is yielded before the reader reaches the second's broken line: a generator
    # that holds one session, not the file
    a = (DIR / "anthropic-pause-turn.jsonl").read_bytes()
    b = (DIR / "anthropic-tool-use-rounds.jsonl").read_bytes()
    path = tmp_path / "two.jsonl"
    path.write_bytes(a + b + b"{not json\n")
    records: Iterator = claude_code_log.iter_records(path, "two.jsonl")  # type: ignore[type-arg]
    first = next(records)
    assert first.sequence.id == "1d85e62b-eeb6-4976-ae29-1e6be19e5632"
    with pytest.raises(CaptureError, match=r"two\.jsonl: line \d+: invalid JSON"):
        list(records)


def test_each_production_format_sniffs_its_own_fixtures_and_no_other() -> None:
    # bench.importers.PRODUCTION is the one table stopbench corpus reads: every module in it has the
    # interface, and auto-detection cannot take one format's file for another's
    import importlib

    from bench.importers import PRODUCTION

    folders = {"otel": "otel", "claude-code": "claude_code", "codex": "codex_rollout"}
    assert set(PRODUCTION) == set(folders)
    for name, module in PRODUCTION.items():
        mod = importlib.import_module(module)
        for other, folder in folders.items():
            for path in sorted((FIXTURES / folder).glob("*.jsonl")):
                assert mod.sniff(path, path.read_bytes()[:65536]) is (other == name), (name, path.name)


def test_stopbench_corpus_on_a_broken_transcript_exits_2_with_one_line(tmp_path: Path) -> None:
    lines = (DIR / "anthropic-pause-turn.jsonl").read_bytes().splitlines(keepends=True)
    n = next(i for i, raw in enumerate(lines) if b'"type":"assistant"' in raw)
    lines[n] = lines[n].replace(b'"id":"msg_stopbench-3-1"', b'"id":7', 1)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines))
    status, _, err = corpus_on(path, tmp_path / "out")
    assert (status, err) == (2, f"{path}: line {n + 1}: message.id: expected a string, got int\n")
    assert not (tmp_path / "out").exists()


def test_a_continued_session_is_one_sequence_and_the_second_prompt_is_a_steer() -> None:
    # claude -p, then claude -p --continue: Claude Code appends to the same file and session; the
    # server served anthropic-tool-use-rounds (turns 0-2) to the first run, anthropic-pause-turn to the second
    seq = only(DIR / "continued-session.jsonl")
    first, second = served("anthropic-tool-use-rounds"), served("anthropic-pause-turn")
    for i, (got, sent) in enumerate(zip(seq.turns, [*first.turns, second.turns[0]], strict=True)):
        assert_turn_recovered(got, sent, "anthropic", "anthropic", f"turns[{i}]")
    assert [t.steer for t in seq.turns] == [None, None, "go on", None]


def test_a_refusal_claude_code_withheld_is_a_turn_from_its_note() -> None:
    # the server sent stop_reason refusal (turn 0), then 410 to the request Claude Code sent after it
    seq = only(DIR / "con-anthropic-refusal-stream.jsonl")
    assert_turn_recovered(seq.turns[0], served("con-anthropic-refusal-stream").turns[0], "anthropic", "anthropic",
                          "turns[0]", usage=False)  # withheld: no usage in the transcript
    err = seq.turns[1].error
    assert err is not None and (err.status, err.code) == (410, "script_ended")
    assert "note: message msg_stopbench-2-1 was a refusal Claude Code withheld" in seq.source
