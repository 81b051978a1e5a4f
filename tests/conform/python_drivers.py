"""What the conformance tests' own drivers share: a driver that is a Python script of tests/conform run by
this interpreter, and the port of a loop that runs every call and stops at the first answer."""

from __future__ import annotations

import sys

from bench import Continue, Decision, State, Stop, Turn, predicate
from bench.conform.runner import Driver


def python_driver(name: str, port: str, script: str) -> Driver:
    """The driver `name` whose loop is `script` (a path from the repository's root) run by this
    interpreter, compared with the predicate `port`, on the Chat wire, with nothing to install."""
    return Driver(name, port, script, "openai-chat", "nothing to install", interpreter=sys.executable)


@predicate(reasons=["done"], rules={"calls": "runs every call", "answer": "no calls"})
def runs_calls(turn: Turn, state: State) -> Decision:
    """Run the calls of a turn that has some; stop with success at the first turn without."""
    return Continue("calls") if turn.tool_calls else Stop("done", ok=True, rule="answer")
