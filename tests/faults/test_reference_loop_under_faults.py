"""The reference library loop (``python -m bench.loops reference``) under the fault presets: it waits
what Retry-After says before it resends, resends a stream cut before its finish, and resends a
garbled frame instead of crashing, on every wire it has a client for; and it reads the provider's
retry hints (``bench.wires.client.retry_after``) and bounds its waits."""

from __future__ import annotations

import sys
from email.utils import formatdate
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.catalogue.document import dump_sequence
from bench.cli import cli
from bench.loops.clients import Reply, ReplyError
from bench.loops.reference import BACKOFF_MAX, MAX_RESENDS, MAX_WAIT, Policy, backoff
from bench.wires.client import retry_after
from tests.check.conftest import small_sequence
from tests.helpers import ROOT

# a sequence that requires ok: true on each wire the library loop has a client for
ONE_PER_WIRE = ("chat-stop-with-tool-calls", "anthropic-tool-use-rounds", "responses-end-turn-false",
                "bedrock-tool-use-rounds")


def check_reference(preset: str, sequences: tuple[str, ...] = ONE_PER_WIRE) -> str:
    args = ["check", "--sequences", str(ROOT / "sequences"), "--faults", preset, "--no-report", "-j", "2"]
    for sid in sequences:
        args += ["-s", sid]
    r = CliRunner().invoke(cli, [*args, "--name", "reference", "--", sys.executable, "-m", "bench.loops", "reference"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.slow  # four runs of the program, each waiting out a 1 s Retry-After
@pytest.mark.parametrize("preset", ["rate-limited", "overloaded"])
def test_the_reference_loop_waits_out_retry_after_before_it_resends(preset: str) -> None:
    out = check_reference(preset)
    assert f"reference@live: {len(ONE_PER_WIRE)} of {len(ONE_PER_WIRE)} sequence(s) meet their requirements" in out
    assert "asked again before Retry-After was over" not in out
    assert out.count("Retry-After: 1; asked again after 1.") == len(ONE_PER_WIRE)


@pytest.mark.slow  # four runs of the program
def test_a_stream_cut_before_its_finish_is_resent_not_taken_as_an_unknown_finish() -> None:
    out = check_reference("cut-after-3")
    assert f"reference@live: {len(ONE_PER_WIRE)} of {len(ONE_PER_WIRE)} sequence(s) meet their requirements" in out
    assert "unknown_finish" not in out


@pytest.mark.slow  # two runs of the program
@pytest.mark.parametrize(("dialect", "frames"), [("openai-chat", 3), ("bedrock-converse", 4)])
def test_a_stream_cut_after_its_finish_but_before_its_usage_is_resent_not_taken_as_the_answer(
        tmp_path: Path, dialect: str, frames: int) -> None:
    # a short answer whose first `frames` frames carry the text and the finish: what is lost is the usage
    # (Chat's usage chunk and [DONE]; Bedrock's metadata event), which the loop reads for a truncation the
    # finish hides; a stream without it ended early
    seq = small_sequence("short-answer", [{"finish": "stop", "content": "Done."}], require={"ok": True},
                         dialect=dialect)
    dump_sequence(seq, tmp_path / "sequences" / "short-answer.yaml")
    recipe = tmp_path / "cut.yaml"
    recipe.write_text(f"faults:\n  - {{fault: truncate, after_frames: {frames}, requests: [1]}}\n")
    r = CliRunner().invoke(cli, ["check", "--sequences", str(tmp_path / "sequences"), "--faults", str(recipe),
                                 "--no-report", "--name", "reference", "--", sys.executable, "-m", "bench.loops",
                                 "reference"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "only the end marker was lost" not in r.stdout  # the fault broke the answer, and the loop resent it
    assert "stop:no_tool_calls@2 ok [] resends=1" in r.stdout


@pytest.mark.slow  # four runs of the program
def test_a_garbled_frame_is_resent_and_never_crashes_the_loop() -> None:
    out = check_reference("corrupt-frame")
    assert f"reference@live: {len(ONE_PER_WIRE)} of {len(ONE_PER_WIRE)} sequence(s) meet their requirements" in out
    assert "crashed" not in out.replace("0 crashed", "")


@pytest.mark.slow  # four runs of the program
def test_a_connection_broken_mid_stream_is_resent_and_never_crashes_the_loop() -> None:
    # the official clients' recent releases stream on httpx2 and let its RemoteProtocolError through
    out = check_reference("disconnect-after-3")
    assert f"reference@live: {len(ONE_PER_WIRE)} of {len(ONE_PER_WIRE)} sequence(s) meet their requirements" in out
    assert "exit 1" not in out


@pytest.mark.parametrize(("headers", "body", "seconds"), [
    ({"retry-after-ms": "1500", "retry-after": "9"}, None, 1.5),     # OpenAI's millisecond hint comes first
    ({"Retry-After": "2"}, None, 2.0),                                 # seconds (OpenAI, Anthropic)
    ({"retry-after": formatdate(1_000_030, usegmt=True)}, None, 30.0),  # an HTTP date
    ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, None, 360.0),
    ({"x-ratelimit-reset-requests": "20ms"}, None, 0.02),
    ({}, {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.5s"}]}, 0.5),
    ({"x-amzn-ErrorType": "ThrottlingException"}, {"message": "Too many requests"}, None),  # Bedrock: no hint
    ({"retry-after": "soon"}, None, None),
])
def test_the_provider_s_retry_hint_is_read(headers: dict[str, str], body: object, seconds: float | None) -> None:
    got = retry_after(headers, body, now=1_000_000)
    assert got == (None if seconds is None else pytest.approx(seconds))


def error(kind: str = "rate_limit", status: int | None = 429, wait: float | None = None) -> Reply:
    return Reply(None, "error", error=ReplyError(kind, status, "", "", wait))  # type: ignore[arg-type]


def test_a_resend_waits_the_hint_and_without_one_backs_off_within_its_bound() -> None:
    policy = Policy()
    assert policy.decide(error(wait=1.0)).wait == 1.0
    waits = [policy.decide(error("stream_cut", None)).wait for _ in range(MAX_RESENDS - 1)]
    assert [w > 0 for w in waits] == [True] * len(waits)
    assert all(backoff(n) <= BACKOFF_MAX for n in range(1, 20))
    assert policy.decide(error()).action == "stop"  # the resends are bounded too


def test_a_wait_longer_than_the_bound_is_model_error_not_an_early_resend() -> None:
    step = Policy().decide(error(wait=MAX_WAIT + 1))
    assert (step.action, step.reason) == ("stop", "model_error")
