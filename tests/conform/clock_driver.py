"""A driver for tests: a loop with a retry back-off and an elapsed-time budget, on the openai client.

On an API error it waits (1 s, then 2 s, 4 s, ...) and tries again, unless the wait would end past
its budget of 6 s since the first request, when it gives up (reason ``gave_up``): how many requests
it makes depends on what its clock says, so it shows whether a virtual clock is faithful. The
waits go through ``time.sleep`` and ``asyncio.sleep`` by turns (RESULT's ``seen`` lists how long
each wait lasted by the clock around it: ``time.perf_counter``, or the asyncio loop's ``time()``);
the budget is read from ``time.monotonic``, ``time.time`` and ``time.perf_counter`` by turns. A sequence
calling a tool named ``wait<N>`` makes it sleep N seconds (by ``time.sleep``) before its first
request. Tool calls are run (answering "<ok_marker> <name>") until a reply has none.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import openai
from driver_io import finish, start, take_reply

BUDGET = 6.0


async def _async_wait(seconds: float) -> float:
    """Sleep on an asyncio loop; return the seconds the loop's own clock saw pass."""
    loop = asyncio.get_running_loop()
    before = loop.time()
    await asyncio.sleep(seconds)
    return loop.time() - before


def _wait(seconds: float, turn: int) -> float:
    """Sleep by `time.sleep` or `asyncio.sleep` by turns; return the seconds its clock saw pass."""
    if turn % 2:
        return asyncio.run(_async_wait(seconds))
    before = time.perf_counter()
    time.sleep(seconds)
    return time.perf_counter() - before


def main() -> int:
    spec, client, messages, tools = start()
    result: dict[str, Any] = {"ok": True, "reason": "done", "final": None, "error": None, "seen": []}
    clocks = (time.monotonic, time.time, time.perf_counter)
    started = [clock() for clock in clocks]
    delay, waits = 1.0, 0
    for tool in spec["tools"]:  # a tool named wait<N>: sleep N seconds before the first request
        if tool["name"].startswith("wait"):
            result["seen"].append(round(_wait(float(tool["name"][4:]), 0), 1))
    for _ in range(20):
        try:
            reply = client.chat.completions.create(model=spec["model"], messages=messages,
                                                   tools=tools).choices[0].message
        except openai.APIError as exc:
            elapsed = clocks[waits % 3]() - started[waits % 3]
            if elapsed + delay > BUDGET:
                result.update(ok=False, reason="gave_up", error=str(exc))
                break
            result["seen"].append(round(_wait(delay, waits), 1))
            delay, waits = delay * 2, waits + 1
            continue
        if not take_reply(messages, reply, lambda name: f"{spec['ok_marker']} {name}"):
            result["final"] = reply.content
            break
    return finish(result)


if __name__ == "__main__":
    sys.exit(main())
