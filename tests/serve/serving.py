"""Shared helpers: sequences built in code and a replay server on an ephemeral loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.catalogue.load import parse_sequence
from bench.engine.model import Sequence
from bench.serve import BackgroundServer, Session


def make_sequence(turns: list[dict[str, Any]], dialect: str = "openai-chat", then: str = "end",
                  sid: str = "serve-test") -> Sequence:
    return parse_sequence({"title": "served in a test", "kind": "constructed", "dialect": dialect,
                           "source": "tests/serve", "then": then, "turns": turns}, sid)


@contextmanager
def serving(sequence: Sequence, **options: Any) -> Iterator[BackgroundServer]:
    with BackgroundServer(Session(sequence, **options)) as srv:
        yield srv


# a real client offers its tools with every request (a request offering none is answered in text)
TOOL = {"name": "read_file", "description": "read a file", "parameters": {"type": "object", "properties": {}}}
CHAT_TOOLS: list[Any] = [{"type": "function", "function": TOOL}]
CLAUDE_TOOLS: list[Any] = [{"name": "read_file", "description": "read a file", "input_schema": TOOL["parameters"]}]
RESPONSES_TOOLS: list[Any] = [{"type": "function", **TOOL}]
GEMINI_TOOLS: list[Any] = [{"functionDeclarations": [TOOL]}]
