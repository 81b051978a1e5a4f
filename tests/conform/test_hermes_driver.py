"""The Hermes driver's Gemini wire: Hermes builds its native Gemini client only for Google's host
(gemini_native_adapter.py is_native_gemini_base_url), so the driver keeps Google's base URL and sends
that host to the replay server beneath httpx; every other host is left alone."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def driver(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # the driver patches httpx's transports; monkeypatch puts the originals back afterwards
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", httpx.HTTPTransport.handle_request)
    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request",
                        httpx.AsyncHTTPTransport.handle_async_request)
    spec = importlib.util.spec_from_file_location("hermes_driver", ROOT / "conformance/drivers/hermes_driver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(f"{self.headers['Host']} {self.path}")
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


def test_a_request_for_googles_gemini_host_reaches_the_replay_server_path_and_query_kept(
        driver: ModuleType, server: tuple[str, list[str]]) -> None:
    root, seen = server
    driver.send_google_to(root)
    url = f"{driver.GOOGLE_BASE}/models/stopbench:streamGenerateContent?alt=sse"
    with httpx.Client() as client:
        assert client.post(url, json={}).status_code == 200
    assert seen == [f"{root.removeprefix('http://')} /v1beta/models/stopbench:streamGenerateContent?alt=sse"]

