"""Captures that cannot be read: a clear error naming the file and line or event; nothing written."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.importers import CaptureError, import_capture
from bench.wires.capture import read_events
from tests.importers.conftest import DATA


def _import_cli(tmp_path: Path, rel: str, *extra: str) -> tuple[int, str, Path]:
    src = tmp_path / Path(rel).name
    shutil.copy(DATA / rel, src)
    out = tmp_path / "out" / "imported.yaml"
    result = CliRunner().invoke(cli, ["import", str(src), "--out", str(out), *extra])
    return result.exit_code, result.output, out


@pytest.mark.parametrize(("rel", "where"), [
    ("constructed/chat-truncated.json", "line 1, column 160"),
    ("constructed/chat-bad-event.sse", "line 5 (event 2)"),
    ("constructed/cassette-bad-event.yaml", "interactions[1] (cassette line 18).response.body line 3 (event 2)"),
    ("constructed/cassette-broken-yaml.yaml", "line 11, column 1"),
])
def test_cli_names_file_and_place_and_writes_nothing(tmp_path: Path, rel: str, where: str) -> None:
    code, output, out = _import_cli(tmp_path, rel)
    assert code == 2
    assert Path(rel).name in output and where in output
    assert not out.exists() and not out.parent.exists()


def test_bad_event_error_carries_file_and_where() -> None:
    with pytest.raises(CaptureError) as info:
        import_capture(DATA / "constructed/chat-bad-event.sse", "auto", "chat-bad-event.sse")
    assert info.value.file == "chat-bad-event.sse"
    assert info.value.where == "line 5 (event 2)"
    assert "invalid JSON" in info.value.problem


def test_a_bad_second_interaction_writes_not_even_the_first_run(tmp_path: Path) -> None:
    code, _, _ = _import_cli(tmp_path, "constructed/cassette-bad-event.yaml")
    assert code == 2 and not list(tmp_path.rglob("*.yaml"))[1:]  # only the copied source itself


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sse"
    empty.write_text("\n\n")
    with pytest.raises(CaptureError, match="empty"):
        import_capture(empty)
    with pytest.raises(CaptureError, match="no such file"):
        import_capture(tmp_path / "missing.json")


def test_events_are_read_one_at_a_time() -> None:
    """A stream is consumed lazily: the reader yields the first event before the input ends."""
    def endless() -> Iterator[str]:
        yield 'data: {"n": 1}\n'
        yield "\n"
        while True:
            yield ": keep-alive\n"
    first = next(read_events(endless()))
    assert first.data == '{"n": 1}' and first.line == 1


def test_existing_output_is_not_overwritten_without_force(tmp_path: Path) -> None:
    src = tmp_path / "deepseek-text.json"
    shutil.copy(DATA / "vercel-ai/deepseek-text.json", src)
    out = tmp_path / "seq.yaml"
    out.write_text("keep me")
    result = CliRunner().invoke(cli, ["import", str(src), "--out", str(out)])
    assert result.exit_code == 2 and out.read_text() == "keep me"
    result = CliRunner().invoke(cli, ["import", str(src), "--out", str(out), "--force"])
    assert result.exit_code == 0 and "finish: length" in out.read_text()
