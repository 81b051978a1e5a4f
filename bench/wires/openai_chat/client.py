"""The reference loop's Chat Completions client: ``openai.OpenAI``, streamed (its raw events: only they
show whether ``[DONE]`` came), its retries off."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
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
    chat_messages,
    cut_error,
    function_tools,
)


class Chat(OfficialClient):
    """Chat Completions over ``openai.OpenAI`` (streamed)."""

    api: Dialect = "openai-chat"

    def __init__(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                 system: str | None = None) -> None:
        import openai
        super().__init__(client, openai, model)
        self.messages = chat_messages(prompt, system)
        self.tools = function_tools(tools)
        self.max_tokens = MAX_TOKENS

    def ask(self) -> Reply:
        got = _Chunks()
        try:
            kwargs: dict[str, Any] = {"tools": self.tools} if self.tools else {}
            # the raw events, not the client's parsed chunks: only they show whether [DONE] came (a
            # stream without it nor a finish was cut), and a frame that does not parse is ours to judge
            with self.client.chat.completions.with_streaming_response.create(
                    model=self.model, messages=self.messages, stream=True, max_tokens=self.max_tokens,
                    stream_options={"include_usage": True}, **kwargs) as response:
                for data in _sse_data(sse_lines(response.iter_bytes())):
                    if data.startswith("[DONE]"):
                        got.done = True
                        break
                    chunk = json.loads(data)
                    if not isinstance(chunk, dict):
                        raise ValueError(f"a chunk that is not an object: {data[:60]!r}")
                    if isinstance(chunk.get("error"), dict):
                        err = chunk["error"]
                        api_error: Any = self.errors[0]  # as the client raises an error event
                        raise api_error(str(err.get("message") or "An error occurred during streaming"),
                                        request=response.http_request, body=err)
                    got.feed(chunk)
        except ValueError as exc:  # a frame that does not parse: a broken answer, resent, never a crash
            return got.failed(broken_frame(exc))
        except (*self.errors, *self.transport) as exc:
            return got.failed(caught(exc, self.errors))
        if not got.done and (got.finish is None or got.used is None):
            # no [DONE], and no finish or no usage chunk after it (asked for with include_usage, and read
            # for rule 3's hidden truncation): the stream ended early; only a lost [DONE] leaves it whole
            return got.failed(cut_error("[DONE]"))
        text, made = got.text(), got.made()
        return Reply(got.finish, dialects.canonical("openai-chat", got.finish), text, made, raw=(text, made),
                     refusal="".join(got.refusal) if got.refusal else None,
                     at_limit=(got.used or 0) >= self.max_tokens)

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


class _Chunks:
    """What a stream's chunks have said so far: content and refusal pieces, tool calls by index, the
    finish reason, the usage chunk's output tokens, whether ``[DONE]`` came."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.got_content = False
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.used: int | None = None
        self.done = False

    def feed(self, chunk: dict[str, Any]) -> None:
        """One chunk: its usage, and each choice's delta and finish reason."""
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.used = int(usage.get("completion_tokens") or 0)
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            if delta.get("content") is not None:
                self.got_content = True
                self.content.append(delta["content"])
            for tc in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                function = tc.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason") is not None:
                self.finish = choice["finish_reason"]

    def text(self) -> str | None:
        return "".join(self.content) if self.got_content else None

    def made(self) -> tuple[Call, ...]:
        return tuple(Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(self.calls.items()))

    def failed(self, err: ReplyError) -> Reply:
        """The reply in place of an answer: what came before `err`, and the error."""
        text, made = self.text(), self.made()
        return Reply(None, "error", text, made, error=err, raw=(text, made))


_EOL = re.compile(rb"\r\n|\r|\n")


def sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of a server-sent event stream, split only where the SSE format ends a line (CR LF,
    CR or LF: html.spec.whatwg.org, server-sent events, "Parsing an event stream"). Not
    ``str.splitlines``, which also splits inside a JSON string at U+0085, U+2028 and the other
    Unicode line breaks a model may write into its arguments. Raises UnicodeDecodeError (a
    ValueError: a broken frame) on bytes that are not UTF-8."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        while (m := _EOL.search(buf)) is not None:
            if m.group() == b"\r" and m.end() == len(buf):
                break  # a CR at the end of a chunk may be the first half of a CR LF
            yield buf[:m.start()].decode("utf-8")
            buf = buf[m.end():]
    for line in _EOL.split(buf) if buf else ():
        yield line.decode("utf-8")


def _sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The data of each server-sent event (its ``data:`` lines joined), in order."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)
