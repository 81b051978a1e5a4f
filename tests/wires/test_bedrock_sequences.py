"""Every Bedrock sequence of the catalogue served to the official client, boto3 ``bedrock-runtime``,
through ``converse`` and ``converse_stream``: each request gets its turn, as the sequence says it
(the stop reason verbatim, or none; the text; each toolUse with its id, name and raw input; an error
as the exception Bedrock names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

from bench.catalogue.load import load_catalogue  # noqa: E402
from bench.engine.model import Sequence, Turn  # noqa: E402
from bench.serve import BackgroundServer  # noqa: E402
from bench.wires.bedrock_converse import WIRE, render  # noqa: E402
from tests.serve.serving import serving  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BEDROCK = sorted((s for s in load_catalogue(ROOT / "sequences").sequences if s.dialect == "bedrock-converse"),
                 key=lambda s: s.id)
TOOLS = {"tools": [{"toolSpec": {"name": n, "description": n, "inputSchema": {"json": {"type": "object"}}}}
                   for n in ("read_file", "edit_file", "search_files", "bash")]}
GO = [{"role": "user", "content": [{"text": "go"}]}]


def client(srv: BackgroundServer) -> Any:
    return boto3.client("bedrock-runtime", endpoint_url=srv.base_url.removesuffix("/v1"), region_name="us-east-1",
                        aws_access_key_id="stopbench", aws_secret_access_key="stopbench",
                        config=Config(retries={"total_max_attempts": 1}))


def test_the_catalogue_has_a_bedrock_sequence_for_every_stop_reason() -> None:
    served = {t.finish_raw for s in BEDROCK for t in s.turns}
    assert set(WIRE.table) <= served


def _expect_error(turn: Turn, caught: ClientError) -> None:
    assert turn.error is not None
    status = render.http_status(turn.error)
    assert caught.response["Error"]["Code"] == render.exception_name(status)
    assert caught.response["Error"]["Message"] == turn.error.message


def _limit(seq: Sequence) -> dict[str, Any]:
    return {"maxTokens": seq.max_tokens} if seq.max_tokens is not None else {}


@pytest.mark.parametrize("seq", BEDROCK, ids=[s.id for s in BEDROCK])
def test_boto3_converse_is_served_every_turn_of_the_sequence(seq: Sequence) -> None:
    with serving(seq) as srv:
        bedrock = client(srv)
        for turn in seq.turns:
            try:
                got = bedrock.converse(modelId="us.anthropic.claude-sonnet-4:0", messages=GO, toolConfig=TOOLS,
                                       inferenceConfig=_limit(seq))
            except ClientError as caught:
                _expect_error(turn, caught)
                continue
            assert turn.error is None
            assert got.get("stopReason") == turn.finish_raw
            content = got["output"]["message"]["content"]
            assert "".join(b["text"] for b in content if "text" in b) == (turn.content or "")
            uses = [b["toolUse"] for b in content if "toolUse" in b]
            assert [(u["toolUseId"], u["name"]) for u in uses] == [(c.id, c.name) for c in turn.tool_calls]
            if turn.usage is not None and seq.max_tokens is not None:  # a cut at the limit: at the asked limit
                assert got["usage"]["outputTokens"] == turn.usage.output_tokens


@pytest.mark.parametrize("seq", BEDROCK, ids=[s.id for s in BEDROCK])
def test_boto3_converse_stream_is_served_every_turn_of_the_sequence(seq: Sequence) -> None:
    with serving(seq) as srv:
        bedrock = client(srv)
        for turn in seq.turns:
            try:
                events = list(bedrock.converse_stream(modelId="m", messages=GO, toolConfig=TOOLS,
                                                      inferenceConfig=_limit(seq))["stream"])
            except ClientError as caught:
                _expect_error(turn, caught)
                continue
            assert turn.error is None
            stops = [e["messageStop"]["stopReason"] for e in events if "messageStop" in e]
            assert stops == ([] if turn.finish_raw is None else [turn.finish_raw])
            deltas = [e["contentBlockDelta"]["delta"] for e in events if "contentBlockDelta" in e]
            assert "".join(d["text"] for d in deltas if "text" in d) == (turn.content or "")
            starts = [e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e]
            assert [(u["toolUseId"], u["name"]) for u in starts] == [(c.id, c.name) for c in turn.tool_calls]
            raw = "".join(d["toolUse"]["input"] for d in deltas if "toolUse" in d)
            assert raw == "".join(c.arguments for c in turn.tool_calls)
            if turn.tool_calls and turn.finish_raw is None:  # the cut input is not JSON: a client must not run it
                with pytest.raises(ValueError):
                    json.loads(raw)
