"""The Python drivers' shared plumbing (conformance/drivers/stopbench_driver.py): SPEC in, stub
functions, the safety cap's request count, RESULT out. It runs in each loop's own venv, so it is
tested here in the bench's Python, and once with no site-packages at all (standard library only)."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

DRIVERS = Path(__file__).resolve().parents[2] / "conformance" / "drivers"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stopbench_driver", DRIVERS / "stopbench_driver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["stopbench_driver"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


lib = _load()


@pytest.fixture(autouse=True)
def _transports_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """count_requests patches httpx2's and httpx's transports for good (in a driver, the loop's whole
    life); here each test's patches are undone, or the cap would leak into every later test's clients
    (google-genai's, in tests/serve, go through httpx2)."""
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for cls, attr in ((module.HTTPTransport, "handle_request"),
                          (module.AsyncHTTPTransport, "handle_async_request")):
            monkeypatch.setattr(cls, attr, getattr(cls, attr))


def test_spec_defaults_and_the_anthropic_base_url_without_v1() -> None:
    spec = lib.Spec({"base_url": "http://127.0.0.1:9/v1", "tools": [{"name": "grep", "required": ["q"]},
                                                                     {"name": "ls"}]})
    assert (spec.wire, spec.model, spec.marker, spec.safety_cap) == ("openai-chat", "stopbench", "STOPBENCH-OK", 200)
    assert spec.anthropic_base_url == "http://127.0.0.1:9"
    assert spec.tools == [lib.StubTool("grep", ["q"]), lib.StubTool("ls", [])]


def test_a_stub_function_binds_only_with_its_required_keys_and_answers_the_marker() -> None:
    strict = lib.stub_function(lib.StubTool("read-file", ["path"]), "MARK", any_other_keywords=False)
    loose = lib.stub_function(lib.StubTool("read-file", ["path"]), "MARK", any_other_keywords=True)
    with pytest.raises(TypeError):
        inspect.signature(strict).bind()
    with pytest.raises(TypeError):
        inspect.signature(strict).bind(path="a", extra=1)
    inspect.signature(loose).bind(path="a", extra=1)
    assert strict(path="a") == "MARK read-file"
    assert strict.__name__ == "stub_read_file"
    assert strict.__doc__ == "stopbench stub for read-file"
    assert loose.__annotations__ == {"path": Any, "kwargs": Any, "return": str}


def test_the_request_past_the_safety_cap_raises_capped_on_sync_and_async_transports(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []

    def send(self: Any, request: Any) -> str:
        sent.append("sync")
        return "response"

    async def send_async(self: Any, request: Any) -> str:
        sent.append("async")
        return "response"

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", send)
    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", send_async)
    lib.count_requests(2)
    sync, async_ = httpx.HTTPTransport(), httpx.AsyncHTTPTransport()
    assert sync.handle_request(None) == "response"
    assert asyncio.run(async_.handle_async_request(None)) == "response"
    assert sync.handle_request(None) == "response"  # request cap + 1: the server sees the loop went on
    with pytest.raises(lib.Capped, match="request 4 is past the safety cap of 2"):
        asyncio.run(async_.handle_async_request(None))
    assert sent == ["sync", "async", "sync"]


def test_amend_gives_the_client_another_response(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", lambda self, request: f"sent {request}")
    lib.count_requests(5, amend=lambda module, request, response: (module.__name__, response))
    assert httpx.HTTPTransport().handle_request("r1") == ("httpx", "sent r1")


def test_drive_reads_spec_and_writes_result_with_the_standard_library_alone(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps({"base_url": "http://x/v1", "prompt": "héllo"}), encoding="utf-8")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import stopbench_driver as d; "
              "sys.exit(d.drive(lambda s: {**d.new_result(), 'ok': True, 'final': s.prompt}, sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-S", "-I", "-c", script, str(DRIVERS), str(tmp_path / "spec.json"),
                           str(tmp_path / "result.json")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "result.json").read_text(encoding="utf-8") == (
        '{"ok": true, "reason": null, "final": "héllo", "error": null}')
