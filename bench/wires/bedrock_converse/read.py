"""A Bedrock Converse request read back: its conversation, output limit and tool choice.

``system`` is a list of blocks whose ``text`` is the system text. In ``messages``, an assistant
message's ``text`` and ``toolUse`` blocks are its echo; a user message's ``toolResult`` blocks answer
calls by ``toolUseId`` (``status: error`` kept as the error flag; their ``text`` and ``json``
content as text), its ``text`` blocks are user text. The output limit is
``inferenceConfig.maxTokens``; the tool choice is ``toolConfig.toolChoice`` (``auto``, ``any`` or a
``tool`` by name). Field names: botocore's service model for bedrock-runtime (``ConverseRequest``).
"""

from __future__ import annotations

import json
from typing import Any

from bench.wires.conversation import Conversation, Item, args_text, merge, text_of


def _result_text(content: Any) -> str:
    """A ``toolResult``'s content as text: its ``text`` blocks, and its ``json`` blocks as JSON."""
    if not isinstance(content, list):
        return text_of(content)
    out = []
    for part in content:
        if isinstance(part, dict) and "json" in part:
            out.append(json.dumps(part["json"], sort_keys=True))
        else:
            out.append(text_of([part]))
    return "\n".join(out)


def conversation(body: dict[str, Any]) -> Conversation:
    """A Converse request body reduced to the dialect-neutral conversation."""
    items: list[Item] = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        parts = [b for b in m.get("content") or [] if isinstance(b, dict)]
        if m.get("role") == "assistant":
            uses = [b["toolUse"] for b in parts if isinstance(b.get("toolUse"), dict)]
            text = "".join(str(b["text"]) for b in parts if "text" in b)
            items.append(Item("assistant", text, calls=tuple(str(u.get("toolUseId", "")) for u in uses),
                              call_names=tuple(str(u.get("name", "")) for u in uses),
                              call_args=tuple(args_text(u.get("input")) for u in uses)))
            continue
        for b in parts:
            result = b.get("toolResult")
            if isinstance(result, dict):
                status = result.get("status")
                items.append(Item("tool", _result_text(result.get("content")), call_id=str(result.get("toolUseId", "")),
                                  is_error=status == "error" if isinstance(status, str) else None))
            elif "text" in b:
                items.append(Item("user", str(b["text"])))
    return Conversation(text_of(body.get("system")), merge(items))


def max_tokens(body: dict[str, Any]) -> int | None:
    """``inferenceConfig.maxTokens``, when the request sets it."""
    config = body.get("inferenceConfig")
    value = config.get("maxTokens") if isinstance(config, dict) else None
    return value if type(value) is int else None


def tool_choice(body: dict[str, Any]) -> str:
    """``toolConfig.toolChoice`` in the bench's words: ``auto`` (also when absent), ``required``
    (``any``), or the forced tool's name."""
    config = body.get("toolConfig")
    choice = config.get("toolChoice") if isinstance(config, dict) else None
    if not isinstance(choice, dict) or "auto" in choice:
        return "auto"
    if "any" in choice:
        return "required"
    tool = choice.get("tool")
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) and name else json.dumps(choice, sort_keys=True)


def offers_tools(body: dict[str, Any]) -> bool:
    """Whether ``toolConfig.tools`` offers the model any tool (a non-empty list)."""
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, dict) else None
    return isinstance(tools, list) and bool(tools)
