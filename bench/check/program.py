"""What a program under ``stopbench check`` is told, and what it tells back.

The program runs its own loop with its own tools against the replay server. It learns where the
server is and what to do from environment variables (:func:`program_env`), and it may say how its
loop ended in a small JSON file (:func:`read_result`); without that file its exit status decides
(0: the loop reported success).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.engine.model import Sequence
from bench.serve.tools import tool_schemas
from bench.wires.registry import wire, wires

PROMPT = "stopbench check: do the task with the tools you have, then answer in one sentence."
"""The task every program is given (STOPBENCH_PROMPT); the served turns do not depend on it."""

DUMMY_KEY = "sk-stopbench-not-a-real-key"


def default_model(dialect: str) -> str:
    """STOPBENCH_MODEL for a sequence of `dialect`: its wire's :attr:`~bench.wires.base.Wire.default_model`
    (the served turns do not depend on it)."""
    return wire(dialect).default_model


def steers(sequence: Sequence) -> dict[str, str]:
    """``{turn index: text}`` for the turns during which a user message arrived (the steering case)."""
    return {str(i): t.steer for i, t in enumerate(sequence.turns) if t.steer}


def tools_url(url: str) -> str:
    """The replay server's tool endpoint (``GET`` lists the run's tools, ``POST .../<name>`` runs one)."""
    return f"{url}/_stopbench/tools"


def program_env(sequence: Sequence, url: str, result: Path, base: Mapping[str, str] | None = None,
                prompt: str = PROMPT, mcp_url: str | None = None) -> dict[str, str]:
    """The environment of one run: `base` (the caller's environment) plus the variables real clients
    read to find the server, and the STOPBENCH ones (docs/check.md has the table).

    `url` is the server's root (``http://127.0.0.1:PORT``); each wire says what its provider's clients
    read (:attr:`~bench.wires.base.Wire.client_env`, with dummy keys), and which inherited variables would
    send them elsewhere (:attr:`~bench.wires.base.Wire.client_env_removed`, removed). `mcp_url` is the
    streamable-HTTP MCP server of the run's worker (``STOPBENCH_MCP_URL``); without one the variable is
    removed.
    """
    from bench.check.mcp import stdio_command

    env = dict(os.environ if base is None else base)
    for w in wires():
        env.update(w.env(url, DUMMY_KEY))
    env.update({
        "STOPBENCH_PROMPT": prompt,
        "STOPBENCH_TOOLS": json.dumps(tool_schemas(sequence), sort_keys=True),
        "STOPBENCH_TOOLS_URL": tools_url(url),
        "STOPBENCH_MCP_COMMAND": json.dumps(stdio_command(tools_url(url))),
        "STOPBENCH_DIALECT": sequence.dialect,
        "STOPBENCH_MODEL": default_model(sequence.dialect),
        "STOPBENCH_RESULT": str(result),
        "STOPBENCH_SEQUENCE": sequence.id,
        "STOPBENCH_STEERS": json.dumps(steers(sequence), sort_keys=True),
    })
    for name in ("STOPBENCH_MCP_URL", *(n for w in wires() for n in w.client_env_removed)):
        env.pop(name, None)
    if mcp_url is not None:
        env["STOPBENCH_MCP_URL"] = mcp_url
    no_proxy = env.get("NO_PROXY", "")
    env["NO_PROXY"] = ",".join(x for x in ("127.0.0.1", "localhost", no_proxy) if x)
    return env


CLOCK_DIR = Path(__file__).resolve().parents[2] / "conformance" / "clock"
"""The virtual clock of ``stopbench conform`` (:mod:`bench.conform.clock`), in a source checkout."""


def virtual_clock_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` plus what puts a program's Python and Node processes on the virtual clock: the clock's
    sitecustomize first on PYTHONPATH, its preload in NODE_OPTIONS (a sleep of a second or more
    returns at once while the process's clock moves on by the whole sleep, so a framework's retry
    back-off takes no real time and its elapsed-time budgets see what a real run would). Native
    binaries sleep for real. Raises FileNotFoundError without the clock's files (an installed wheel)."""
    site, preload = CLOCK_DIR / "python", CLOCK_DIR / "virtual_clock.mjs"
    for needed in (site / "sitecustomize.py", preload):
        if not needed.is_file():
            raise FileNotFoundError(2, "the virtual clock needs a source checkout of stopbench", str(needed))
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(site), env.get("PYTHONPATH", "")) if x)
    env["NODE_OPTIONS"] = " ".join(x for x in (env.get("NODE_OPTIONS", ""), f"--import {preload}") if x)
    return env


@dataclass(frozen=True, slots=True)
class ProgramResult:
    """How the program says its loop ended: success or not, a reason, the final text."""

    ok: bool
    reason: str
    final: str = ""


class BadResult(ValueError):
    """The result file is there but is not ``{"ok": bool, "reason": str, "final": str}``."""


def read_result(path: Path) -> ProgramResult | None:
    """The program's result file, or None when it wrote none. Raises :class:`BadResult` (one line)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadResult(f"STOPBENCH_RESULT is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadResult("STOPBENCH_RESULT: expected a JSON object")
    ok, reason, final = data.get("ok"), data.get("reason", ""), data.get("final", "")
    if not isinstance(ok, bool):
        raise BadResult(f"STOPBENCH_RESULT: ok: expected true or false, got {ok!r}")
    if not isinstance(reason, str):
        raise BadResult(f"STOPBENCH_RESULT: reason: expected a string, got {reason!r}")
    if not isinstance(final, str):
        raise BadResult(f"STOPBENCH_RESULT: final: expected a string, got {type(final).__name__}")
    return ProgramResult(ok, reason or ("success" if ok else "failure"), final)
