"""conformance/drivers/codex_driver.mjs against a stand-in for `codex app-server`
(tests/conform/fake_codex_app_server.py): what the driver itself decides about steers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.conform.runner import DRIVERS, run_conformance
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
BIN = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def fake_codex(prefix: Path) -> str:
    """An npm prefix whose codex binary is the stand-in."""
    binary = prefix / BIN
    binary.parent.mkdir(parents=True)
    os.symlink(ROOT / "tests/conform/fake_codex_app_server.py", binary)
    return str(prefix)


def test_a_steer_left_when_codex_failed_the_turn_starts_no_new_turn(tmp_path: Path) -> None:
    # responses-incomplete-steered: Codex fails the turn on "incomplete/steered" before the driver's poll
    # delivers the steer; a new turn carrying it would be the driver's decision, read as a remind
    seq = make_sequence([{"finish": "unknown", "finish_raw": "incomplete/steered", "content": "Two tests fail. I",
                          "steer": "just tell me which tests fail"},
                         {"finish": "stop", "finish_raw": "completed", "content": "test_a and test_b"}],
                        dialect="openai-responses", sid="steered-then-failed")
    [res] = run_conformance(DRIVERS["codex"], [seq], fake_codex(tmp_path), root=ROOT, timeout=60)
    assert res.result["reason"] == "error", res.result
    assert [s.decision.action for s in res.observed.steps] == ["stop"]


def test_a_steer_left_when_codex_completed_the_turn_starts_a_new_turn_with_it(tmp_path: Path) -> None:
    # chat-steer-mid-run: the turn completed before the steer was delivered; the new turn carries it
    seq = make_sequence([{"finish": "stop", "finish_raw": "completed", "content": "Added -v.",
                          "steer": "Also update the README."},
                         {"finish": "stop", "finish_raw": "completed", "content": "Updated the README."}],
                        dialect="openai-responses", sid="steered-after-completed")
    [res] = run_conformance(DRIVERS["codex"], [seq], fake_codex(tmp_path), root=ROOT, timeout=60)
    assert res.result["reason"] == "turn_complete", res.result
    assert len(res.observed.steps) == 2
