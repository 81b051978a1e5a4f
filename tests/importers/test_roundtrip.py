"""Round trip: a recorded turn, served by bench.serve.render in its own wire format (JSON and
stream), imported again, gives the same turn. Gemini is not a served wire, so it has no round trip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.engine.model import Turn, Usage
from bench.importers import import_capture
from bench.serve.render import Context, render
from tests.importers.conftest import capture

CASES = [
    "pydantic-ai/test_compatible_api_with_tool_calls_without_id.yaml",
    "llm/test_tools_streaming_variant_a.yaml",
    "vercel-ai/deepseek-tool-call.chunks.txt",
    "vercel-ai/anthropic-fallback-tool-call.sse",
    "pydantic-ai/test_multiple_parallel_tool_calls.yaml",
    "vercel-ai/anthropic-refusal.json",
    "vercel-ai/spliced-message-start.chunks.txt",
    "llm/test_responses_tool_use_streaming.yaml",
    "constructed/responses-incomplete.json",
]


def _essentials(t: Turn) -> tuple[object, ...]:
    # a turn that recorded no usage is served with zeros (the APIs always send usage, and clients read it
    # unguarded: tests/serve/test_usage_always_sent.py), so it imports back as zero usage
    return (t.finish, t.finish_raw, t.content or None, t.tool_calls, t.usage or Usage())


@pytest.mark.parametrize("rel", CASES)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_served_turn_imports_back_unchanged(tmp_path: Path, rel: str, stream: bool) -> None:
    for i, imported in enumerate(capture(rel).turns):
        turn = imported.turn
        wire = imported.dialect
        assert wire in ("openai-chat", "anthropic", "openai-responses")
        ctx = Context(response_id=f"rt_{i}", model="roundtrip", finish_raw=turn.finish_raw,
                      include_usage=turn.usage is not None)
        rendered = render(wire, turn, ctx, stream)  # type: ignore[arg-type]
        path = tmp_path / f"turn{i}.{'sse' if stream else 'json'}"
        if rendered.streaming:
            path.write_bytes(b"".join(rendered.frames))
        else:
            path.write_text(json.dumps(rendered.body))
        (back,) = import_capture(path, wire).turns  # type: ignore[arg-type]
        assert _essentials(back.turn) == _essentials(turn), f"{rel} turn {i} ({'stream' if stream else 'json'})"


def test_imported_text_with_nel_ls_ps_or_cr_reads_back_unchanged() -> None:
    from bench.catalogue.load import load_yaml
    from bench.importers.sequence import dump

    for text in ("a\x85b", "line\u2028sep", "para\u2029sep", "cr\rlf\nnext", "two\nlines\x85"):
        assert load_yaml(dump({"content": text}))["content"] == text


def test_every_catalogue_turn_written_by_the_importer_loads_back_unchanged(tmp_path: Path) -> None:
    """The importer writes through the same sequence writer as everything else, so no field of a
    turn (``steer`` among them, which its own writer used to drop) is lost on the way."""
    from bench.catalogue.load import load_catalogue, load_sequence
    from bench.importers import ImportedTurn, ImportResult
    from bench.importers.sequence import Options, build_sequences, write_all
    from tests.helpers import ROOT

    catalogue = load_catalogue(ROOT / "sequences")
    assert any(t.steer for s in catalogue.sequences for t in s.turns), "no catalogue turn has a steer to keep"
    for seq in catalogue.sequences:
        result = ImportResult(file=f"{seq.id}.json", format=seq.dialect,
                              turns=[ImportedTurn(t, seq.dialect) for t in seq.turns])
        docs = build_sequences(result, seq.id, Options(then=seq.then, split_runs=False))
        write_all([(tmp_path / f"{seq_id}.yaml", doc) for seq_id, doc in docs])
        (seq_id, _), = docs
        back = load_sequence(tmp_path / f"{seq_id}.yaml")
        assert back.turns == seq.turns, seq.id
