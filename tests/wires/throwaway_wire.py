"""A throwaway wire, installed by tests/wires/test_throwaway_wire.py as a package of its own (copied as
``throwaway_wire/__init__.py`` beside a ``.dist-info`` whose entry point registers it).

It is a genuinely different API from every wire of the bench: its own path (``/throwaway/v1/reply``), its
own request (``history`` of ``who``/``said`` entries), its own answer (``{"throwaway": {...}}``, finish
strings ``done``/``call``/``cut``/``blocked``, a stream of JSON lines), its own error body
(``{"oops": {"why", "what"}}``, the wait in ``wait_s``), its own client variables and default model; its
replies may say ``end_turn``.
"""

from __future__ import annotations

import json
from types import MappingProxyType, SimpleNamespace
from typing import Any

from bench.engine.model import Turn, TurnError
from bench.wires.base import Context, Entry, StatusError, Wire, pieces
from bench.wires.conversation import Conversation, Item, merge

_CITE = "tests/wires/throwaway_wire.py (a test's own wire)"


def _answer(turn: Turn, ctx: Context) -> dict[str, Any]:
    calls = [{"ref": c.id, "tool": c.name, "args": c.arguments} for c in turn.tool_calls]
    return {"throwaway": {"id": ctx.response_id, "model": ctx.model, "said": turn.content or "", "calls": calls,
                          "why": ctx.finish_raw, "end_turn": turn.end_turn}}


def _frames(turn: Turn, ctx: Context) -> list[bytes]:
    said = [json.dumps({"piece": p}).encode() + b"\n" for p in pieces(turn.content or "")]
    return [*said, json.dumps(_answer(turn, ctx)).encode() + b"\n"]


def _conversation(body: dict[str, Any]) -> Conversation:
    items: list[Item] = []
    for entry in body.get("history") or []:
        if not isinstance(entry, dict):
            continue
        who = entry.get("who")
        if who == "model":
            calls = [c for c in entry.get("calls") or [] if isinstance(c, dict)]
            items.append(Item("assistant", str(entry.get("said") or ""), calls=tuple(str(c.get("ref")) for c in calls),
                              call_names=tuple(str(c.get("tool")) for c in calls),
                              call_args=tuple(str(c.get("args")) for c in calls)))
        elif who == "tool":
            items.append(Item("tool", str(entry.get("result") or ""), call_id=str(entry.get("ref") or "")))
        else:
            items.append(Item("user", str(entry.get("said") or "")))
    return Conversation("", merge(items))


def _not_a_capture(*_: Any) -> Any:
    raise NotImplementedError("the throwaway wire imports no captures")


class Throwaway(Wire):
    name = "throwaway-json"  # type: ignore[assignment]
    table = MappingProxyType({
        "done": Entry("stop", _CITE), "call": Entry("tool_calls", _CITE), "cut": Entry("length", _CITE),
        "blocked": Entry("content_filter", _CITE)})
    id_prefix = "tw-"
    paths = ("/throwaway/v1/reply",)
    conversation_field = ("history", (list,), True)
    max_tokens_keys = ("limit",)
    stream_media = "application/x-ndjson"
    renderer = SimpleNamespace(response_json=_answer, stream_frames=_frames)
    reader = SimpleNamespace(conversation=_conversation)
    importer = SimpleNamespace(looks_like=lambda obj: isinstance(obj, dict) and "throwaway" in obj,
                               from_response=_not_a_capture, StreamAssembler=_not_a_capture)
    provider = "throwaway-labs"
    default_model = "throwaway-mini-1"
    client_env = MappingProxyType({"THROWAWAY_ENDPOINT": "{url}/throwaway/v1", "THROWAWAY_TOKEN": "{key}"})
    client_env_removed = ("THROWAWAY_REAL_ENDPOINT",)
    status_errors = MappingProxyType({429: StatusError("slow_down", "Throwaway says: slow down.",
                                                       (("x-throwaway-quota", "0"),))})
    corpus_models = (("throwaway-mini-1", 0.5),)
    end_turn = True

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return {"oops": {"why": err.message, "what": err.code or err.kind}}

    def retry_hint(self, body: Any, retry_after: int) -> Any:
        return {"oops": {**body["oops"], "wait_s": retry_after}}


WIRE = Throwaway()
