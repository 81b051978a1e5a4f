"""An Ollama ``/api/chat`` request read back: its ``messages`` as the dialect-neutral conversation.

A message is ``{"role": system|user|assistant|tool, "content", "thinking", "tool_calls",
"tool_name", "tool_call_id"}`` (ollama/ollama v0.33.0-rc2 @ fb307609, api/types.go L194-206); an
assistant's ``tool_calls`` are ``{"id"?, "function": {"index", "name", "arguments"}}`` with the
arguments an object (L221-230). The official Python client echoes a call without its id and
answers it with ``tool_name`` alone (ollama-python v0.6.2 @ 25b93290, ollama/_types.py L304-350:
``Message.tool_name``, ``ToolCall.function`` and no id), so a result is named by the *position* of
its call among the preceding assistant message's calls (``#0``, ``#1``; as on Gemini,
:mod:`bench.wires.gemini.read`): by ``tool_call_id`` when it is one of those calls' ids, else the
first unanswered call of its ``tool_name``, else the first unanswered call.
"""

from __future__ import annotations

from typing import Any

from bench.wires.conversation import Conversation, Item, args_text, merge, text_of


def _calls(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(id, name, arguments as JSON text) of an assistant message's calls."""
    out = []
    for c in message.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        fn: dict[str, Any] = f if isinstance(f := c.get("function"), dict) else {}
        out.append((str(c.get("id") or ""), str(fn.get("name") or ""), args_text(fn.get("arguments"))))
    return out


def position(calls: list[tuple[str, str, str]], taken: set[int], call_id: str, name: str) -> str:
    """``#k`` for the call a result answers (by id, else the first untaken call of its name, else the
    first untaken call); the result's own id or name when it answers none of them."""
    rules = (lambda cid, cname: bool(call_id) and cid == call_id,
             lambda cid, cname: bool(name) and cname == name,
             lambda cid, cname: not call_id and not name)
    for rule in rules:
        for n, (cid, cname, _) in enumerate(calls):
            if n not in taken and rule(cid, cname):
                taken.add(n)
                return f"#{n}"
    return call_id or name


def conversation(body: dict[str, Any]) -> Conversation:
    """An ``/api/chat`` request body reduced to the dialect-neutral conversation."""
    system: list[str] = []
    items: list[Item] = []
    calls: list[tuple[str, str, str]] = []
    taken: set[int] = set()
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "").lower()  # Ollama lower-cases the role (api/types.go L208-218)
        text = text_of(m.get("content"))
        if role == "system" and not items:
            system.append(text)
        elif role == "system":
            items.append(Item("system", text))
        elif role == "assistant":
            calls, taken = _calls(m), set()
            items.append(Item("assistant", text, calls=tuple(f"#{n}" for n in range(len(calls))),
                              call_names=tuple(c[1] for c in calls), call_args=tuple(c[2] for c in calls)))
        elif role == "tool":
            ref = position(calls, taken, str(m.get("tool_call_id") or ""), str(m.get("tool_name") or ""))
            items.append(Item("tool", text, call_id=ref))
        else:
            items.append(Item("user", text))
    return Conversation("\n".join(system), merge(items))
