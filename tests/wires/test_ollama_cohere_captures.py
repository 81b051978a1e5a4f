"""Broken and odd Ollama and Cohere captures: a line that is not JSON is one line naming the file and
the line (exit 2, nothing written); parts of the wrong type are counted as unknown, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.importers import import_capture


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_cut_ndjson_line_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "ollama.jsonl", '{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}\n'
                                            '{"model":"m","message":{"role":"assistant","content":"x"},"done":tru\n')
    r = CliRunner().invoke(cli, ["import", str(path), "--dry-run"])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [f"cannot import: {path}: line 2 (event 2): invalid JSON "
                                             "(column 69: unexpected end of data)"]


@pytest.mark.parametrize(("name", "text", "unknown"), [
    ("ollama.json", '{"model":"m","message":{"role":"assistant","content":"hi","tool_calls":'
                    '[{"function":{"name":"x","arguments":{"a":1}}}, 5, {"function":null}]},'
                    '"done":true,"done_reason":"stop","eval_count":"x"}\n',
     "ollama: tool call without a function"),
    ("cohere.sse", 'event: message-start\ndata: {"id":"x","type":"message-start"}\n\n'
                   'event: tool-call-start\ndata: {"type":"tool-call-start","index":"zero",'
                   '"delta":{"message":{"tool_calls":[1]}}}\n\n'
                   'event: message-end\ndata: [1,2]\n\n',
     "cohere: an event that is not an object"),
])
def test_parts_of_the_wrong_type_are_counted_not_raised(tmp_path: Path, name: str, text: str, unknown: str) -> None:
    result = import_capture(_write(tmp_path, name, text))
    assert result.unknown[unknown] >= 1
    assert len(result.turns) == 1
