"""``stopbench check --dialect ollama|cohere -- python <prog>``: a user's loop on the provider's official
client finds the replay server through the variables that client reads (OLLAMA_HOST; CO_API_URL and
CO_API_KEY), and so does the reference loop (``python -m bench.loops reference``) on its own clients."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from tests.helpers import ROOT

HERE = Path(__file__).parent
RUNS = {"ollama": ("ollama-tool-rounds", "ollama-length-text-cut", "stop:stop@3", "stop:length@2"),
        "cohere": ("cohere-tool-rounds", "cohere-max-tokens-text-cut", "stop:COMPLETE@3", "stop:MAX_TOKENS@2")}


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", "--no-report", "--sequences", str(ROOT / "sequences"), *args],
                              catch_exceptions=False)


@pytest.mark.parametrize("dialect", list(RUNS))
def test_a_loop_on_the_official_client_runs_under_check_on_its_dialect(dialect: str) -> None:
    pytest.importorskip(dialect)
    answer, cut, answered, was_cut = RUNS[dialect]
    r = check("--dialect", dialect, "-s", answer, "-s", cut, "--", sys.executable, str(HERE / f"{dialect}_loop.py"))
    assert f"| {answer} | {answered} ok [read_file ×2] |" in r.stdout, r.stdout
    assert f"| {cut} | {was_cut} not-ok [read_file] |" in r.stdout, r.stdout
    assert r.exit_code == 0


@pytest.mark.parametrize("dialect", list(RUNS))
def test_the_reference_loop_runs_under_check_on_its_own_client_of_the_wire(dialect: str) -> None:
    answer, cut, _, _ = RUNS[dialect]
    r = check("--dialect", dialect, "-s", answer, "-s", cut, "--", sys.executable, "-m", "bench.loops", "reference")
    assert f"| {answer} | stop:no_tool_calls@3 ok [read_file ×2] |" in r.stdout, r.stdout
    assert f"| {cut} | stop:length@2 not-ok [read_file] |" in r.stdout, r.stdout
    assert r.exit_code == 0
