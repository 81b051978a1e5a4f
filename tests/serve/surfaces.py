"""Shared by the surface tests: the sequence chat-tool-rounds served in process, and what reaching its
end looks like from the server's side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.catalogue.load import load_sequence
from bench.engine.model import Sequence
from bench.serve import BackgroundServer

ROOT = Path(__file__).resolve().parents[2]
ROUNDS: Sequence = load_sequence(ROOT / "sequences" / "constructed" / "chat-tool-rounds.yaml")
"""Three tool rounds (read_file, edit_file, run_tests), then the answer."""
NAMES = ("read_file", "edit_file", "run_tests")
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
PROMPT = "fix the off-by-one in src/parse.py"
RESULT = "ok"
ANSWER = ROUNDS.turns[-1].content


def calls_served() -> list[list[str]]:
    """The names of each tool round's calls, as the sequence has them."""
    return [[c.name for c in t.tool_calls] for t in ROUNDS.turns if t.tool_calls]


def reached_the_end(srv: BackgroundServer, path_start: str) -> None:
    """The server saw the three rounds continued and the answer taken, on paths starting `path_start`."""
    steps = srv.session.observed()
    assert [(s.action, s.run) for s in steps] == [("continue", (0,))] * 3 + [("stop", ())]
    assert not srv.session.ended_running()
    paths = [r.path for r in srv.session.records() if r.kind == "model"]
    assert len(paths) == 4 and all(p.startswith(path_start) for p in paths), paths
