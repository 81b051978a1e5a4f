"""Reading a Gemini request: the path's model and stream form, and the body as a conversation.

A ``generateContent`` body carries ``systemInstruction`` and ``contents``: ``user`` and ``model``
turns of parts. A ``model`` content is the assistant's echo (its text, its ``functionCall``
parts); a ``user`` content holds the user's text and the ``functionResponse`` parts that answer
calls. The Gemini API pairs a response with its call by name and order (ids are optional and a
client may make its own), so a result is named here by the *position* of its call among the
preceding model content's calls (``#0``, ``#1``; :func:`bench.serve.observe.infer` knows the
form): by id when the id is one of those calls', else the k-th result with a name answers the
k-th call with that name. A ``functionResponse`` whose ``response`` has an ``error`` key and no
``output`` key is an error result (the documented convention); otherwise the driver's ok marker
or the text decides, as on the other wires.
"""

from __future__ import annotations

import json
from typing import Any

from bench.wires.conversation import Conversation, Item, merge

STREAM_METHOD = ":streamGenerateContent"
JSON_METHOD = ":generateContent"


def request_shape(path: str, alt: str | None) -> tuple[bool, str, bool] | None:
    """(streamed, model, as SSE) for a Gemini model path, or None when it is no model call."""
    head, _, method = path.rpartition(":")
    if ":" + method not in (STREAM_METHOD, JSON_METHOD) or "/models/" not in head:
        return None
    model = head.rsplit("/models/", 1)[1] or "stopbench"
    return ":" + method == STREAM_METHOD, model, alt == "sse"


def _text(parts: list[Any]) -> str:
    return "".join(str(p.get("text", "")) for p in parts
                   if isinstance(p, dict) and "text" in p and not p.get("thought"))


def _field(part: Any, camel: str, snake: str) -> Any:
    """A part's field in either spelling the Gemini API's JSON reads (``functionCall`` or the proto
    name ``function_call``, which LiteLLM sends)."""
    return part.get(camel, part.get(snake)) if isinstance(part, dict) else None


def _parts(content: Any) -> list[Any]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def _result_text(response: Any) -> str:
    if isinstance(response, dict) and list(response) == ["output"] and isinstance(response["output"], str):
        return response["output"]
    return json.dumps(response, sort_keys=True, ensure_ascii=False)


def _is_error(response: Any) -> bool | None:
    if isinstance(response, dict) and "error" in response and "output" not in response:
        return True
    return None


def conversation(body: dict[str, Any]) -> Conversation:
    """A Gemini request body reduced to the dialect-neutral conversation the inference compares."""
    system_raw = body.get("systemInstruction", body.get("system_instruction"))
    system = system_raw if isinstance(system_raw, str) else _text(_parts(system_raw))
    items: list[Item] = []
    calls: list[tuple[str, str]] = []  # (id, name) of the last model content's calls
    contents = body.get("contents")
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, str):
            items.append(Item("user", content))
            continue
        parts = _parts(content)
        if isinstance(content, dict) and content.get("role") == "model":
            fcs = [fc for p in parts if isinstance(fc := _field(p, "functionCall", "function_call"), dict)]
            calls = [(str(fc.get("id") or ""), str(fc.get("name", ""))) for fc in fcs]
            items.append(Item("assistant", _text(parts), calls=tuple(f"#{n}" for n in range(len(calls)))))
            continue
        taken: set[int] = set()
        for p in parts:
            if not isinstance(p, dict):
                continue
            fr = _field(p, "functionResponse", "function_response")
            if isinstance(fr, dict):
                call_id = _position(calls, taken, str(fr.get("id") or ""), str(fr.get("name", "")))
                response = fr.get("response")
                items.append(Item("tool", _result_text(response), call_id=call_id, is_error=_is_error(response)))
            elif "text" in p and not p.get("thought"):
                items.append(Item("user", str(p.get("text", ""))))
    return Conversation(system, merge(items))


def _position(calls: list[tuple[str, str]], taken: set[int], call_id: str, name: str) -> str:
    """``#k`` for the call a result answers (by id, else the first untaken call of that name);
    the result's own id or name when it answers none of them."""
    for by_id in (True, False):
        for n, (cid, cname) in enumerate(calls):
            if n not in taken and ((by_id and bool(call_id) and cid == call_id) or (not by_id and cname == name)):
                taken.add(n)
                return f"#{n}"
    return call_id or name
