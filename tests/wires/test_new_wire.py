"""Adding a wire is adding its package: a wire the server has never heard of, registered under a new
dialect name, is routed, served, refused and observed with no edit to the server or the observation.

The toy wire is Chat Completions under another name, path and id prefix (a provider that speaks a
Chat-shaped API, as many do). A real new wire is a sub-package ``bench/wires/<name>/`` holding its
``WIRE`` and a word in the ``Dialect`` literal (bench/engine/model.py); here both are stood in for
while the test runs, so the server's own code is all that is exercised.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import pytest

from bench.serve import app
from bench.wires import registry
from bench.wires.openai_chat import OpenAIChat
from tests.serve.serving import CHAT_TOOLS, make_sequence, serving


class Toy(OpenAIChat):
    name = "toy-chat"  # type: ignore[assignment]
    paths = ("/toy/v2/complete",)  # type: ignore[assignment]
    id_prefix = "toy-"


@pytest.fixture
def toy_wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = types.ModuleType("bench.wires.toy_chat")
    module.WIRE = Toy()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.wires.toy_chat", module)
    monkeypatch.setattr(registry, "Dialect",
                        Literal["openai-chat", "anthropic", "openai-responses", "gemini", "toy-chat"])
    registry.forget()
    monkeypatch.setattr(app, "WIRES", registry.names())  # what the server reads when it is imported
    yield
    registry.forget()


def test_a_new_wire_package_is_routed_served_and_observed_with_no_edit_elsewhere(toy_wire: None) -> None:
    assert [str(n) for n in registry.names()][-1] == "toy-chat"
    call = {"id": "c1", "name": "read_file", "arguments": "{}"}
    turns: list[dict[str, Any]] = [{"finish": "tool_calls", "tool_calls": [call]},
                                   {"finish": "stop", "content": "done"}]
    first = [{"role": "user", "content": "go"}]
    echo = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}
    with serving(make_sequence(turns)) as srv, httpx.Client() as client:
        url = f"{srv.base_url.removesuffix('/v1')}/toy/v2/complete"
        one = client.post(url, json={"model": "m", "messages": first, "tools": CHAT_TOOLS})
        bad = client.post(url, json={"model": "m", "messages": 5})
        two = client.post(url, json={"model": "m", "tools": CHAT_TOOLS, "messages": [
            *first, echo, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]})
        observed = srv.session.observed()
        records = srv.session.records()
    assert one.status_code == 200 and one.json()["id"].startswith("toy-stopbench-")
    assert one.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
    assert two.json()["choices"][0]["message"]["content"] == "done"
    assert [r.wire for r in records] == ["toy-chat", "toy-chat", "toy-chat"]
    assert [(o.action, o.run) for o in observed] == [("continue", (0,)), ("stop", ())]
