"""A Chat Completions request read back: its ``messages`` as the dialect-neutral conversation.

System and developer messages before the first other message are the system text; later ones are
system items. An assistant message carries its ``tool_calls`` (ids, names, arguments); a ``tool``
(or legacy ``function``) message is a result named by its ``tool_call_id``.
"""

from __future__ import annotations

from typing import Any

from bench.wires.conversation import Conversation, Item, args_text, merge, text_of


def conversation(body: dict[str, Any]) -> Conversation:
    """A Chat Completions request body reduced to the dialect-neutral conversation."""
    system: list[str] = []
    items: list[Item] = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role in ("system", "developer"):
            if items:
                items.append(Item("system", text_of(m.get("content"))))
            else:
                system.append(text_of(m.get("content")))
        elif role == "assistant":
            tcs = [c for c in m.get("tool_calls") or [] if isinstance(c, dict)]
            fns: list[dict[str, Any]] = [f if isinstance(f := c.get("function"), dict) else {} for c in tcs]
            items.append(Item("assistant", text_of(m.get("content")), calls=tuple(str(c.get("id", "")) for c in tcs),
                              call_names=tuple(str(f.get("name", "")) for f in fns),
                              call_args=tuple(args_text(f.get("arguments")) for f in fns)))
        elif role in ("tool", "function"):
            items.append(Item("tool", text_of(m.get("content")),
                              call_id=str(m.get("tool_call_id", m.get("name", "")))))
        else:
            items.append(Item("user", text_of(m.get("content"))))
    return Conversation("\n".join(system), merge(items))
