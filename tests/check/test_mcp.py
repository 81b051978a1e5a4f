"""The MCP tool server (bench.check.mcp), stdio and streamable HTTP, driven by the MCP SDK's own
client against a stand-in tool endpoint: the tools listed are the endpoint's, each call reaches it
with its exact arguments, and its error flag becomes the MCP result's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from bench.check.mcp import background_mcp, stdio_command

from .tool_endpoint_stub import ToolEndpointStub

mcp = pytest.importorskip("mcp")
ROOT = Path(__file__).resolve().parents[2]


async def _exercise(client: Any) -> dict[str, Any]:
    listed = await client.list_tools()
    ok = await client.call_tool("read_file", {"path": "a.py", "limit": 3})
    failed = await client.call_tool("fails", {})
    unknown = await client.call_tool("nope", {"x": 1})
    return {"names": [t.name for t in listed.tools],
            "schema": listed.tools[0].input_schema,
            "ok": (ok.content[0].text, ok.is_error),
            "failed": (failed.content[0].text, failed.is_error),
            "unknown": (unknown.content[0].text, unknown.is_error)}


def _check(out: dict[str, Any], stub: ToolEndpointStub) -> None:
    assert out["names"] == ["read_file", "fails"]
    assert out["schema"]["required"] == ["path"]
    assert out["ok"] == ("STOPBENCH-OK read_file #1", False)
    assert out["failed"] == ("permission denied", True)
    assert out["unknown"] == ("unknown tool nope", True)
    assert stub.executions == [("read_file", {"path": "a.py", "limit": 3}), ("fails", {}), ("nope", {"x": 1})]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_stdio_server_proxies_the_tool_endpoint(mode: str) -> None:
    """Started as an MCP client starts it (the SDK's stdio client with no env: its own few variables,
    no STOPBENCH_TOOLS_URL), from another folder: the argv carries everything. `legacy` opens with
    the initialize handshake (served by the standard-library server), `auto` with server/discover
    (handed to the SDK's)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with ToolEndpointStub() as stub:
        argv = stdio_command(stub.url)
        assert os.path.isabs(argv[0])

        async def main() -> dict[str, Any]:
            params = StdioServerParameters(command=argv[0], args=argv[1:], cwd="/")
            async with Client(params, mode=mode) as client:
                return await _exercise(client)

        out = anyio.run(main)
        _check(out, stub)


def test_http_server_proxies_the_tool_endpoint() -> None:
    from mcp import Client

    with ToolEndpointStub() as stub, background_mcp(stub.url) as server:
        assert server.url.endswith("/mcp")

        async def main() -> dict[str, Any]:
            async with Client(server.url) as client:
                return await _exercise(client)

        out = anyio.run(main)
        _check(out, stub)


def test_the_tools_are_asked_for_at_every_list() -> None:
    """One HTTP server serves a worker's successive runs: a new run's tools are listed."""
    from mcp import Client

    with ToolEndpointStub() as stub, background_mcp(stub.url) as server:
        async def names() -> list[str]:
            async with Client(server.url) as client:
                return [t.name for t in (await client.list_tools()).tools]

        assert anyio.run(names) == ["read_file", "fails"]
        stub.tools = [{"name": "bash", "description": "", "parameters": {"type": "object", "properties": {}}}]
        assert anyio.run(names) == ["bash"]


def test_no_tools_url_is_one_line() -> None:
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "STOPBENCH_TOOLS_URL"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "bench.check.mcp"], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "STOPBENCH_TOOLS_URL is not set" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_loop_on_the_bench_mcp_tools_has_every_call_known_as_executed(transport: str, tmp_path: Path) -> None:
    """End to end on the real replay server: a program takes its tools from STOPBENCH_MCP_COMMAND or
    STOPBENCH_MCP_URL; each call it runs is an execution on the server, and the record says so."""
    from click.testing import CliRunner

    from bench.cli import cli

    program = Path(__file__).parent / "programs" / "mcp_loop.py"
    r = CliRunner().invoke(cli, ["check", "--sequences", str(ROOT / "sequences"), "--reports", str(tmp_path),
                                 "-s", "chat-tool-rounds", "--name", "mcp", "--", sys.executable, str(program),
                                 transport], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "| chat-tool-rounds | stop:answered@4 ok [read_file,edit_file,run_tests] |" in r.stdout
    cell = json.loads((tmp_path / "live" / "mcp.json").read_text(encoding="utf-8"))["cells"][0]
    known = [d.get("known") for d in cell["decisions"]]
    assert known[:3] == [[[0, "executed"]]] * 3, known


def test_the_pytest_plugins_env_has_the_mcp_url_of_the_served_sequence() -> None:
    from mcp import Client

    from bench.check.served import served
    from tests.check.conftest import ANSWER, CALL, small_sequence

    seq = small_sequence("call-then-answer", [CALL, ANSWER])
    with served(seq) as s:
        url = s.env()["STOPBENCH_MCP_URL"]

        async def names() -> list[str]:
            async with Client(url) as client:
                return [t.name for t in (await client.list_tools()).tools]

        assert anyio.run(names) == ["read_file"]


def test_mcp_tools_without_an_endpoint_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from bench.cli import cli

    monkeypatch.delenv("STOPBENCH_TOOLS_URL", raising=False)
    r = CliRunner().invoke(cli, ["mcp-tools"])
    assert r.exit_code == 2
    assert r.output.strip().startswith("no tool endpoint: pass --tools-url") and "Traceback" not in r.output


def _rpc_lines(argv: list[str], lines: list[dict[str, Any]], want_id: int, timeout: float = 30.0) -> dict[str, Any]:
    """Write `lines` to the stdio server at once; the response with id `want_id`."""
    import subprocess
    import time as _time

    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, cwd="/")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        proc.stdin.flush()
        deadline = _time.monotonic() + timeout
        while _time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg.get("id") == want_id:
                return dict(msg)
        raise AssertionError("no response")
    finally:
        proc.kill()
        proc.wait()


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}
INITIALIZE: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


