"""Small builders shared by the tests: sequences and predicates without YAML files."""

from __future__ import annotations

import signal
from pathlib import Path

from bench.engine.model import Requirement, Sequence, ToolCall, Turn

ROOT = Path(__file__).resolve().parent.parent


def ctrl_c_as_in_a_terminal() -> None:
    """A Popen ``preexec_fn`` for the tests that press Ctrl-C: SIGINT back to its default in the child.

    A suite started as a background job of a non-interactive shell (``make test &``) inherits SIGINT
    ignored, and a Python started with SIGINT ignored never raises KeyboardInterrupt: the test would
    then test how it was launched, not the bench's Ctrl-C handling (seen in a clean-clone run)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def call(name: str, i: int = 0, arguments: str = "{}") -> ToolCall:
    return ToolCall(id=f"call_{name}_{i}", name=name, arguments=arguments)


def seq(*turns: Turn, then: str = "end", require: Requirement | None = None, sid: str = "s") -> Sequence:
    return Sequence(id=sid, title=sid, kind="constructed", dialect="openai-chat", source="test",
                    turns=tuple(turns), then=then, require=require or Requirement())  # type: ignore[arg-type]


def tools(*names: str) -> Turn:
    return Turn(finish="tool_calls", finish_raw="tool_calls", tool_calls=tuple(call(n, i) for i, n in enumerate(names)))


def answer(text: str = "done") -> Turn:
    return Turn(finish="stop", finish_raw="stop", content=text)


def truncated() -> Turn:
    return Turn(finish="length", finish_raw="length")


def call_then_answer_yaml(title: str, name: str, arguments: str, answer: str = "done",
                          source: str = "tests/conform") -> str:
    """A sequence file's text (Chat wire): one call of `name` with `arguments` (JSON), then the
    answer `answer`."""
    return f"""title: {title}
kind: constructed
dialect: openai-chat
source: {source}
then: end
turns:
  - finish: tool_calls
    tool_calls:
      - {{id: a, name: {name}, arguments: '{arguments}'}}
  - finish: stop
    content: {answer}
"""
