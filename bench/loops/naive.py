"""The loop most tutorials write, as the failing example beside :mod:`bench.loops.reference`.

It asks, runs the tool calls if there are any, and returns the text as the answer as soon as a
reply carries none. It never looks at the finish reason or at the body, so a truncated, filtered,
empty or dropped-call reply is reported as success, and it has no cap. An error reply ends it
(the client raised), but a stream cut before its finish: the official clients' stream iterators
just end there, so the tutorial loop takes what arrived as the reply.
``stopbench check -c naive="python -m bench.loops naive"`` shows where it breaks the catalogue's
requirements.
"""

from __future__ import annotations

import json

from bench.loops.clients import Conversation, Result
from bench.loops.reference import Execute, LoopResult, Step


def run_naive(conv: Conversation, execute: Execute) -> LoopResult:
    """Loop until a reply has no tool calls; that reply is the answer."""
    steps: list[Step] = []
    while True:
        reply = conv.ask()
        if reply.error is not None and reply.error.kind != "stream_cut":
            steps.append(Step("stop", "raised", reason="error", ok=False))
            return LoopResult(False, "error", reply.error.message, steps)
        if not reply.calls:
            steps.append(Step("stop", "no-calls", reason="no_tool_calls", ok=True))
            return LoopResult(True, "no_tool_calls", reply.content or "", steps)
        steps.append(Step("continue", "calls", run=tuple(range(len(reply.calls)))))
        conv.add_reply(reply)
        results = []
        for call in reply.calls:
            try:
                results.append(Result(call, execute(call.name, json.loads(call.arguments or "{}"))))
            except Exception as exc:  # bad arguments or a failing tool: tell the model
                results.append(Result(call, f"Error: {exc}", is_error=True))
        conv.add_results(results)
