"""``stopbench check --dialect D -- python surface_loop.py SURFACE``: a user's loop on each provider
surface's official client (Azure OpenAI, Vertex AI for Gemini and for Claude, Claude on Bedrock, Ollama,
Cohere), built from the variables ``check`` sets and docs/check.md's one line of set-up, reaches the
replay server on that surface's paths, and its cells are judged as on the wire the surface carries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from tests.helpers import ROOT

PROGRAM = Path(__file__).parent / "programs" / "surface_loop.py"
CLAUDE = ("anthropic-tool-use-rounds", "anthropic-max-tokens-partial-tool-use")
ANSWERED = {"azure": ("openai-chat", "chat-tool-rounds", "stop:stop@4 ok [read_file,edit_file,run_tests]"),
            "vertex-gemini": ("gemini", "gemini-function-call-stop", "stop:STOP@2 ok [get_forecast]"),
            "vertex-claude": ("anthropic", CLAUDE[0], "stop:end_turn@3 ok [read_file,bash]"),
            "bedrock": ("anthropic", CLAUDE[0], "stop:end_turn@3 ok [read_file,bash]"),
            "ollama": ("ollama", "ollama-tool-rounds", "stop:stop@3 ok [read_file ×2]"),
            "cohere": ("cohere", "cohere-tool-rounds", "stop:COMPLETE@3 ok [read_file ×2]")}
"""Per surface: the dialect it carries, a sequence that ends in an answer, and its cell."""
CUT = {"azure": ("chat-length-text-cut", "stop:length@2 not-ok [read_file]"),
       "vertex-gemini": ("gemini-max-tokens-empty", "stop:MAX_TOKENS@1 not-ok []"),
       "ollama": ("ollama-length-text-cut", "stop:length@2 not-ok [read_file]"),
       "cohere": ("cohere-max-tokens-text-cut", "stop:MAX_TOKENS@2 not-ok [read_file]")}
"""Per surface with one: a sequence cut off at its length limit, which the loop reports as not ok."""
SDK = {"azure": "openai", "vertex-gemini": "google.genai", "vertex-claude": "anthropic", "bedrock": "boto3",
       "ollama": "ollama", "cohere": "cohere"}


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", "--no-report", "--sequences", str(ROOT / "sequences"), "-j", "2", *args],
                              catch_exceptions=False)


@pytest.mark.parametrize("surface", [s for s in ANSWERED if s in CUT])
def test_a_loop_on_the_surfaces_client_gets_its_answer_and_its_cut_judged(surface: str) -> None:
    pytest.importorskip(SDK[surface])
    dialect, answer, answered = ANSWERED[surface]
    cut, was_cut = CUT[surface]
    r = check("--dialect", dialect, "-s", answer, "-s", cut, "--", sys.executable, str(PROGRAM), surface)
    assert f"| {answer} | {answered} |" in r.stdout, r.stdout
    assert f"| {cut} | {was_cut} |" in r.stdout, r.stdout
    assert "2 of 2 sequence(s) meet their requirements" in r.stdout, r.stdout
    assert r.exit_code == 0


@pytest.mark.parametrize("surface", ["vertex-claude", "bedrock"])
def test_claude_on_a_gateway_is_judged_as_on_messages_a_call_run_from_a_cut_reply_breaks(surface: str) -> None:
    pytest.importorskip(SDK[surface])
    dialect, answer, answered = ANSWERED[surface]
    r = check("--dialect", dialect, *(a for s in CLAUDE for a in ("-s", s)), "--", sys.executable, str(PROGRAM),
              surface)
    assert f"| {answer} | {answered} |" in r.stdout, r.stdout
    assert f"{CLAUDE[1]}: ran a tool call from a cut-off reply (breaks no_truncated_runs at step 1)" in r.stdout, \
        r.stdout
    assert "1 of 2 sequence(s) meet their requirements, 1 do not (0 capped, 0 crashed" in r.stdout, r.stdout
    assert r.exit_code == 1
