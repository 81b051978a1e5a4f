"""strands-agents' default model provider, ``BedrockModel`` (ConverseStream through boto3), run against
the server on every Bedrock sequence, when the scorecard's strands venv is installed
(``make framework-install FRAMEWORK=strands_agents``; FRAMEWORK_DIR, default /tmp/stopbench-frameworks). CI runs
it with strands installed (``make strands-bedrock-ci``).

What strands does on each sequence is its own business; what this pins is that it reads the wire as
Bedrock: no run ends on a parse error of the event stream, the normal sequence ends with its answer
after its tool rounds, and a stop reason reaches strands' event loop verbatim."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bench.catalogue.load import load_catalogue
from bench.check.program import virtual_clock_env
from bench.engine.model import Sequence
from tests.serve.serving import serving

ROOT = Path(__file__).resolve().parents[2]
PYTHON = Path(os.environ.get("FRAMEWORK_DIR", "/tmp/stopbench-frameworks")) / "strands_agents" / "bin" / "python"
RUN = Path(__file__).with_name("strands_bedrock_run.py")
BEDROCK = sorted((s for s in load_catalogue(ROOT / "sequences").sequences if s.dialect == "bedrock-converse"),
                 key=lambda s: s.id)
# what a client raises when it cannot read the answer as Bedrock (not a decision of the loop)
UNREADABLE = {"ChecksumMismatch", "InvalidHeadersLength", "InvalidPayloadLength", "ResponseParserError",
              "JSONDecodeError", "KeyError", "TypeError", "AttributeError", "EndpointConnectionError"}

# `make strands-bedrock-ci` (what .ci/run runs once strands is installed) sets STOPBENCH_REQUIRE_STRANDS: there a
# missing strands is a failure, not a skip
if os.environ.get("STOPBENCH_REQUIRE_STRANDS") and not PYTHON.exists():
    raise RuntimeError(f"STOPBENCH_REQUIRE_STRANDS is set but strands is not installed ({PYTHON})")
pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason=f"strands is not installed ({PYTHON})")


def run_strands(seq: Sequence) -> tuple[dict[str, object], int]:
    with serving(seq) as srv:
        # on conform's virtual clock: strands' own back-off on a throttled model (4 s doubling, 6 attempts)
        # takes no real time
        env = virtual_clock_env({"PATH": os.environ.get("PATH", ""), "AWS_ACCESS_KEY_ID": "stopbench",
                                 "AWS_SECRET_ACCESS_KEY": "stopbench", "AWS_EC2_METADATA_DISABLED": "true"})
        done = subprocess.run([str(PYTHON), str(RUN), srv.base_url.removesuffix("/v1")], capture_output=True,
                              text=True, timeout=120, check=False, env=env)
        requests = sum(1 for r in srv.session.records() if r.kind != "side")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), requests


@pytest.mark.parametrize("seq", BEDROCK, ids=[s.id for s in BEDROCK])
def test_strands_bedrock_model_reads_every_bedrock_sequence_as_bedrock(seq: Sequence) -> None:
    ended, requests = run_strands(seq)
    assert ended.get("raised") not in UNREADABLE, ended
    assert requests >= 1
    if "stop_reason" in ended:  # the stopReason strands ended on is one the server sent (or its end_turn default)
        assert ended["stop_reason"] in {t.finish_raw for t in seq.turns} | {"end_turn"}


def test_strands_bedrock_model_runs_the_tool_rounds_and_ends_with_the_answer() -> None:
    seq = next(s for s in BEDROCK if s.id == "bedrock-tool-use-rounds")
    ended, requests = run_strands(seq)
    assert ended == {"stop_reason": "end_turn", "text": seq.turns[-1].content}
    assert requests == len(seq.turns)
