"""``stopbench import`` end to end: provenance options, several runs, the file the catalogue reads."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bench.catalogue.load import load_catalogue
from bench.cli import cli
from bench.importers import git_blob_sha
from tests.importers.conftest import DATA


def test_cassette_with_two_providers_writes_one_sequence_per_run(tmp_path: Path) -> None:
    src = DATA / "pydantic-ai/test_multiple_agent_tool_calls.yaml"
    result = CliRunner().invoke(cli, [
        "import", str(src), "--out", str(tmp_path / "mixed.yaml"), "--meta", "repo=pydantic/pydantic-ai",
        "--meta", "licence=MIT", "--require", "ok=true", "--require", "answer_on=[1]", "--title", "mixed"])
    assert result.exit_code == 0, result.output
    cat = load_catalogue(tmp_path)
    assert cat.problems == []
    run1, run2 = cat.sequences
    assert (run1.id, run1.dialect, run2.id, run2.dialect) == ("mixed-run1", "gemini", "mixed-run2", "openai-chat")
    assert run1.require.ok is True and run1.require.answer_on == (1,)
    assert run1.kind == "recorded"
    lines = run2.source.splitlines()
    assert "repo: pydantic/pydantic-ai" in lines and "licence: MIT" in lines
    assert f"(git blob {git_blob_sha(src)})" in run2.source
    assert "turns[0] id: chatcmpl-BEhL3fZWgTz2Z57jXexYbQPsOBUm3" in lines


def test_format_option_forces_the_dialect(tmp_path: Path) -> None:
    src = DATA / "vercel-ai/anthropic-refusal.json"
    result = CliRunner().invoke(cli, ["import", str(src), "--format", "openai-chat", "--dry-run"])
    assert result.exit_code == 2 and "not a openai-chat response" in result.output
    result = CliRunner().invoke(cli, ["import", str(src), "--format", "anthropic", "--dry-run"])
    assert result.exit_code == 0 and "finish_raw: refusal" in result.output
