"""The reference loop's Responses client: ``openai.OpenAI``, streamed, stateless (the whole input
every time), its retries off."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.engine.model import Dialect
from bench.wires import dialects
from bench.wires.client import (
    MAX_TOKENS,
    Call,
    OfficialClient,
    Reply,
    ReplyError,
    Result,
    broken_frame,
    caught,
    cut_error,
    reply_error,
)


class Responses(OfficialClient):
    """The Responses API over ``openai.OpenAI`` (streamed, stateless: the whole input every time)."""

    api: Dialect = "openai-responses"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        import openai
        super().__init__(client, openai, model)
        self.system = system
        self.input: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.tools = [{"type": "function", "name": t["name"], "description": t.get("description", ""),
                       "parameters": t["parameters"], "strict": False} for t in tools]
        self.max_tokens = MAX_TOKENS

    def ask(self) -> Reply:
        items: dict[int, dict[str, Any]] = {}
        final: dict[str, Any] | None = None
        err: ReplyError | None = None
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            if self.system:
                kwargs["instructions"] = self.system
            stream = self.client.responses.create(model=self.model, input=self.input, stream=True, store=False,
                                                  max_output_tokens=self.max_tokens, **kwargs)
            for event in stream:
                kind = event.type
                if kind == "response.output_item.done":
                    items[event.output_index] = event.item.model_dump()
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    final = event.response.model_dump()
                elif kind == "error":
                    err = reply_error(None, str(event.code or "error"), str(event.message), in_stream=True)
        except ValueError as exc:  # a frame that does not parse: a broken answer, resent, never a crash
            err = broken_frame(exc)
        except (*self.errors, *self.transport) as exc:
            err = caught(exc, self.errors)
        if err is None and final is None:
            err = cut_error("response.completed")
        ordered = [i for _, i in sorted(items.items())]
        texts = ["".join(p.get("text", "") for p in i.get("content") or []) for i in ordered if i["type"] == "message"]
        made = tuple(Call(i.get("call_id", ""), i.get("name", ""), i.get("arguments", ""))
                     for i in ordered if i["type"] == "function_call")
        text = "".join(texts) if texts else None
        refusals = [p.get("refusal") or "" for i in ordered if i["type"] == "message" for p in i.get("content") or []
                    if p.get("type") == "refusal"]
        if err is not None:
            return Reply(None, "error", text, made, error=err, raw=ordered)
        raw: str | None = None
        end_turn: bool | None = None
        if final is not None:
            status = final.get("status")
            reason = (final.get("incomplete_details") or {}).get("reason")
            raw = f"{status}/{reason}" if status == "incomplete" and reason else status
            flag = final.get("end_turn")
            end_turn = flag if isinstance(flag, bool) else None
            if status == "failed":
                e = final.get("error") or {}
                return Reply(raw, dialects.canonical("openai-responses", raw), text, made, end_turn,
                             reply_error(None, str(e.get("code") or "failed"), str(e.get("message") or "")),
                             raw=ordered)
        used = ((final or {}).get("usage") or {}).get("output_tokens") or 0
        return Reply(raw, dialects.canonical("openai-responses", raw), text, made, end_turn, raw=ordered,
                     refusal="".join(refusals) if refusals else None, at_limit=used >= self.max_tokens)

    def add_reply(self, reply: Reply) -> None:
        for item in reply.raw:
            if item["type"] == "message":
                text = "".join(p.get("text", "") for p in item.get("content") or [])
                self.input.append({"role": "assistant", "content": text})
            elif item["type"] == "function_call":
                self.input.append({"type": "function_call", "call_id": item.get("call_id", ""),
                                   "name": item.get("name", ""), "arguments": item.get("arguments", "")})

    def add_results(self, results: Sequence[Result], message: str | None = None) -> None:
        for r in results:
            self.input.append({"type": "function_call_output", "call_id": r.call.id, "output": r.text})
        if message:
            self.input.append({"role": "user", "content": message})
