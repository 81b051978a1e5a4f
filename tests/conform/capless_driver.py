"""A driver for tests, run through Driver.interpreter: a loop with no cap of its own.

It runs every tool call until a reply has none, but like the Node drivers of loops without a cap
it gives up one request past SPEC's safety_cap and reports reason "capped". An error reply is sent
again unchanged (a resend); like a loop whose own retries run on after the driver's cap (OpenCode's
back-off), it makes three requests past the cap when they are resends. Its final text is the SPEC it was given
(minus the base URL), so a test can see what the runner passed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import openai
from driver_io import finish, start


def main() -> int:
    spec, client, messages, tools = start()
    shown = {k: v for k, v in spec.items() if k != "base_url"}
    result: dict[str, Any] = {"ok": True, "reason": "done", "final": json.dumps(shown), "error": None}
    n = 0
    while True:
        n += 1
        try:
            reply = client.chat.completions.create(model=spec["model"], messages=messages,
                                                   tools=tools).choices[0].message
        except openai.APIStatusError:
            reply = None  # sent again unchanged below
        if reply is not None:
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                break
        if n > spec["safety_cap"] + (2 if reply is None else 0):
            result.update(ok=None, reason="capped")
            break
        for call in reply.tool_calls if reply is not None else ():
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"{spec['ok_marker']} x"})
    return finish(result)


if __name__ == "__main__":
    sys.exit(main())
