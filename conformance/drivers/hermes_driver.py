"""Drive Hermes agent's own loop (PyPI hermes-agent==0.19.0) against the stopbench replay server.

Run with the Python of a venv where `hermes-agent[anthropic]==0.19.0` is installed, not the bench's
venv, with HOME set to a fresh temporary directory (the conformance runner does this):

    python hermes_driver.py SPEC.json RESULT.json

SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "prompt": "...", "model": "stopbench",
       "wire": "openai-chat" | "openai-responses" | "anthropic" | "gemini", "ok_marker": "STOPBENCH-OK",
       "tools": [{"name": "read_file", "required": ["path"]}, ...]}

The loop is `AIAgent(provider="custom", base_url=..., api_mode=...).run_conversation(prompt)` with
Hermes' defaults (max_iterations 90, api_max_retries 3, no fallback model), quiet, without context
files or memory, `HERMES_HOME` in the temporary directory. `api_mode` follows the wire as
predicates/hermes.py assumes it follows the dialect: chat_completions, codex_responses,
anthropic_messages.

On the Gemini wire the loop runs as a Google user's does: `provider="gemini"` with Google's own base
URL, `https://generativelanguage.googleapis.com/v1beta`, in mode chat_completions. Only that pair
makes Hermes build its native Gemini client (`GeminiNativeClient`, agent/agent_runtime_helpers.py
L1876-1898: provider "gemini" and `is_native_gemini_base_url`, gemini_native_adapter.py L62-69, which
wants Google's host), an OpenAI-shaped facade over `:streamGenerateContent?alt=sse` and
`:generateContent` (gemini_native_adapter.py L930-1001). The driver sends that host to the replay
server beneath Hermes: httpx's transport rewrites a request for Google's host to the server's address
just before it goes out (like a hosts-file entry), so every line of Hermes runs as it would against
Google.

Two changes that affect timing only, never a decision: `tool_delay=0` (the default sleeps 1 s
between tool calls, agent/tool_executor.py L1725-1726), and the retry backoff
(`jittered_backoff`, agent/retry_utils.py L36-67, 2-120 s per retry) is made 0 s where the loop
calls it (agent/conversation_loop.py L1701, L4318), so a run of error turns does not take minutes.

Every tool is a stub registered in Hermes' tool registry (`tools.registry.registry.register`, with
`override=True` where the name is one of Hermes' own tools, e.g. read_file) in a toolset
`stopbench`, the only toolset enabled. Its handler answers "<ok_marker> <name>" and touches
nothing; when a required argument is missing it answers Hermes' `tool_error(...)` JSON instead
(the built-in tools do the same), which does not carry the ok marker.

RESULT: {"ok": completed, "reason": ..., "final": str | null, "error": str | null}. The reason is
the result's `turn_exit_reason` where the loop breaks (`text_response(finish_reason=X)` with X
outside predicates/hermes.py LABELS shown as `<unlisted>`), else a short name for the fixed text
of the `error` / `final_response` that the loop returns directly, as predicates/hermes.py names
them; text no rule below knows gives `unmapped: <text>`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

LABELS = ("stop", "tool_calls", "function_call", "tool_call", "other", "end")  # predicates/hermes.py
MODES = {"openai-chat": "chat_completions", "openai-responses": "codex_responses",
         "anthropic": "anthropic_messages", "gemini": "chat_completions"}
GOOGLE_HOST = "generativelanguage.googleapis.com"
GOOGLE_BASE = f"https://{GOOGLE_HOST}/v1beta"  # gemini_native_adapter.py L42, DEFAULT_GEMINI_BASE_URL

# (where, prefix, reason): fixed texts of the result dicts conversation_loop.py returns directly
RETURNED = (
    ("error", "content_policy_blocked", "content_policy_blocked"),               # L540-559
    ("final_response", "API call failed after", "api_failed_after_retries"),     # L4262
    ("final_response", "Invalid API response after", "invalid_api_response"),    # L1690
    ("final_response", "Context length exceeded", "context_length_exceeded"),    # L3675, L3787, L3832
    ("final_response", "Request payload too large", "context_length_exceeded"),  # L3546, L3602
    ("final_response", "Model generated invalid tool call", "invalid_tool_call"),  # L4770
    ("error", "Response remained truncated after", "truncated_after_continuations"),  # L2088
    ("error", "Response truncated due to output length limit", "response_truncated"),  # L2171, L4857
    ("error", "First response truncated", "response_truncated"),                 # L2184
    ("final_response", "⚠️ **Thinking Budget Exhausted**", "thinking_budget_exhausted"),  # L1960-1977
    ("error", "Incomplete REASONING_SCRATCHPAD", "incomplete_scratchpad"),       # L4572
    ("error", "Codex response remained incomplete", "codex_incomplete_exhausted"),  # L4701
)


def reason_of(res: dict[str, Any]) -> str:
    exit_reason = res.get("turn_exit_reason")
    if isinstance(exit_reason, str) and exit_reason != "unknown":
        if exit_reason.startswith("text_response(finish_reason="):
            label = exit_reason[len("text_response(finish_reason="):-1]
            return f"text_response(finish_reason={label if label in LABELS else '<unlisted>'})"
        return exit_reason
    for key, prefix, reason in RETURNED:
        text = res.get(key)
        if isinstance(text, str) and text.startswith(prefix):
            return reason
    final, error = res.get("final_response"), res.get("error")
    if res.get("failed") and isinstance(error, str) and final == error:
        return "non_retryable_client_error"  # L4097-4104: final_response and error are the summary
    return f"unmapped: {str(error or final)[:80]}"


def send_google_to(server: str) -> None:
    """Send every httpx request for Google's Gemini host to `server` (the replay server's root),
    the path and query kept: the network under Hermes, never Hermes' own code."""
    import httpx

    target = httpx.URL(server)
    sync_send = httpx.HTTPTransport.handle_request
    async_send = httpx.AsyncHTTPTransport.handle_async_request

    def moved(request: httpx.Request) -> httpx.Request:
        if request.url.host == GOOGLE_HOST:
            request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
            request.headers["Host"] = target.netloc.decode("ascii")
        return request

    def handle_request(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        return sync_send(self, moved(request))

    async def handle_async_request(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        return await async_send(self, moved(request))

    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    home = Path(os.environ.get("HOME") or os.getcwd()) / ".hermes"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(home)
    marker = spec.get("ok_marker", "STOPBENCH-OK")

    import agent.conversation_loop as loop
    from run_agent import AIAgent
    from tools.registry import registry, tool_error

    def no_wait(*args: Any, **kwargs: Any) -> float:
        return 0.0

    loop.jittered_backoff = no_wait  # timing only (see the docstring)

    for tool in spec.get("tools", []):
        name, required = tool["name"], list(tool.get("required", []))

        def handler(args: dict[str, Any], *_: Any, _name: str = name, _req: list[str] = required,
                    **__: Any) -> str:
            missing = [k for k in _req if not isinstance(args, dict) or k not in args]
            if missing:
                return tool_error(f"missing required argument(s): {', '.join(missing)}")
            return f"{marker} {_name}"

        schema = {"name": name, "description": f"stopbench stub for {name}",
                  "parameters": {"type": "object", "properties": {k: {"type": "string"} for k in required},
                                 "required": required}}
        registry.register(name=name, toolset="stopbench", schema=schema, handler=handler, override=True)

    wire = spec.get("wire", "openai-chat")
    base_url = spec["base_url"]
    provider = "custom"
    if wire == "anthropic" and base_url.endswith("/v1"):
        base_url = base_url[: -len("/v1")]  # the Anthropic client appends /v1/messages
    if wire == "gemini":
        send_google_to(base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url)
        provider, base_url = "gemini", GOOGLE_BASE
    result: dict[str, Any] = {"ok": None, "reason": None, "final": None, "error": None}
    try:
        agent = AIAgent(base_url=base_url, api_key="sk-stopbench", model=spec.get("model", "stopbench"),
                        provider=provider, api_mode=MODES[wire], enabled_toolsets=["stopbench"],
                        quiet_mode=True, skip_context_files=True, skip_memory=True, tool_delay=0.0)
        res = agent.run_conversation(spec.get("prompt", "stopbench conformance run"))
    except Exception as exc:  # anything Hermes lets out of run_conversation
        result.update(ok=False, reason="exception", error=f"{type(exc).__name__}: {exc}")
    else:
        result.update(ok=bool(res.get("completed")), reason=reason_of(res), final=res.get("final_response"),
                      error=res.get("error"))
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump(result, fh, ensure_ascii=False, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
