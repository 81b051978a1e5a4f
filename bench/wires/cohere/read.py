"""A Cohere v2 ``/v2/chat`` request read back: its ``messages`` as the dialect-neutral conversation.

Messages are ``system``, ``user``, ``assistant`` (``content``, ``tool_plan``, ``tool_calls`` with
ids and string ``arguments``) and ``tool`` (``tool_call_id``, ``content``) (cohere-ai/cohere-python
7.0.9 @ bc495daa, src/cohere/types/chat_message_v2.py). A content is a string or a list of items:
``text`` items carry ``text``, a tool result's ``document`` items carry ``document.data``
(src/cohere/types/tool_content.py). An assistant's text is its content, else its ``tool_plan``.
Cohere's ``tool_choice`` is ``REQUIRED`` or ``NONE`` (src/cohere/v2/types/
v2chat_request_tool_choice.py L5); absent, the model chooses.
"""

from __future__ import annotations

import json
from typing import Any

from bench.wires.conversation import Conversation, Item, args_text, merge


def text(content: Any) -> str:
    """A message content's text: a string, or its items' text (a document's data as JSON text
    when it is not a string)."""
    if isinstance(content, str):
        return content
    out = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, dict) and isinstance(item.get("document"), dict):
            data = item["document"].get("data")
            out.append(data if isinstance(data, str) else json.dumps(data, sort_keys=True))
    return "\n".join(out)


def conversation(body: dict[str, Any]) -> Conversation:
    """A Cohere v2 chat request body reduced to the dialect-neutral conversation."""
    system: list[str] = []
    items: list[Item] = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        said = text(m.get("content"))
        if role == "system" and not items:
            system.append(said)
        elif role == "system":
            items.append(Item("system", said))
        elif role == "assistant":
            tcs = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
            fns = [f if isinstance(f := c.get("function"), dict) else {} for c in tcs]
            plan = m.get("tool_plan")
            items.append(Item("assistant", said or (plan if isinstance(plan, str) else ""),
                              calls=tuple(str(c.get("id", "")) for c in tcs),
                              call_names=tuple(str(f.get("name", "")) for f in fns),
                              call_args=tuple(args_text(f.get("arguments")) for f in fns)))
        elif role == "tool":
            items.append(Item("tool", said, call_id=str(m.get("tool_call_id", ""))))
        else:
            items.append(Item("user", said))
    return Conversation("\n".join(system), merge(items))


def tool_choice(body: dict[str, Any]) -> str:
    """The request's tool choice in the bench's words: ``required``, ``none`` or ``auto``."""
    choice = body.get("tool_choice")
    return {"REQUIRED": "required", "NONE": "none"}.get(choice.upper(), "auto") if isinstance(choice, str) else "auto"
