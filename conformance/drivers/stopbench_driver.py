"""What every Python conformance driver shares: SPEC in, stub tools, the safety cap, RESULT out.

A driver runs as ``PYTHON DRIVER.py SPEC.json RESULT.json`` with the Python of the loop's own venv
(bench/conform/runner.py), where only the loop and its dependencies are installed, never the
bench. So this module is plain standard library, and a driver imports it by name from its own
folder (Python puts a script's folder first on ``sys.path``): ``from stopbench_driver import ...``.
The name is long on purpose, so that it shadows no module of any loop.

What stays in each driver is what belongs to its loop: how the loop's tools are built from a stub
function, which model class speaks which wire, and how what the loop returns or raises becomes
RESULT's ``ok`` and ``reason`` (the reasons its port names).

SPEC (written by bench/conform/runner.py): ``{"base_url": "http://127.0.0.1:PORT/v1", "prompt":
"...", "model": "stopbench", "wire": "openai-chat" | "openai-responses" | "anthropic" | "gemini",
"ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...],
"safety_cap": 200, ...}``.

RESULT: ``{"ok": bool | None, "reason": str | None, "final": str | None, "error": str | None}``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

API_KEY = "sk-stopbench"
"""The key every client is given (the replay server accepts any)."""


@dataclass(frozen=True)
class StubTool:
    """One stub tool the driver registers: its name and the argument keys a call must carry."""

    name: str
    required: list[str]


@dataclass(frozen=True)
class Spec:
    """The SPEC file a driver is started with, read with the defaults every driver used."""

    raw: dict[str, Any]

    @property
    def base_url(self) -> str:
        """The server's OpenAI-style base URL, ending in /v1."""
        return str(self.raw["base_url"])

    @property
    def anthropic_base_url(self) -> str:
        """The base URL without its /v1: the Anthropic client appends /v1/messages itself."""
        base = self.base_url
        return base[: -len("/v1")] if base.endswith("/v1") else base

    @property
    def wire(self) -> str:
        return str(self.raw.get("wire", "openai-chat"))

    @property
    def model(self) -> str:
        return str(self.raw.get("model", "stopbench"))

    @property
    def prompt(self) -> str:
        return str(self.raw.get("prompt", "stopbench conformance run"))

    @property
    def marker(self) -> str:
        """What every stub result starts with; a result without it is an error result."""
        return str(self.raw.get("ok_marker", "STOPBENCH-OK"))

    @property
    def safety_cap(self) -> int:
        return int(self.raw.get("safety_cap", 200))

    @property
    def tools(self) -> list[StubTool]:
        return [StubTool(t["name"], list(t.get("required", []))) for t in self.raw.get("tools", [])]


def read_spec(path: str | Path) -> Spec:
    """The SPEC file at `path`."""
    return Spec(json.loads(Path(path).read_text(encoding="utf-8")))


def new_result() -> dict[str, Any]:
    """RESULT before the loop has run: every field unknown."""
    return {"ok": None, "reason": None, "final": None, "error": None}


def write_result(path: str | Path, result: dict[str, Any]) -> None:
    """Write RESULT as JSON, text kept as it is (not escaped to ASCII)."""
    Path(path).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


def described(exc: BaseException) -> str:
    """An exception as RESULT's `error` gives it: its class, then its message."""
    return f"{type(exc).__name__}: {exc}"


def answer(marker: str, name: str) -> str:
    """What a stub tool answers when its call binds: the ok marker and the tool's name."""
    return f"{marker} {name}"


def identifier(prefix: str, name: str) -> str:
    """`prefix` and a tool name made a Python identifier (every other character an underscore)."""
    return prefix + "".join(ch if ch.isalnum() else "_" for ch in name)


def stub_function(tool: StubTool, marker: str, *, any_other_keywords: bool) -> Callable[..., str]:
    """A function the loop makes a tool of: it answers `answer(marker, name)` and touches nothing.

    Its signature has the tool's `required` parameters, keyword-only and typed Any (a stub takes
    whatever JSON value a call sends), and, with `any_other_keywords`, ``**kwargs: Any``; so a loop
    that checks arguments against the signature (binding it, or a pydantic model of it) rejects a
    call without them, as it would for a real tool with a required parameter. Its name and
    docstring are set too, for loops that take a tool's name or description from them.
    """
    params = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=Any) for p in tool.required]
    annotations: dict[str, Any] = dict.fromkeys(tool.required, Any)
    if any_other_keywords:
        params.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation=Any))
        annotations["kwargs"] = Any

    def execute(**kwargs: Any) -> str:
        return answer(marker, tool.name)

    execute.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    execute.__annotations__ = {**annotations, "return": str}
    execute.__name__ = identifier("stub_", tool.name)
    execute.__doc__ = f"stopbench stub for {tool.name}"
    return execute


class Capped(BaseException):
    """A request past the bench's safety cap (BaseException: no retry loop catches it)."""


def count_requests(cap: int, amend: Callable[[Any, Any, Any], Any] | None = None) -> None:
    """Count every HTTP request the loop's clients make; raise `Capped` from the one past the cap.

    For a loop with no cap of its own the bench can reach: the transports of httpx2 (what openai
    3.x and anthropic 2.x send through) and httpx, sync and async, are patched, whichever are
    installed, so the clients keep their own default transports. The server sees request cap + 1,
    so the bench knows the loop went on; nothing in a client retries a BaseException. `amend`
    (the httpx module, the request, the response), when given, gives the response a sync client
    reads instead (a driver that fills in what its loop requires of a response and the server
    leaves out; no async driver needs it yet).
    """
    seen = {"n": 0}

    def count() -> None:
        seen["n"] += 1
        if seen["n"] > cap + 1:
            raise Capped(f"request {seen['n']} is past the safety cap of {cap}")

    for module in ("httpx2", "httpx"):
        try:
            lib = importlib.import_module(module)
        except ImportError:
            continue
        send = lib.HTTPTransport.handle_request
        send_async = lib.AsyncHTTPTransport.handle_async_request

        def handle_request(self: Any, request: Any, _send: Any = send, _lib: Any = lib) -> Any:
            count()
            response = _send(self, request)
            return response if amend is None else amend(_lib, request, response)

        async def handle_async_request(self: Any, request: Any, _send: Any = send_async) -> Any:
            count()
            return await _send(self, request)

        lib.HTTPTransport.handle_request = handle_request
        lib.AsyncHTTPTransport.handle_async_request = handle_async_request


def drive(run: Callable[[Spec], dict[str, Any]], argv: list[str] | None = None) -> int:
    """A driver's main: read SPEC (argv[1]), run the loop once, write its RESULT (argv[2]); 0."""
    args = sys.argv if argv is None else argv
    write_result(args[2], run(read_spec(args[1])))
    return 0
