"""The sequence's tools as an MCP server: a proxy to the replay server's tool endpoint.

Most agent frameworks take tools from an MCP server natively. ``stopbench check`` gives a program
the tools of the sequence it serves both ways: ``STOPBENCH_MCP_COMMAND`` (the argv of this module
as a stdio server) and ``STOPBENCH_MCP_URL`` (a streamable-HTTP server :func:`background_mcp`
runs beside each check worker). Either lists the tools of ``GET $STOPBENCH_TOOLS_URL`` and
forwards each ``tools/call`` to ``POST $STOPBENCH_TOOLS_URL/<name>``: the replay server executes
it (records the name, the exact arguments and the requests answered so far) and answers
``{"content", "is_error"}``, which becomes the MCP result's text and ``isError``. So every tool a
framework runs is the bench's, and the observation knows it ran instead of guessing from wording.

The tools are asked for at every ``tools/list``, not once: one HTTP server serves a worker's
successive runs, each with its own sequence's tools.

``python -m bench.check.mcp [--tools-url URL]`` (or ``stopbench mcp-tools``) serves stdio; ``--http
PORT`` serves streamable HTTP in the foreground.

The stdio server starts fast: a client that opens with the ``initialize`` handshake (every MCP 1.x
client, and the 2.x ``ClientSession``) is served by a few lines of JSON-RPC on the standard library
(:func:`serve_plain`), without importing the MCP SDK, whose types alone take most of a second to
import. A client that opens in the 2026 era (``server/discover``, or a request carrying the
per-request protocol version) is handed to the SDK's server. Stateless MCP clients (LangChain's
``MultiServerMCPClient``) start a server for every tool call, so its start is paid once a round.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.serve.server import BackgroundUvicorn

TOOLS_URL_ENV = "STOPBENCH_TOOLS_URL"
SERVER_NAME = "stopbench-tools"
HTTP_PATH = "/mcp"
REQUEST_TIMEOUT = 30.0
"""Seconds one call to the tool endpoint may take (the replay server answers at once)."""


class ToolEndpointError(RuntimeError):
    """The tool endpoint could not be reached or answered something that is not its JSON."""


def stdio_command(tools_url: str | None = None, python: str | None = None) -> list[str]:
    """The full argv of the stdio server, the value of ``STOPBENCH_MCP_COMMAND`` as a list: an
    absolute interpreter path (it works from any venv and any working directory) and the tool
    endpoint as ``--tools-url`` (MCP clients start a stdio server with an environment of their own:
    the SDK's keeps only HOME, PATH, SHELL, TERM, USER and LOGNAME, so STOPBENCH_TOOLS_URL would not
    reach it). The module runs as a file (``-P``: its folder is not put on ``sys.path``, where this
    ``mcp.py`` would hide the SDK's ``mcp``), so starting it imports neither ``bench`` nor the
    replay server: a quarter of a second less on every start."""
    argv = [os.path.abspath(python or sys.executable), "-P", os.path.abspath(__file__)]
    return [*argv, "--tools-url", tools_url] if tools_url else argv


def _open(request: urllib.request.Request) -> tuple[int, bytes]:
    # the loopback server is never reached through a proxy, whatever the caller's environment says
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=REQUEST_TIMEOUT) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ToolEndpointError(f"tool endpoint {request.full_url} unreachable: {reason}") from None


def fetch_tools(tools_url: str) -> list[dict[str, Any]]:
    """``GET {tools_url}``: the current run's tools, ``[{"name", "description", "parameters"}]``."""
    status, body = _open(urllib.request.Request(tools_url, method="GET"))
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    tools = data.get("tools") if isinstance(data, dict) else None
    if status != 200 or not isinstance(tools, list):
        raise ToolEndpointError(f"GET {tools_url}: HTTP {status}, not a tool list: {body[:200]!r}")
    return [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def call_tool(tools_url: str, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    """``POST {tools_url}/{name}`` with the arguments: the result's text and whether it is an error.

    An unknown tool (404) or a refused body (400) is an error result with the endpoint's words,
    as a tool that failed; an endpoint that cannot be reached raises :class:`ToolEndpointError`.
    """
    url = f"{tools_url.rstrip('/')}/{urllib.parse.quote(name, safe='')}"
    body = json.dumps(arguments or {}).encode()
    status, raw = _open(urllib.request.Request(url, data=body, method="POST",
                                               headers={"Content-Type": "application/json"}))
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("content"), str):
        return data["content"], bool(data.get("is_error")) or status >= 400
    text = raw.decode("utf-8", "replace").strip() or f"HTTP {status}"
    return text, status >= 400


def build_server(tools_url: str) -> Any:
    """A low-level MCP :class:`mcp.server.lowlevel.Server` whose tools are the endpoint's."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = await anyio.to_thread.run_sync(fetch_tools, tools_url)
        return types.ListToolsResult(tools=[
            types.Tool(name=t["name"], description=t.get("description") or None,
                       input_schema=t.get("parameters") or {"type": "object", "properties": {}})
            for t in tools])

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text, is_error = await anyio.to_thread.run_sync(call_tool, tools_url, params.name, params.arguments)
        except ToolEndpointError as exc:
            text, is_error = str(exc), True
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(SERVER_NAME, version="1", on_list_tools=list_tools, on_call_tool=call)


def tools_url_from_env(environ: dict[str, str] | None = None) -> str:
    """``STOPBENCH_TOOLS_URL``, or a one-line :class:`SystemExit` when it is not set."""
    url = (environ if environ is not None else os.environ).get(TOOLS_URL_ENV, "").strip()
    if not url:
        raise SystemExit(f"{TOOLS_URL_ENV} is not set: run under stopbench check, or set it to the replay "
                         "server's tool endpoint (http://127.0.0.1:PORT/_stopbench/tools)")
    return url


DISCOVERY_GRACE_S = 0.1
"""How long the stdio server waits, after a ``server/discover`` opening, for an ``initialize`` the
client had already sent (it gave up waiting for discovery)."""


def _method(item: Any) -> str | None:
    return getattr(getattr(item, "message", None), "method", None)


async def _drop_stale_discovery(source: Any, sink: Any, first: Any = None) -> None:
    """Forward `first` (when given: a message already read) and then `source` to `sink`, dropping an
    opening ``server/discover`` that an ``initialize`` follows at once.

    Clients of the 2026 protocol probe ``server/discover`` with a short timeout (the AI SDK: 1 s)
    and fall back to the ``initialize`` handshake on the same pipe. A stdio server that starts later
    than that finds both queued; the SDK's dual-era loop lets the first request choose the era, so
    it would serve the stale probe and refuse the handshake the client now waits for. The client
    gave up on the probe: its ``initialize`` is served instead, and the probe is never answered.
    """
    import anyio

    async with sink:
        if first is None:
            try:
                first = await source.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
        pending = [first]
        if _method(first) == "server/discover":
            with anyio.move_on_after(DISCOVERY_GRACE_S):
                with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                    pending.append(await source.receive())
            if len(pending) == 2 and _method(pending[1]) == "initialize":
                pending = pending[1:]
        for item in pending:
            await sink.send(item)
        async for item in source:
            await sink.send(item)


def serve_stdio(tools_url: str) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin: the handshake era on the standard
    library (:func:`serve_plain`), the 2026 era on the SDK (:func:`serve_sdk`), chosen by the
    client's first message."""
    first = _read_line_unbuffered(0)
    if not first.strip():
        return
    if opens_modern_era(first):
        serve_sdk(tools_url, first)
    else:
        serve_plain(tools_url, first, sys.stdin.buffer, sys.stdout.buffer)


def _read_line_unbuffered(fd: int) -> bytes:
    """One line from `fd`, read a byte at a time so that nothing past it is taken from the pipe
    (the SDK's transport reads the rest from the descriptor itself)."""
    out = bytearray()
    while not out.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        out += byte
    return bytes(out)


MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key a 2026-era request carries its protocol version in."""


def opens_modern_era(line: bytes) -> bool:
    """Whether a client's first message opens the 2026 era: ``server/discover``, or a request whose
    ``params._meta`` names its protocol version (anything else, unreadable lines included, is the
    handshake era's)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return False
    if not isinstance(msg, dict):
        return False
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return msg.get("method") == "server/discover" or (isinstance(meta, dict) and MODERN_META_KEY in meta)


def serve_sdk(tools_url: str, first: bytes | None = None) -> None:
    """Serve MCP on stdin/stdout with the SDK's dual-era server; `first` is a line already read."""
    import anyio
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    server = build_server(tools_url)
    opening = SessionMessage(types.jsonrpc_message_adapter.validate_json(first, by_name=False)) if first else None

    async def main() -> None:
        async with stdio_server() as (read, write):
            sink, source = anyio.create_memory_object_stream[Any](0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_drop_stale_discovery, read, sink, opening)
                await server.run(source, write, server.create_initialization_options())

    anyio.run(main)


HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions of the ``initialize`` handshake, oldest first: a client's is answered
with itself, any other with the newest (the lifecycle rule of the MCP specification, 2025-06-18,
basic/lifecycle "Version Negotiation")."""
METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR, PARSE_ERROR = -32601, -32602, -32603, -32700


def answer(tools_url: str, msg: Any) -> dict[str, Any] | None:
    """The JSON-RPC response to one message of the handshake era, None for a notification or a
    response (this server sends no requests)."""
    if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
        return None if isinstance(msg, dict) else {"jsonrpc": "2.0", "id": None,
                                                   "error": {"code": -32600, "message": "Invalid Request"}}
    if "id" not in msg:
        return None
    method = msg["method"]
    params: dict[str, Any] = msg["params"] if isinstance(msg.get("params"), dict) else {}

    def ok(result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg["id"], "result": result}

    def error(code: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": code, "message": message}}

    if method == "initialize":
        asked = params.get("protocolVersion")
        return ok({"protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                   "capabilities": {"tools": {"listChanged": False}},
                   "serverInfo": {"name": SERVER_NAME, "version": "1"}})
    if method == "ping":
        return ok({})
    if method == "tools/list":
        try:
            tools = fetch_tools(tools_url)
        except ToolEndpointError as exc:
            return error(INTERNAL_ERROR, str(exc))
        return ok({"tools": [{"name": t["name"], **({"description": t["description"]} if t.get("description") else {}),
                              "inputSchema": t.get("parameters") or {"type": "object", "properties": {}}}
                             for t in tools]})
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return error(INVALID_PARAMS, "tools/call needs a name (a string) and arguments (an object)")
        try:
            text, is_error = call_tool(tools_url, name, arguments)
        except ToolEndpointError as exc:
            text, is_error = str(exc), True
        return ok({"content": [{"type": "text", "text": text}], "isError": is_error})
    return error(METHOD_NOT_FOUND, f"Method not found: {method}")


def serve_plain(tools_url: str, first: bytes, stdin: Any, stdout: Any) -> None:
    """Serve the handshake era on the standard library: one JSON-RPC message (or a batch) a line,
    `first` the line already read, until `stdin` ends."""
    def lines() -> Any:
        yield first
        yield from stdin

    for line in lines():
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            out: Any = {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}}
        else:
            if isinstance(msg, list):
                out = [r for r in (answer(tools_url, m) for m in msg) if r is not None] or None
            else:
                out = answer(tools_url, msg)
        if out is not None:
            try:
                stdout.write(json.dumps(out).encode() + b"\n")
                stdout.flush()
            except (BrokenPipeError, ValueError):  # the client closed its end: nothing left to serve
                return


def http_app(tools_url: str) -> Any:
    """The streamable-HTTP ASGI app (path :data:`HTTP_PATH`), JSON responses, stateless: each
    request stands alone, so a program that reconnects or a new run on the same server needs no
    session."""
    return build_server(tools_url).streamable_http_app(streamable_http_path=HTTP_PATH, stateless_http=True,
                                                       json_response=True)


def _uvicorn_config(tools_url: str, host: str, port: int) -> Any:
    import uvicorn
    return uvicorn.Config(http_app(tools_url), host=host, port=port, log_level="warning", lifespan="on",
                          timeout_keep_alive=5, timeout_graceful_shutdown=2, access_log=False)


def background_mcp(tools_url: str, host: str = "127.0.0.1", port: int = 0,
                   start_timeout: float = 10.0) -> BackgroundUvicorn:
    """The streamable-HTTP MCP server on a loopback port in a daemon thread; a context manager.

    ``with background_mcp(tools_url) as mcp: ... mcp.url ...`` (``http://127.0.0.1:PORT/mcp``).
    The server package is imported here, not with this module, so the stdio server
    (``python -m bench.check.mcp``) starts without it."""
    from bench.serve.server import BackgroundUvicorn
    return BackgroundUvicorn(_uvicorn_config(tools_url, host, port), "MCP server", "stopbench-mcp", start_timeout,
                             HTTP_PATH)


def serve_http(tools_url: str, host: str, port: int) -> None:
    """Serve streamable HTTP in the foreground until Ctrl-C."""
    import uvicorn
    uvicorn.Server(_uvicorn_config(tools_url, host, port)).run()


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.check.mcp [--http PORT [--host HOST]]``."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m bench.check.mcp",
                                     description="The sequence's tools (GET $STOPBENCH_TOOLS_URL) as an MCP server.")
    parser.add_argument("--http", type=int, metavar="PORT", default=None,
                        help=f"serve streamable HTTP on PORT (path {HTTP_PATH}) instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--tools-url", default=None, metavar="URL",
                        help=f"the replay server's tool endpoint [default: ${TOOLS_URL_ENV}]")
    args = parser.parse_args(argv)
    url = args.tools_url or tools_url_from_env()
    if args.http is None:
        serve_stdio(url)
    else:
        serve_http(url, args.host, args.http)


if __name__ == "__main__":
    main()
