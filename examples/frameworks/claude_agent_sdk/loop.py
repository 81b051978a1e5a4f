"""An agent on the Claude Agent SDK (Python ``claude-agent-sdk``, which drives the Claude Code CLI it
bundles), as the SDK's MCP page writes one with tools from an MCP server, for ``stopbench check``.

Followed: https://docs.claude.com/en/docs/agent-sdk/mcp (``query(prompt=..., options=ClaudeAgentOptions(
mcp_servers={name: {"type": "stdio", "command": ..., "args": [...]}}, allowed_tools=["mcp__<name>__<tool>",
...]))``, iterated to its ``ResultMessage``). The tools are the sequence's, from the MCP stdio server whose
argv is STOPBENCH_MCP_COMMAND. Everything else is the SDK's and the CLI's default: its model, its turn
limit (none), its retries. The CLI runs in a fresh temporary folder that is also its config folder
(``CLAUDE_CONFIG_DIR``), with the non-essential traffic off (``env`` of framework.json, as Claude Code's
own conformance driver sets it: auto-update, telemetry, error reports), so every request is a model turn.

Claude Code names an MCP tool ``mcp__<server>__<tool>``; the sequences call ``read_file``, ``bash``, ...
A small proxy in front of ANTHROPIC_BASE_URL renames each served ``tool_use`` block of a sequence tool to
``mcp__stopbench__<name>`` (in a JSON answer and in a stream's ``content_block_start``) and back in the
requests' assistant messages, so the server sees the names it served; status, headers and a cut stream
pass through as they come (conformance/drivers/claude_code_driver.mjs does the same for the CLI).

How the run ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}``, ok unless the result message
says ``is_error``, reason its ``subtype`` (with its ``stop_reason`` when it has one); an exception is
ok=false with its class name. No retries or guards beyond the framework's defaults.
"""

import asyncio
import contextlib
import http.client
import json
import os
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

SERVER = "stopbench"
PREFIX = f"mcp__{SERVER}__"
NAMES = {t["name"] for t in json.loads(os.environ.get("STOPBENCH_TOOLS", "[]"))}
HOP = {"connection", "content-length", "transfer-encoding", "keep-alive", "host", "accept-encoding"}


def rename_served(obj: dict) -> dict:
    """A served answer's tool_use blocks of sequence tools, named as Claude Code offered them."""
    for block in [*(obj.get("content") or []), obj.get("content_block") or {}]:
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in NAMES:
            block["name"] = PREFIX + block["name"]
    return obj


def rename_sent(obj: dict) -> dict:
    """A request's assistant tool_use blocks, named back as the server served them."""
    for message in obj.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            named = isinstance(block, dict) and block.get("type") == "tool_use"
            if named and str(block.get("name")).startswith(PREFIX):
                block["name"] = block["name"][len(PREFIX):]
    return obj


class Renaming(BaseHTTPRequestHandler):
    """Forwards each request to the replay server, renaming tool names both ways."""

    protocol_version = "HTTP/1.1"
    upstream = urlsplit(os.environ.get("ANTHROPIC_BASE_URL", "http://127.0.0.1:1"))

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.forward()

    def do_POST(self) -> None:
        self.forward()

    def forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if body and "json" in (self.headers.get("content-type") or ""):
            body = json.dumps(rename_sent(json.loads(body))).encode()
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn.request(self.command, self.path, body=body or None, headers=headers)
        resp = conn.getresponse()
        self.send_response_only(resp.status, resp.reason)
        for key, value in resp.getheaders():
            if key.lower() not in HOP:
                self.send_header(key, value)
        if "text/event-stream" in (resp.getheader("content-type") or ""):
            self.stream(resp)
        else:
            self.whole(resp)
        conn.close()

    def whole(self, resp: http.client.HTTPResponse) -> None:
        try:
            data = resp.read()
        except (http.client.HTTPException, OSError):
            self.close_connection = True
            return
        if "json" in (resp.getheader("content-type") or ""):
            with contextlib.suppress(ValueError):
                data = json.dumps(rename_served(json.loads(data))).encode()
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, resp: http.client.HTTPResponse) -> None:
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        try:
            while line := resp.readline():
                if line.startswith(b"data:") and b'"tool_use"' in line:
                    line = b"data: " + json.dumps(rename_served(json.loads(line[5:]))).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
        except (http.client.HTTPException, OSError):
            return  # the upstream stream was cut: cut ours too, with no closing chunk
        self.wfile.write(b"0\r\n\r\n")


def proxy() -> str:
    """Start the renaming proxy in a thread; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Renaming)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


async def main() -> dict:
    argv = json.loads(os.environ["STOPBENCH_MCP_COMMAND"])
    work = tempfile.mkdtemp(prefix="stopbench-claude-")
    options = ClaudeAgentOptions(
        mcp_servers={SERVER: {"type": "stdio", "command": argv[0], "args": argv[1:]}},
        allowed_tools=[PREFIX + name for name in sorted(NAMES)],
        cwd=work,
        env={"ANTHROPIC_BASE_URL": proxy(), "CLAUDE_CONFIG_DIR": work},
    )
    result = None
    try:
        async for message in query(prompt=os.environ.get("STOPBENCH_PROMPT", "Say hello."), options=options):
            if isinstance(message, ResultMessage):
                result = message
    except Exception as exc:  # the framework raised: that is how the run ended
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)}
    if result is None:
        return {"ok": False, "reason": "no_result", "final": ""}
    reason = result.subtype + (f" {result.stop_reason}" if result.stop_reason else "")
    return {"ok": not result.is_error, "reason": reason, "final": result.result or ""}


if __name__ == "__main__":
    outcome = asyncio.run(main())
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
