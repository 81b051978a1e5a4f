"""Event, block and delta types the importer does not know are counted and reported."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from bench.catalogue.load import load_sequence
from bench.cli import cli
from tests.importers.conftest import DATA, capture


def test_unknown_anthropic_events_are_counted_and_known_ones_still_assembled() -> None:
    r = capture("constructed/anthropic-unknown-events.chunks.txt")
    assert r.unknown == Counter({
        "anthropic: event 'message_hologram'": 2,
        "anthropic: content block 'hologram'": 1,
        "anthropic: delta 'sparkle_delta'": 1,
    })
    (t,) = r.turns
    assert t.turn.content == "Hello" and t.turn.finish_raw == "end_turn"


def test_cli_reports_unknown_counts_and_records_them_in_source(tmp_path: Path) -> None:
    out = tmp_path / "u.yaml"
    result = CliRunner().invoke(cli, ["import", str(DATA / "constructed/anthropic-unknown-events.chunks.txt"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "unknown: anthropic: event 'message_hologram' (x2)" in result.output
    seq = load_sequence(out)
    assert "unknown: anthropic: event 'message_hologram' (x2)" in seq.source
