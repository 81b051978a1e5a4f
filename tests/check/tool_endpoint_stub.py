"""A stand-in for the replay server's tool endpoint (the contract's ``/_stopbench/tools``), so the
MCP proxy is tested on its own: it lists fixed tools and records every execution."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

TOOLS = [{"name": "read_file", "description": "the read_file tool",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
         {"name": "fails", "description": "a tool whose run fails",
          "parameters": {"type": "object", "properties": {}, "required": []}}]


class ToolEndpointStub:
    """``with ToolEndpointStub() as stub: stub.url`` (``http://127.0.0.1:PORT/_stopbench/tools``);
    ``stub.executions`` lists ``(name, arguments)`` as they arrive."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        self.tools = TOOLS if tools is None else tools
        self.executions: list[tuple[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, data: dict[str, Any]) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/_stopbench/tools":
                    self._send(200, {"tools": stub.tools})
                else:
                    self._send(404, {"error": "no such path"})

            def do_POST(self) -> None:
                prefix = "/_stopbench/tools/"
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                name = self.path[len(prefix):] if self.path.startswith(prefix) else ""
                try:
                    args = json.loads(raw)
                except ValueError:
                    self._send(400, {"content": "bad JSON body", "is_error": True})
                    return
                stub.executions.append((name, args))
                n = len(stub.executions)
                if name not in {t["name"] for t in stub.tools}:
                    self._send(404, {"content": f"unknown tool {name}", "is_error": True})
                elif name == "fails":
                    self._send(200, {"content": "permission denied", "is_error": True})
                else:
                    self._send(200, {"content": f"STOPBENCH-OK {name} #{n}", "is_error": False})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/_stopbench/tools"

    def __enter__(self) -> ToolEndpointStub:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
