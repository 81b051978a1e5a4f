"""The reference loop's Chat Completions client: ``openai.OpenAI``, streamed, its retries off."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.client import MAX_TOKENS, Call, Reply, ReplyError, Result, caught, client_errors


class Chat:
    """Chat Completions over ``openai.OpenAI`` (streamed)."""

    api: Dialect = "openai-chat"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        import openai
        self.client = client.with_options(max_retries=0)
        self.errors = client_errors(openai)
        self.model = model
        self.messages: list[dict[str, Any]] = ([{"role": "system", "content": system}] if system else [])
        self.messages.append({"role": "user", "content": prompt})
        self.tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                        "parameters": t["parameters"]}} for t in tools]
        self.max_tokens = MAX_TOKENS

    def ask(self) -> Reply:
        content: list[str] = []
        refusal: list[str] = []
        got_content = False
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        used = 0
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            stream = self.client.chat.completions.create(model=self.model, messages=self.messages, stream=True,
                                                         max_tokens=self.max_tokens,
                                                         stream_options={"include_usage": True}, **kwargs)
            for chunk in stream:
                if chunk.usage is not None:
                    used = chunk.usage.completion_tokens
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and getattr(delta, "refusal", None):
                        refusal.append(delta.refusal or "")
                    if delta is not None and delta.content is not None:
                        got_content = True
                        content.append(delta.content)
                    for tc in (delta.tool_calls if delta is not None else None) or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            slot["name"] += tc.function.name or ""
                            slot["arguments"] += tc.function.arguments or ""
                    if choice.finish_reason is not None:
                        finish = choice.finish_reason
        except (*self.errors, httpx.HTTPError) as exc:
            return self._failed(caught(exc, self.errors), content, got_content, calls)
        text = "".join(content) if got_content else None
        made = tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items()))
        return Reply(finish, dialects.canonical("openai-chat", finish), text, made, raw=(text, made),
                     refusal="".join(refusal) if refusal else None, at_limit=used >= self.max_tokens)

    def _failed(self, err: ReplyError, content: list[str], got: bool, calls: dict[int, dict[str, str]]) -> Reply:
        made = tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items()))
        text = "".join(content) if got else None
        return Reply(None, "error", text, made, error=err, raw=(text, made))

    def add_reply(self, reply: Reply) -> None:
        text, made = reply.raw
        msg: dict[str, Any] = {"role": "assistant", "content": text if text is not None or made else ""}
        if made:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in made]
        self.messages.append(msg)

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            self.messages.append({"role": "tool", "tool_call_id": r.call.id, "content": r.text})
        if message:
            self.messages.append({"role": "user", "content": message})
