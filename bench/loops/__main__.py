"""``stopbench loop reference|naive`` (or ``python -m bench.loops reference|naive``): run a loop as a
program under ``stopbench check``.

It reads the STOPBENCH_* variables (bench/check/program.py), talks to the server through the
official client of the sequence's wire (:meth:`bench.wires.base.Wire.loop_client`; a sequence of a
wire the loops have no client for runs on the first wire that has one, Chat Completions), runs stub
tools that only say they ran, and writes STOPBENCH_RESULT.

The ``openai`` and ``anthropic`` clients are the ``loops`` extra (``pip install 'stopbench[loops]'``): without
the one a sequence needs, the loop says so in one line and exits 2 (:data:`NEEDS_EXTRA`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from bench.loops.clients import APIS, Api, conversation
from bench.loops.naive import run_naive
from bench.loops.reference import run_loop
from bench.wires.registry import wire

LOOPS = ("reference", "naive")
NEEDS_EXTRA = 2
"""The exit status when a client the loop needs is not installed."""
EXTRA_CLIENTS = frozenset({"openai", "anthropic"})
"""The top-level modules of the ``loops`` extra."""


def _api(dialect: str) -> Api:
    """The wire the loop talks on for a sequence of `dialect`: its own when the reference loop has a
    client for it, else the first wire that has one."""
    return dialect if dialect in APIS else APIS[0]


def missing_client(loop: str, exc: ModuleNotFoundError) -> str | None:
    """The one line for `loop` failing to import a client of the ``loops`` extra, or None."""
    missing = (exc.name or "").partition(".")[0]
    if missing not in EXTRA_CLIENTS:
        return None
    return (f"stopbench loop {loop} needs the loops extra ({missing} is not installed): "
            f"pip install 'stopbench[loops]' (under pipx: pipx inject stopbench openai anthropic)")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in LOOPS:
        print(f"usage: stopbench loop {'|'.join(LOOPS)}", file=sys.stderr)
        return 2
    try:
        return run(argv[0])
    except ModuleNotFoundError as exc:
        line = missing_client(argv[0], exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return NEEDS_EXTRA


def _client(api: Api) -> Any:
    """The official client for `api`, pointed by its own variables at the replay server."""
    return wire(api).loop_client(os.environ)


def run(loop: str) -> int:
    """Run `loop` once on the sequence the STOPBENCH_* variables describe; 0 when it ended ok."""
    api = _api(os.environ.get("STOPBENCH_DIALECT", ""))
    client = _client(api)
    tools = json.loads(os.environ.get("STOPBENCH_TOOLS", "[]"))
    steers: dict[str, str] = json.loads(os.environ.get("STOPBENCH_STEERS", "{}"))
    conv = conversation(api, client, os.environ.get("STOPBENCH_MODEL", "stopbench"),
                        os.environ.get("STOPBENCH_PROMPT", "do the task"), tools)

    def execute(name: str, arguments: Any) -> str:
        return f"ok: {name} ran"

    if loop == "naive":
        result = run_naive(conv, execute)
    else:
        result = run_loop(conv, execute, steer=lambda n: steers.get(str(n)))
    out = os.environ.get("STOPBENCH_RESULT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"ok": result.ok, "reason": result.reason, "final": result.final}, fh)
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
