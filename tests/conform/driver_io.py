"""What the Python test drivers share: SPEC in, a client on the bench's server, RESULT out.

A driver is run as ``python DRIVER SPEC RESULT`` (bench/conform/runner.py); SPEC names the server,
the model, the prompt and the tools the sequence offers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import openai


def start() -> tuple[dict[str, Any], openai.OpenAI, list[Any], list[Any]]:
    """SPEC, a client on its server (no retries of its own), the messages so far (the prompt) and the
    tools, offered with every request as a real loop does."""
    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    client = openai.OpenAI(base_url=spec["base_url"], api_key="k", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": spec["prompt"]}]
    tools: list[Any] = [{"type": "function", "function": {"name": t["name"], "parameters": {"type": "object"}}}
                        for t in spec["tools"]]
    return spec, client, messages, tools


def take_reply(messages: list[Any], reply: Any, answer: Callable[[str], str]) -> bool:
    """Add `reply` to `messages` and, when it carries tool calls, a result for each (``answer(name)``);
    whether it carried any."""
    messages.append(reply.model_dump(exclude_none=True))
    for call in reply.tool_calls or ():
        messages.append({"role": "tool", "tool_call_id": call.id, "content": answer(call.function.name)})
    return bool(reply.tool_calls)


def finish(result: dict[str, Any]) -> int:
    """Write RESULT; the driver's exit status."""
    with open(sys.argv[2], encoding="utf-8", mode="w") as fh:
        json.dump(result, fh)
    return 0
