"""A small catalogue written into a temporary folder, and the fake loop program."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.catalogue.document import dump_sequence
from bench.catalogue.load import parse_sequence
from bench.engine.model import Sequence

FAKE = Path(__file__).parent / "programs" / "fake_loop.py"


def fake(*args: str) -> list[str]:
    """The command line of the fake loop with one behaviour."""
    return [sys.executable, str(FAKE), *args]


def small_sequence(sid: str, turns: list[dict[str, object]], then: str = "end",
                   require: dict[str, object] | None = None, dialect: str = "openai-chat") -> Sequence:
    data: dict[str, object] = {"title": sid, "kind": "constructed", "dialect": dialect,
                               "source": "tests/check: a small sequence", "then": then, "turns": turns}
    if require:
        data["require"] = require
    return parse_sequence(data, sid)


ANSWER = {"finish": "stop", "content": "Done."}
CALL = {"finish": "tool_calls", "content": None,
        "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": '{"path": "a.py", "limit": 3}'}]}


@pytest.fixture
def catalogue(tmp_path: Path) -> Path:
    folder = tmp_path / "sequences"
    for seq in (small_sequence("answer-once", [ANSWER], require={"ok": True}),
                small_sequence("answer-repeat", [ANSWER], then="repeat", require={"stops_within": 3}),
                small_sequence("truncated", [{"finish": "length", "content": "The answer is"}],
                               require={"ok": False}),
                small_sequence("call-then-answer", [CALL, ANSWER], require={"ok": True})):
        dump_sequence(seq, folder / f"{seq.id}.yaml")
    return folder