def test_a_client_that_gave_up_on_discovery_gets_its_initialize_answered() -> None:
    """The AI SDK probes `server/discover` with a 1 s timeout, then sends `initialize` on the same
    pipe. A server that starts slower than that (a loaded machine) finds both queued: the client has
    fallen back, so the handshake is served (the SDK's dual-era server let the stale probe open a
    2026 connection and refused the initialize, and the program crashed before any model request)."""
    with ToolEndpointStub() as stub:
        discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": MODERN_META}}
        reply = _rpc_lines(stdio_command(stub.url), [discover, INITIALIZE], want_id=1)
    assert "result" in reply, reply
    assert reply["result"]["serverInfo"]["name"] == "stopbench-tools"


def test_a_client_still_waiting_on_discovery_is_answered() -> None:
    with ToolEndpointStub() as stub:
        discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": MODERN_META}}
        reply = _rpc_lines(stdio_command(stub.url), [discover], want_id=0)
    assert "result" in reply, reply


def test_the_http_server_stops_as_promptly_as_the_replay_server() -> None:
    """The MCP server runs on the replay server's background base (bench.serve.server.PromptServer),
    which ends when asked rather than on uvicorn's 0.1 s clock: a check run stops one per worker."""
    from bench.serve.server import PromptServer

    with ToolEndpointStub() as stub, background_mcp(stub.url) as server:
        assert isinstance(server.server, PromptServer)
        assert "stopbench-mcp" in server.thread.name


def _imported_by_a_handshake(argv: list[str]) -> set[str]:
    """The modules the stdio server imports to answer `initialize` and `tools/list` (``-X importtime``)."""
    import subprocess

    with ToolEndpointStub() as stub:
        argv = [argv[0], "-X", "importtime", *argv[1:-1], stub.url]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        proc = subprocess.run(argv, input="".join(json.dumps(m) + "\n" for m in (INITIALIZE, ping)),
                              capture_output=True, text=True, timeout=60, cwd="/")
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2] and replies[1]["result"]["tools"][0]["name"] == "read_file", replies
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def test_a_handshake_client_is_served_without_the_mcp_sdk_or_the_bench() -> None:
    """Stateless MCP clients (LangChain's MultiServerMCPClient) start the stdio server for every tool
    call: importing the MCP SDK's types (most of a second) and the bench's packages on each start
    made a round take seconds, and long sequences ran into the time limit before their cap."""
    modules = _imported_by_a_handshake(stdio_command("http://127.0.0.1:9/_stopbench/tools"))
    assert not {m for m in modules if m.split(".")[0] in ("mcp", "mcp_types", "bench", "pydantic", "anyio")}


def test_the_handshake_answers_the_clients_version_or_the_newest() -> None:
    from bench.check.mcp import HANDSHAKE_VERSIONS, answer

    def negotiated(version: str) -> str:
        reply = answer("http://127.0.0.1:9/x", {**INITIALIZE, "params": {**INITIALIZE["params"],
                                                                          "protocolVersion": version}})
        assert reply is not None
        return str(reply["result"]["protocolVersion"])

    assert negotiated("2024-11-05") == "2024-11-05"
    assert negotiated("1999-01-01") == HANDSHAKE_VERSIONS[-1]


def test_the_plain_server_answers_unknown_methods_bad_lines_and_batches() -> None:
    import io

    from bench.check.mcp import serve_plain

    out = io.BytesIO()
    rest = io.BytesIO(b"not json\n" + json.dumps([{"jsonrpc": "2.0", "id": 7, "method": "ping"},
                                                  {"jsonrpc": "2.0", "method": "notifications/initialized"}]).encode()
                      + b"\n\n" + json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                               "params": {"arguments": {}}}).encode() + b"\n")
    first = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}).encode() + b"\n"
    serve_plain("http://127.0.0.1:9/x", first, rest, out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies[0]["error"]["code"] == -32601 and replies[0]["id"] == 6
    assert replies[1] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert replies[2] == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    assert replies[3]["error"]["code"] == -32602 and replies[3]["id"] == 8
    assert len(replies) == 4


def test_the_plain_server_ends_quietly_when_the_client_closes_its_end() -> None:
    from bench.check.mcp import serve_plain

    class Closed:
        def write(self, data: bytes) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            pass

    first = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n"
    serve_plain("http://127.0.0.1:9/x", first, iter([first]), Closed())  # returns, raises nothing
