"""`stopbench import` and `stopbench serve` on unusable input: one line, exit 2, no traceback, nothing written."""

from __future__ import annotations

import socket
from pathlib import Path

from click.testing import CliRunner, Result

from bench.cli import cli
from tests.importers.conftest import DATA

CAPTURE = DATA / "vercel-ai/anthropic-refusal.json"
SEQ = """\
title: one answer
kind: constructed
dialect: openai-chat
source: tests/cli
then: end
turns:
  - finish: stop
    content: answer
"""


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_import_with_a_requirement_that_is_not_yaml_is_a_usage_error(tmp_path: Path) -> None:
    result = _invoke("import", str(CAPTURE), "--require", "ok=[", "--out", str(tmp_path / "x.yaml"))
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), "no traceback"
    assert "Invalid value for --require: ok='[' is not a YAML value" in result.stderr
    assert not list(tmp_path.iterdir())


def test_import_into_a_folder_that_cannot_be_made_exits_2_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    result = _invoke("import", str(CAPTURE), "--out", str(tmp_path / "a-file" / "x.yaml"))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), "no traceback"
    assert len(result.stderr.splitlines()) == 1 and str(tmp_path / "a-file") in result.stderr


def test_serve_an_unknown_sequence_exits_2(tmp_path: Path) -> None:
    (tmp_path / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    result = _invoke("serve", "no-such-sequence", "--sequences", str(tmp_path), "--port", "0")
    assert result.exit_code == 2 and f"no usable sequence 'no-such-sequence' under {tmp_path}" in result.stderr


def test_serve_refuses_an_observed_file_in_a_missing_folder_before_serving(tmp_path: Path) -> None:
    (tmp_path / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    target = tmp_path / "missing" / "observed.json"
    result = _invoke("serve", "one-answer", "--sequences", str(tmp_path), "--port", "0", "--observed", str(target))
    assert result.exit_code == 2
    assert result.stderr == f"cannot write {target}: no folder {target.parent}\n"


def test_serve_on_a_port_already_taken_exits_2_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "one-answer.yaml").write_text(SEQ, encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _invoke("serve", "one-answer", "--sequences", str(tmp_path), "--port", str(port))
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert result.stderr == f"cannot serve on 127.0.0.1:{port}: Address already in use\n"
