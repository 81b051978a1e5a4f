"""Hermes agent's conversation loop: length continuation, truncated-call resend, empty-response recovery.

Pin: NousResearch/hermes-agent, PyPI sdist ``hermes-agent==0.19.0`` (MIT licence), read with line
numbers from ``/tmp/h/hermes_agent-0.19.0`` (``pip download hermes-agent==0.19.0 --no-deps
--no-binary :all:``). The issue pins commit ``56dc01d9`` (upstream main, 2026-08-10, pyproject
version 0.20.0, never released). The repository (about 4.7 GB) could not be fetched here, so the
nearest release stands in for it: PyPI has 0.13.0 to 0.19.0 and nothing newer; the 0.19.0 sdist's
files are dated 2026-07-20 (PKG-INFO mtime), three weeks before 56dc01d9; 0.18.2 is older still.
Differences between 0.19.0 and 56dc01d9 are unknown (see the golden header).

Files read (line numbers are of the 0.19.0 sdist):
``agent/conversation_loop.py`` (the turn loop, ``run_conversation`` body), ``agent/turn_finalizer.py``
(post-loop: max-iterations summary, ``completed``), ``agent/chat_completion_helpers.py``
(``handle_max_iterations``), ``agent/transports/chat_completions.py`` / ``anthropic.py``,
``agent/gemini_native_adapter.py`` (finish-reason mapping), ``agent/error_classifier.py``
(``classify_api_error``), ``agent/agent_init.py`` (defaults), ``agent/agent_runtime_helpers.py``
(``strip_think_blocks``, ``looks_like_codex_intermediate_ack``, ``try_recover_primary_transport``).

Configuration ported: the defaults. ``max_iterations=90`` (agent_init.py L287),
``agent.api_max_retries=3`` (agent_init.py L1586-1594), no fallback provider configured (so every
``_try_activate_fallback()`` branch is a no-op: content filter stops at once, empty responses are not
retried on another model), ``tool_loop_guardrails.hard_stop_enabled=False`` (hermes_cli/config.py
L1449-1451: no guardrail halt), ``intent_ack_continuation="auto"`` (only in codex_responses mode),
no ``HERMES_KANBAN_TASK`` (no kanban nudge), no ``pre_verify`` plugin hook. ``verify_on_stop`` is
on by default for programmatic callers but fires only when the turn recorded file mutations
(``_turn_file_mutation_paths``); the bench's tools are stubs that change no file, so it never fires
here. Every tool name in a sequence is taken to be a registered tool (``valid_tool_names``) except
Hermes streams in chat_completions mode, and its stream accumulator
(``agent/chat_completion_helpers.py``), not the non-streamed transport, makes the finish string: no
finish_reason after text without tool calls, or with cut-off tool arguments, is a partial-stream stub
with finish 'length'; unparseable arguments make 'length' whatever was sent; transient stream errors
are retried twice with a fresh connection first (rules ``stream-stub-continue``, ``stream-retry``;
found by running the original loop, ``stopbench conform hermes``). ``partial_stream_recovery`` (text
streamed before an error) is not modelled.

Dialect: Hermes picks its mode (``api_mode``) from the provider, and each mode has its own finish
mapping. The mode follows the sequence's dialect (``State.dialect``: openai-chat ->
chat_completions, anthropic -> anthropic_messages, gemini -> the Gemini native adapter,
openai-responses -> codex_responses); ``api_mode`` can also infer it from the raw finish string
(the four vocabularies do not overlap). Anthropic -> ``anthropic_messages``
(``AnthropicTransport._STOP_REASON_MAP``, unknown -> "stop"); Gemini raws -> the Gemini native
adapter, a chat_completions-shaped client (``_map_gemini_finish_reason``: tool_calls when the
candidate has function calls, else STOP/MAX_TOKENS/SAFETY/RECITATION/OTHER, unknown -> "stop";
Hermes uses it only for provider "gemini" on Google's host, agent_runtime_helpers.py L1876-1898, so
that is the configuration ported for Gemini: its profile sets no max_tokens, see GEMINI_WIRE_MAX_TOKENS);
Responses raws -> ``codex_responses`` (status incomplete with any reason but content_filter ->
"incomplete", codex_responses_adapter.py L1175, L1439-1440; incomplete + content_filter ->
"content_filter"; else "stop"; failed/cancelled -> invalid
response); anything else, or no finish at all -> ``chat_completions`` (the raw string verbatim,
None -> "stop"). Bedrock -> ``bedrock_converse`` (by dialect only: four of its strings are
Anthropic's): ``agent/bedrock_adapter.py`` streams with ``converse_stream`` (chat_completion_helpers.py
L2274-2321) and normalises the events to a chat_completions-shaped response
(``normalize_converse_stream_events`` L798-970): ``_converse_stop_reason_to_openai`` (L705-715:
end_turn/stop_sequence -> stop, tool_use -> tool_calls, max_tokens -> length, content_filtered and
guardrail_intervened -> content_filter, anything else, malformed_* and model_context_window_exceeded
included -> "stop"), no messageStop -> end_turn (L932), "stop" with tool calls -> "tool_calls"
(L960-962), a tool input that does not parse -> {} (L913-925); the boto3 client is built with no
Config (L91-101), so botocore's standard retries (2, on 429/500/502/503/504) come before Hermes's own.
A sequence of a dialect no Hermes mode speaks (Ollama's native API, Cohere's) reaches Hermes in
chat_completions mode (how it reaches Ollama and other OpenAI-compatible servers): read as the
replay server serves it on Chat Completions (:func:`served_on_chat`).

Counting: Hermes' ``max_iterations`` counts iterations of the outer ``while`` (``api_call_count``),
not requests. Resends made inside the inner retry loop (API errors, invalid responses, truncated
tool calls) do not count; the port keeps its own count in ``state.memo`` and declares no bench
cap. When the 90th iteration does not end the loop, ``finalize_turn`` makes one more, toolless
summary request (and a second one if the summary is empty), then stops with
``max_iterations_reached(90/90)``, not completed.

Stop reasons are Hermes' ``_turn_exit_reason`` values where the loop ``break``s, and short names
of the ``error`` string where it ``return``s a result dict directly (those set no exit reason).
``ok`` is the result's ``completed``. Hermes prints ``text_response(finish_reason=<its string>)``
with the raw string verbatim; strings outside a short list are shown as ``<unlisted>`` here so
that the declared reason set stays finite.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from bench import (
    ALL,
    TABLES,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Remind,
    RequestChanges,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    predicate,
)

PIN = Source("NousResearch/hermes-agent", version="0.19.0", release="PyPI sdist; nearest release to 56dc01d9")
LOOP = PIN.file("agent/conversation_loop.py")
FIN = PIN.file("agent/turn_finalizer.py")

MAX_ITERATIONS = 90  # agent_init.py L287, run_agent.py L434
API_MAX_RETRIES = 3  # agent_init.py L1586-1594, hermes_cli/config.py L1042
MAX_COMPRESSION_ATTEMPTS = 3  # conversation_loop.py L1219
DEFAULT_CONTEXT = 256_000  # model_metadata.py L179-189 DEFAULT_FALLBACK_CONTEXT: the served model is unknown
# context_compressor.py L3353-3356: protect_first_n (3, L1310) + 3 tail + 1; `messages` has no system
# prompt (conversation_loop.py L962 prepends it to api_messages only)
COMPRESS_MIN_MESSAGES = 3 + 3 + 1

# The output budget of each request. The custom provider's profile gives no max_tokens of the user's,
# so every request carries the profile's default (plugins/model-providers/custom/__init__.py L95-101,
# default_max_tokens=65536; agent/transports/chat_completions.py L563-578: ephemeral > user > profile).
# A length continuation and a truncated-call retry boost it (conversation_loop.py L4418-4432 and
# L2117-2124): min(max(base * 2**n, requested), max(32768, requested)) with base = agent.max_tokens or
# 4096 (None here) and `requested` the cap of the request that was cut. With requested = 65536 the boost
# is 65536 again: the next request does not change max_tokens (driving 0.19.0 showed 65536 on every
# request of seed000-truncated-max-tokens and chat-length-cut-json-repeat).
REQUESTED_MAX_TOKENS = 65536  # plugins/model-providers/custom/__init__.py L100
BOOST_BASE = 4096  # conversation_loop.py L4425, L2118: agent.max_tokens or 4096
BOOST_CAP = 32768  # conversation_loop.py L4430, L2122


# On the Gemini wire (provider "gemini", its native client) the profile has no default_max_tokens
# (plugins/model-providers/gemini/__init__.py L50-58, ProviderProfile's default None), so the request
# has no cap and `requested` is None (run_agent.py L1482-1494): the n-th boost is 4096 * 2**n, at most
# 32768. The native client sends maxOutputTokens 65535 when the request has none
# (gemini_native_adapter.py L42-49, L459-472), and a boost is ephemeral, consumed by the one request it
# is made for (chat_completion_helpers.py L1163-1166), so the request after it is back at 65535. Driving
# 0.19.0 on gemini-max-tokens-empty showed maxOutputTokens 8192 on the continuation request.
GEMINI_WIRE_MAX_TOKENS = 65535  # gemini_native_adapter.py L49 GEMINI_DEFAULT_MAX_OUTPUT_TOKENS


def boosted(retries: int, requested: int | None = REQUESTED_MAX_TOKENS,
            sent: int | None = None) -> RequestChanges | None:
    """The request change of the n-th boost: a new max_tokens, or None when it equals the one of the
    request before (`sent`, by default the requested cap)."""
    floor = requested or 0
    new = min(max(BOOST_BASE * 2 ** retries, floor), max(BOOST_CAP, floor))
    return None if new == (requested if sent is None else sent) else RequestChanges(max_tokens=new)


COMPACTED = RequestChanges(compact=True)
"""A compression that rewrote the history: the head, a summary and the tail in place of the rest."""

CONTINUE_PROMPT = (
    "[System: Your previous response was truncated by the output length limit. Continue exactly "
    "where you left off. Do not restart or repeat prior text. Finish the answer directly.]"
)
EMPTY_NUDGE = (
    "You just executed tool calls but returned an empty response. Please process the tool "
    "results above and continue with the task."
)
STUB_PROMPT = "(continuation prompt after an interrupted stream, conversation_loop.py L2063-2066)"
CODEX_INCOMPLETE_NUDGE = (
    "[System: Your previous response contained only internal reasoning and never produced a "
    "visible answer or tool call. Do not keep thinking. Produce your final answer as plain text "
    "now (or make the tool call you were planning).]"
)
INTENT_ACK = (
    "[System: Continue now. Execute the required tool calls and only send your final answer "
    "after completing the task.]"
)
SUMMARY_REQUEST = (
    "You've reached the maximum number of tool-calling iterations allowed. Please provide a final "
    "response summarizing what you've found and accomplished so far, without calling any more tools."
)

LABELS = ("stop", "tool_calls", "function_call", "tool_call", "other", "end")
"""Finish strings shown verbatim in ``text_response(...)``; any other string shows as <unlisted>."""

REASON_MAX = f"max_iterations_reached({MAX_ITERATIONS}/{MAX_ITERATIONS})"

_REPEATED_IDS = (
    "The server cannot see the repeated calls run, as on chat-repeat-same-call: the sequence repeats its "
    "rounds (then: repeat) with their call ids as written (conformance serves ids so, bench/serve/repeats.py), "
    "and Hermes' pre-call sanitizer drops a tool call id already seen in an earlier assistant message and the "
    "later result with it (agent/agent_runtime_helpers.py L2804-2848), so once every id of the cycle was "
    "seen the requests add the assistant echo only (driven: 'assistant echo only, nothing added', the "
    "assistant message sent with tool_calls []). The request count (91), the summary request and the stop "
    "(max_iterations_reached(90/90)) agree with the port.")
_RESPONSES_PREFILL = (
    "The server cannot see the thinking prefills, as on responses-reasoning-only: a completed Responses reply "
    "with reasoning and no text is finish 'stop' for a custom backend (codex_responses_adapter.py "
    "L1441-1462), kept as a thinking prefill (conversation_loop.py L5293-5325), and only reasoning items "
    "with encrypted_content are replayed as input (codex_responses_adapter.py L393-404); the server sends "
    "none, so the prefill requests are the request before again: 'resend' on the wire where the port says "
    "'continue thinking-prefill'. Driven: 8 requests, the post-tool nudge, the empty retries and the stop "
    "(empty_response_exhausted) agree.")

CONFORMANCE_EXPLAINED = {
    "anthropic-empty-response-zero-usage": (
        "A real difference, not modelled (said so, not guessed): on the Anthropic wire an empty reply with no "
        "stop reason and zero usage (earendil-works/pi#8233's shape) was sent again twice by the driven Hermes "
        "and the run ended invalid_api_response at step 3, where the port sends it a third time (empty-retry) "
        "and ends as a text response; both end the run without an answer, but the rule that stops Hermes "
        "after two resends of this reply was not found in the pinned lines."),
    "chat-empty-after-tool-call-repeat": (
        "A real difference, not modelled (said so, not guessed): after a tool round, an empty Chat reply with "
        "no finish_reason and zero usage (anomalyco/opencode#28507's shape) was resent by the driven Hermes "
        "eight times and the run ended api_failed_after_retries, where the port appends the post-tool nudge "
        "(post-tool-nudge, L5226-5291) and goes on; a reply with no finish_reason appears to take Hermes' "
        "invalid-response retry path before the empty-response nudge, which the port does not model."),
    "chat-repeat-same-call": (
        "The server cannot see the repeated call run. Every turn repeats call_1; Hermes runs it and "
        "appends the result, but its pre-call sanitizer drops a tool call id already seen in an earlier "
        "assistant message, and a later tool result with an already-seen id "
        "(agent/agent_runtime_helpers.py L2804-2848). From step 2 on, the requests carry no new call "
        "or result, so the server infers 'continue with the assistant echo only' and then 'resend'. "
        "The request count (91) and the stop (max_iterations_reached(90/90), summary request) agree "
        "with the port."),
    "chat-identical-tool-results": (
        "The server cannot see the repeated calls run, as on chat-repeat-same-call: from step 7 on the "
        "last turn repeats (then: repeat), so its call ids come again; Hermes runs them, but its pre-call "
        "sanitizer drops a call id already seen in an earlier assistant message and the later result with "
        "it (agent/agent_runtime_helpers.py L2804-2848), so the request adds the assistant echo only. "
        "Driven 2026-11-30: the stop (max_iterations_reached(90/90)) and the request count (91) agree."),
    "chat-polling-stalls": (
        "The server cannot see the repeated call run, as on chat-repeat-same-call: the last turn repeats "
        "(then: repeat) with its call_4, an id Hermes' pre-call sanitizer drops once seen "
        "(agent/agent_runtime_helpers.py L2804-2848), so from step 5 the requests add the assistant echo "
        "only (then resends). Driven 2026-11-30: the stop (max_iterations_reached(90/90)) and the request "
        "count (92) agree with the port."),
    "chat-reasoning-only-after-tools-repeat": (
        "The server cannot see the second thinking prefill. Hermes appends each reasoning-only reply "
        "as an interim assistant message with no text (conversation_loop.py L5307-5325), so the second "
        "one follows the first directly. The server's reduction merges consecutive assistant items "
        "(bench/serve/observe.py L13-17, _grown_echo L100-122), and an echo that adds neither calls "
        "nor text is a resend there. Steps (8), outcome, reason and ok agree with the port."),
    "chat-todo-then-empty": (
        "The server cannot see the todo call run. 'todo' is one of Hermes' own agent tools: it is "
        "answered by Hermes' todo store, not by the driver's stub in the registry "
        "(agent/tool_executor.py L1247-1262, agent/agent_runtime_helpers.py L2439-2449). Its result "
        "lacks the stub's STOPBENCH-OK marker, so the server counts the call as failed (docs/serve.md, "
        "--ok-marker). The call ran; the next step, the stop and its reason agree with the port."),
    "chat-tool-call-id-reused-per-round": (
        "The server cannot see the second round's call run. Both rounds call search_web with the id "
        "'search_web:0'. Hermes runs the second call and appends its result, but its pre-call sanitizer "
        "drops a tool call id already seen in an earlier assistant message, and a later tool result "
        "with an already-seen id (agent/agent_runtime_helpers.py L2804-2848). So the next request "
        "carries no new call or result: 'continue with the assistant echo only'. Steps, outcome and "
        "reason agree with the port."),
    "rec-gemini-compat-empty-tool-id": (
        "The server cannot match the tool result to the served call. The call's id is '' (Gemini's "
        "OpenAI-compatible endpoint). When Hermes builds the assistant message it gives an empty id a "
        "generated one, call_<sha256[:12]> (agent/chat_completion_helpers.py L1409-1425, "
        "codex_responses_adapter.py L182-191). The tool result goes back under that id, which the "
        "served turn does not have ('result for unknown call id'). Steps, outcome and reason agree."),
    "rec-openai-legacy-function-call": (
        "The server cannot match the tool result to the served call, as on rec-gemini-compat-empty-tool-id: "
        "the legacy function_call is imported as a call with id '' and served so; Hermes gives an empty id "
        "a generated call_<sha256[:12]> (agent/chat_completion_helpers.py L1409-1425) and the result goes "
        "back under it ('result for unknown call id'). Driven 2026-11-30: steps and outcome agree."),
    "rec-openrouter-length-then-stream-error": (
        "By design of the error kinds: Hermes classifies this in-stream error by its words "
        "('Token limit reached' reads as a context overflow, agent/error_classifier.py) and stops "
        "context_length_exceeded; the error is an output-budget chunk after 43 input tokens, recorded as kind "
        "stream_error, and the port reads kinds, not words, so it takes the non-retryable client error path. "
        "Both stop at step 1, not ok (expected/hermes.yaml's header says the same)."),
    "seed001-never-stops-context-overflow": (
        "The server sees Hermes' summary request: with more than 7 messages the compressor asks the model "
        "for a summary in a request of its own (context_compressor.py), which the port does not model (its "
        "context-compress rule says so); the server reads it as 'unknown +compact', then the compacted "
        "retry. The compressions counted, the stop (context_length_exceeded) and ok agree."),
    "guard-ab-cycle": _REPEATED_IDS,
    "guard-cycle-of-five": _REPEATED_IDS,
    "guard-poll-flips": _REPEATED_IDS,
    "guard-poll-never-moves": _REPEATED_IDS,
    "responses-completed-hides-truncation": _RESPONSES_PREFILL,
    "responses-reasoning-only": (
        "The server cannot see the thinking prefill. Hermes appends the reasoning-only reply (for a "
        "custom Responses backend, reasoning with status completed is finish 'stop', "
        "codex_responses_adapter.py L1441-1462; then the prefill, conversation_loop.py L5293-5325). "
        "When the history is converted back to Responses input, only reasoning items that carry "
        "encrypted_content are replayed (codex_responses_adapter.py L393-404), and an assistant "
        "message without text adds no item. The replay server sends no encrypted_content, so the "
        "next request is the same as this one: 'resend' on the wire, the port's 'continue "
        "thinking-prefill' inside the loop. The next turn's answer ends both the same way."),
}
"""Differences between this port and hermes-agent 0.19.0 run by `stopbench conform hermes` that
come from what the replay server can see, not from the loop's decisions (reports/conformance.md)."""

# ---------------------------------------------------------------- modes and finish strings

_ANTHROPIC_RAWS = frozenset(TABLES["anthropic"])
_GEMINI_RAWS = frozenset(TABLES["gemini"])
_RESPONSES_STATUS = frozenset({"completed", "failed", "cancelled", "in_progress", "queued"})
# transports/anthropic.py L234-241
_ANTHROPIC_MAP = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "stop_sequence": "stop", "refusal": "content_filter",
                  "model_context_window_exceeded": "length"}
# gemini_native_adapter.py L486-494
_GEMINI_MAP = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
               "RECITATION": "content_filter", "OTHER": "stop"}


def api_mode(raw: str | None) -> str:
    """The Hermes api_mode a raw finish string belongs to (see the module docstring)."""
    if raw is None:
        return "chat_completions"
    if raw in _ANTHROPIC_RAWS:
        return "anthropic_messages"
    if raw in _GEMINI_RAWS:
        return "gemini_native"
    if raw in _RESPONSES_STATUS or raw.startswith("incomplete"):
        return "codex_responses"
    return "chat_completions"


_MODE_OF_DIALECT = {"openai-chat": "chat_completions", "anthropic": "anthropic_messages",
                    "gemini": "gemini_native", "openai-responses": "codex_responses",
                    "bedrock-converse": "bedrock_converse"}


def served_on_chat(turn: Turn, dialect: str) -> Turn:
    """`turn` of a sequence in a dialect Hermes has no mode for (Ollama's native API, Cohere's v2 chat),
    as the replay server serves it on Chat Completions (bench/wires/base.py ``Wire.finish_for``): Chat's
    string for its canonical finish, else its own raw string (an unknown or error finish)."""
    if dialect in _MODE_OF_DIALECT or dialect not in TABLES or turn.finish_raw is None or turn.finish == "unknown":
        return turn
    raw = next((r for r, e in TABLES["openai-chat"].items() if e.finish == turn.finish), turn.finish_raw)
    return replace(turn, finish_raw=raw)
# bedrock_adapter.py L705-715 _converse_stop_reason_to_openai (anything else -> "stop")
_BEDROCK_MAP = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                "content_filtered": "content_filter", "guardrail_intervened": "content_filter"}
# botocore 1.44.8 retries/standard.py L36 (3 attempts), L469 (500/502/503/504), L510-526 and L549 (429)
BOTOCORE_RETRIES = 2
_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)


def hermes_finish(turn: Turn, mode: str) -> str:
    """The ``finish_reason`` string Hermes works with after its transport normalised the response."""
    raw = turn.finish_raw
    if mode == "bedrock_converse":
        # L932: no messageStop reads as end_turn; L960-962: stop with tool calls is tool_calls
        mapped = _BEDROCK_MAP.get(raw or "end_turn", "stop")
        return "tool_calls" if mapped == "stop" and turn.tool_calls else mapped
    if mode == "anthropic_messages":
        return _ANTHROPIC_MAP.get(raw or "", "stop")
    if mode == "gemini_native":
        # L569 (generateContent), L735-738 (the SSE stream Hermes reads): "tool_calls" when the
        # candidate has calls, else the mapped reason; driven on the 11 Gemini sequences (native client)
        return "tool_calls" if turn.tool_calls else _GEMINI_MAP.get((raw or "").upper(), "stop")
    if mode == "codex_responses":
        # conversation_loop.py L1734-1758 inside the retry loop (content_filter is acted on there,
        # L1784); after it L4451 takes the transport's finish, and codex_responses_adapter.py
        # L1431-1432 says 'tool_calls' whenever the output has function calls, incomplete or not
        if raw == "incomplete/content_filter":
            return "content_filter"
        if turn.tool_calls:
            return "tool_calls"
        if raw is not None and raw.startswith("incomplete"):
            # codex_responses_adapter.py L1175 + L1439-1440: status incomplete makes has_incomplete_items,
            # so finish "incomplete" without a final_answer phase, whatever the reason (content_filter aside,
            # L1133-1134, L1433); driven: responses-incomplete-max-messages, -steered
            return "incomplete"
        if raw == "incomplete/content_filter":
            return "content_filter"
        return "stop"
    # chat_completions streams (the default): the stream accumulator decides, not the non-streamed
    # transport (transports/chat_completions.py L667-671: verbatim, None -> "stop")
    if stream_stub(turn, mode):
        return "length"  # chat_completion_helpers.py L2226: the partial-stream stub says 'length'
    if _truncated_args(turn):
        return "length"  # chat_completion_helpers.py L3042-3044
    return raw or "stop"


def _truncated_args(turn: Turn) -> bool:
    """chat_completion_helpers.py L2934-2957: a call whose non-empty arguments do not parse (the
    repair pass, message_sanitization.py L185-, is not modelled: it rescues what it can close)."""
    for c in turn.tool_calls:
        if c.arguments and c.arguments.strip():
            try:
                json.loads(c.arguments)
            except ValueError:
                return True
    return False


def stream_stub(turn: Turn, mode: str) -> bool:
    """Whether Hermes' chat stream accumulator replaces the turn by a partial-stream stub (no
    finish_reason, and either cut-off tool arguments or text without tool calls;
    chat_completion_helpers.py L2996-3040): finish 'length', no tool calls."""
    if mode != "chat_completions" or turn.finish_raw is not None or turn.error is not None:
        return False
    return _truncated_args(turn) or (bool(turn.content) and not turn.tool_calls)


# ---------------------------------------------------------------- content helpers

_THINK_PAIRS = ("think", "thinking", "reasoning", "REASONING_SCRATCHPAD", "thought")
_TOOL_XML = ("tool_call", "tool_calls", "tool_result", "function_call", "function_calls")


def strip_think(content: str | None) -> str:
    """Visible text of a content string, after Hermes' strip_think_blocks rules
    (agent_runtime_helpers.py L724-849): closed reasoning pairs, tool-call XML blocks, Gemma
    ``<function name=...>`` blocks, an unterminated reasoning tag at a line start, orphan tags."""
    if not content:
        return ""
    text = content
    for tag in _THINK_PAIRS:
        text = re.sub(rf"<{tag}>.*?</{tag}>", "", text, flags=re.DOTALL | re.IGNORECASE)
    for tag in _TOOL_XML:
        text = re.sub(rf"<{tag}\b[^>]*>.*?</{tag}>", "", text, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"(?:(?<=^)|(?<=[\n\r.!?:]))[ \t]*<function\b[^>]*\bname\s*=[^>]*>"
                  r"(?:(?:(?!</function>).)*)</function>", "", text, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"(?:^|\n)[ \t]*<(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)\b[^>]*>.*$",
                  "", text, flags=re.DOTALL | re.IGNORECASE)
    text = re.sub(r"</?(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>\s*", "", text,
                  flags=re.IGNORECASE)
    text = re.sub(r"</(?:tool_call|tool_calls|tool_result|function_call|function_calls|function)>\s*",
                  "", text, flags=re.IGNORECASE)
    return text


def has_visible(content: str | None) -> bool:
    """``_has_content_after_think_block`` (run_agent.py L1496-1517)."""
    return bool(strip_think(content).strip())


_ACK_FUTURE = re.compile(r"\b(i['’]ll|i will|let me|i can do that|i can help with that)\b")
_ACK_ACTIONS = ("look into", "look at", "inspect", "scan", "check", "analyz", "review", "explore",
                "read", "open", "run", "test", "fix", "debug", "search", "find", "walkthrough",
                "report back", "summarize")
_ACK_WORKSPACE = ("directory", "current directory", "current dir", "cwd", "repo", "repository",
                  "codebase", "project", "folder", "filesystem", "file tree", "files", "path")


def looks_like_ack(content: str | None) -> bool:
    """``looks_like_codex_intermediate_ack`` with require_workspace=True (agent_runtime_helpers.py
    L2851-2949), judged on the assistant text only: the bench has no user message, so
    ``user_targets_workspace`` is taken as false."""
    text = strip_think(content).strip().lower()
    if not text or len(text) > 1200 or not _ACK_FUTURE.search(text):
        return False
    if not any(m in text for m in _ACK_ACTIONS):
        return False
    return any(m in text for m in _ACK_WORKSPACE)


# Hermes classifies an error by words in its message and type (classify_api_error; the phrase lists of
# conversation_loop.py and chat_completion_helpers.py cited below). A port reads an error's kind and
# status only, so each list is replaced by the kinds its words answer to:
# - overflow phrases ("context length", "context size", "maximum context", "token limit", "too many
#   tokens", "reduce the length", "exceeds the limit", "context window", "prompt is too long", "prompt
#   exceeds max length", "max_tokens"; or "context" in the type): kind ``context_overflow``;
# - request-validation phrases on a 500/502 ("unknown parameter", "unsupported parameter",
#   "unrecognized request argument", "invalid_request_error", ...): kind ``invalid_request``;
# - transport types ("timeout", "connect", "connection", "remote_protocol", "stream", "network"): the
#   kinds of _TRANSPORT_KINDS;
# - the SSE phrases naming a dropped connection (chat_completion_helpers.py L3400-3411: "connection
#   lost", "connection reset", "peer closed", "broken pipe", ...): kinds of _STREAM_RETRY_KINDS.
# Where the original's words would read an error differently from a person's kind for it (an in-stream
# "Token limit reached" after a `length` finish: "token limit" is an overflow phrase), the port follows
# the kind; the golden file says so for the cell where it shows.
_TRANSPORT_KINDS = ("timeout", "connection_refused", "connection_reset", "stream_cut", "stream_error")
_STREAM_RETRY_KINDS = ("timeout", "connection_refused", "connection_reset")
STREAM_RETRIES = 2  # chat_completion_helpers.py L3227 env_int("HERMES_STREAM_RETRIES", 2)


def _transient_stream_error(turn: Turn) -> bool:
    """chat_completion_helpers.py L3389-3419: a timeout, a connection error, an SSE error without a
    status naming a dropped connection (or a stream parse error / empty stream): retried with a
    fresh connection before the outer retry loop sees it. An HTTP status is never retried here.
    An in-stream error event (kind ``stream_error``) is an SSE APIError, transient only when its text
    names a dropped connection, which is the kind ``connection_reset``."""
    err = turn.error
    if err is None or err.status is not None:
        return False
    return err.kind in _STREAM_RETRY_KINDS


_HOUSEKEEPING = frozenset({"memory", "todo", "skill_manage", "session_search"})


# ---------------------------------------------------------------- rules

RULES = {
    "tools": Cited(LOOP.at("L4707-5157"), text="the response carries tool calls: names and JSON arguments valid, duplicates (same name and arguments) dropped (L4904-4909, run_agent.py L3965-3981), the rest executed (L5061) and the loop continues (L5157); arguments that are valid JSON but not an object (a JSON string holding the object) are not executed: 'Invalid tool arguments' error result (agent/tool_executor.py L79-95, L366, L1062; observed), those calls are failed"),
    "tools-mixed-invalid": Cited(LOOP.at("L4729-4755, L5015-5033"), text="a batch with a blank (unknown) tool name beside valid ones: the invalid calls get error results, the valid ones run"),
    "invalid-tool-name": Cited(LOOP.at("L4756-4805"), text="every call has an unknown (here: blank) name: assistant message plus error tool results (no user message, observed: a continue with the calls failed), ask again; the 3rd time in a row returns partial 'Model generated invalid tool call'"),
    "invalid-json-retry": Cited(LOOP.at("L4860-4870"), text="tool arguments are not valid JSON (and look complete): retry without appending anything, while _invalid_json_retries < 3"),
    "invalid-json-recover": Cited(LOOP.at("L4871-4899"), text="the 3rd invalid-JSON response: append it with error tool results for every call, reset the counter, continue"),
    "truncated-json-stop": Cited(LOOP.at("L4830-4858"), text="invalid JSON arguments that do not end with } or ] (cut off): return partial 'Response truncated due to output length limit'"),
    "text-response": Cited(LOOP.at("L5436-5683"), text="no tool calls and visible content: strip think blocks, (verify/pre_verify/kanban nudges do not fire by default, see docstring) append the answer, _turn_exit_reason = text_response(finish_reason=...), break; NousResearch/hermes-agent@0.19.0 (PyPI sdist; nearest release to 56dc01d9) agent/turn_finalizer.py:L194-202 completed"),
    "intent-ack": Cited(LOOP.at("L5445-5476"), text="codex_responses mode only (intent_ack_continuation 'auto', agent_runtime_helpers.py L2952-2978): an 'I'll look at the repo'-style answer with no tool results yet is answered with '[System: Continue now...]', at most 2"),
    "stream-stub-continue": Cited(PIN.at("agent/chat_completion_helpers.py", "L2996-3040, L2209-2226"), text="chat_completions streams: a stream that ends with no finish_reason after text without tool calls, or with cut-off tool arguments, becomes a partial-stream stub with finish_reason 'length' and no tool calls; NousResearch/hermes-agent@0.19.0 (PyPI sdist; nearest release to 56dc01d9) agent/conversation_loop.py:L2032-2077 then appends it with a continuation prompt (length_continue_retries < 4), as for a truncation (found by conformance)"),
    "bedrock-botocore-retry": Cited(PIN.at("agent/bedrock_adapter.py", "L91-101"), Source(release="PyPI botocore==1.44.8").at("botocore/retries/standard.py", "L36, L469, L510-526, L549-565"), text="bedrock_converse: the cached boto3 client has no Config, so botocore's standard mode retries a 429 or a 500/502/503/504 answer up to 2 times inside one Hermes API call, before the error reaches the conversation loop's own retries"),
    "stream-retry": Cited(PIN.at("agent/chat_completion_helpers.py", "L3227-3240, L3389-3450"), text="chat_completions and anthropic_messages stream: a timeout, connection error or SSE error naming a dropped connection (no HTTP status) is retried with a fresh connection up to HERMES_STREAM_RETRIES=2 times before the outer retry loop counts it (found by conformance)"),
    "post-tool-nudge": Cited(LOOP.at("L5226-5291"), text="empty response and a tool result among the last 5 messages, first time since the last tool round: append '(empty)' and a user nudge, continue"),
    "thinking-prefill": Cited(LOOP.at("L5293-5325"), text="empty visible content but reasoning present: append the message as a thinking prefill and continue, at most 2 (a continue: no harness text is added, the request carries the assistant message only)"),
    "empty-retry": Cited(LOOP.at("L5327-5354"), text="truly empty response: retry without appending anything, while _empty_content_retries < 3"),
    "empty-exhausted": Cited(LOOP.at("L5356-5433"), text="empty after the retries, no fallback configured: _turn_exit_reason = empty_response_exhausted, final_response '(empty)', break; NousResearch/hermes-agent@0.19.0 (PyPI sdist; nearest release to 56dc01d9) agent/turn_finalizer.py:L194-202 counts that as completed"),
    "fallback-prior-content": Cited(LOOP.at("L5200-5224"), text="empty response after a turn whose content came with housekeeping-only tools (memory, todo, skill_manage, session_search): that content is the answer, _turn_exit_reason = fallback_prior_turn_content"),
    "content-filter": Cited(LOOP.at("L1784-1883"), text="finish_reason content_filter (refusal, SAFETY, incomplete/content_filter): no fallback configured, return _content_policy_blocked_result (completed False, failed True)"),
    "length-continue": Cited(LOOP.at("L2032-2077, L4418-4433"), text="finish_reason length, no tool calls: append the partial message and a user continuation prompt, boost max_tokens, ask again while length_continue_retries < 4 (3 times)"),
    "length-exhausted": Cited(LOOP.at("L2079-2089"), text="the 4th truncation without tool calls: return partial 'Response remained truncated after 4 continuation attempts'"),
    "length-tools-resend": Cited(LOOP.at("L2091-2128"), text="finish_reason length with tool calls: do not append the broken response, re-run the same request (inner retry loop) with boosted max_tokens while truncated_tool_call_retries < 4"),
    "length-tools-stop": Cited(LOOP.at("L2129-2155"), text="the 5th truncated tool-call response: refuse to execute, return partial 'Response truncated due to output length limit'"),
    "thinking-exhausted": Cited(LOOP.at("L1931-1978"), text="finish_reason length, no tool calls, content is only a think block: return partial 'Thinking Budget Exhausted'"),
    "scratchpad-retry": Cited(LOOP.at("L4545-4555"), text="an unclosed <REASONING_SCRATCHPAD>: retry without appending, at most 2"),
    "scratchpad-stop": Cited(LOOP.at("L4556-4572"), text="the 3rd unclosed scratchpad: return partial"),
    "codex-incomplete-continue": Cited(LOOP.at("L4578-4691"), text="codex_responses status incomplete (max_output_tokens): keep the interim message (if it has text) and continue while _codex_incomplete_retries < 3; with visible text nothing else is added (a continue), with reasoning only a nudge follows it (a remind, L4630-4647)"),
    "codex-incomplete-duplicate": Cited(LOOP.at("L4591-4622"), text="the same branch when the interim has the same visible text as the interim message just before: it replaces that message in place, so the request is sent again as is (found by conformance)"),
    "codex-incomplete-resend": Cited(LOOP.at("L4578-4691"), text="the same branch when the interim message has no text: nothing is appended (no nudge either: the last message is not an assistant message), so the request is sent again as is"),
    "codex-incomplete-stop": Cited(LOOP.at("L4693-4701"), text="the 3rd incomplete response in a row: return partial 'Codex response remained incomplete after 3 continuation attempts'"),
    "invalid-response-retry": Cited(LOOP.at("L1493-1570, L1572-1598, L1700-1731"), text="response fails validation (Responses status failed/cancelled, or empty output): retry_count += 1, backoff, re-run the request (inner loop)"),
    "invalid-response-stop": Cited(LOOP.at("L1674-1698"), text="retry_count reaches api_max_retries (3): return failed 'Invalid API response after 3 retries'"),
    "api-error-retry": Cited(LOOP.at("L3126, L4318-4380"), text="retryable API error (classify_api_error: 429, 5xx, transport): retry_count += 1, backoff, re-run the request (inner loop)"),
    "api-error-recover": Cited(LOOP.at("L4106-4123"), PIN.at("agent/agent_runtime_helpers.py", "L1124-1160"), text="retries used up on a transient transport error (timeout, connection): rebuild the client once, retry_count = 0, try again"),
    "api-error-stop": Cited(LOOP.at("L4106, L4124-4270"), text="retry_count reaches 3, no recovery and no fallback: return failed 'API call failed after 3 retries'"),
    "api-content-policy": Cited(LOOP.at("L4084-4095, L537-560"), PIN.at("agent/error_classifier.py", "L650-663, L382-402"), text="the classifier's first rule: the provider's safety filter refused the prompt (its patterns: OpenAI's 'violates our usage policies', Azure's content_filter / ResponsibleAIPolicyViolation, ...; the port reads the error kind content_filter those patterns answer to): not retryable, no fallback configured, return failed 'content_policy_blocked' at once (found by driving 0.19.0 on rec-azure-prompt-filter-error)"),
    "api-error-fatal": Cited(LOOP.at("L3899-4100"), text="non-retryable client error (4xx other than 408/429/402 and context overflow; 5xx request-validation bodies, error_classifier.py L1074-1091): no fallback, return failed at once"),
    "context-compress": Cited(LOOP.at("L3780-3826, L4387-4405"), text="context overflow: compress and re-run the request (the iteration is refunded), at most 3 compressions; a compression counts as done when the error reports a window below the current one (L3738-3760, L3815; model_metadata.py L1238-1285, the window starts at 256,000, L179-189) or the conversation has more than 7 messages to summarise (context_compressor.py L3353-3356; the summary's own request is not modelled)"),
    "context-uncompressible": Cited(LOOP.at("L3798-3840"), text="context overflow that compression cannot shrink: at most 7 messages (context_compressor.py L3353-3356: protect_first_n 3 + 3 tail + 1 returns them unchanged) and no window below the current one in the error, so 'Context length exceeded (N tokens). Cannot compress further.' is returned (found by conformance; L3546-3608 do the same for a 413, which reports no window)"),
    "context-exhausted": Cited(LOOP.at("L3780-3796"), text="a 4th overflow: return failed 'Context length exceeded: max compression attempts (3) reached'"),
    "max-iterations-summary-request": Cited(LOOP.at("L721"), PIN.at("agent/chat_completion_helpers.py", "L1903-1912"), text="the 90th iteration continues the loop, which then ends; the next request asks for a summary: the tool results and a new user message (found by conformance)"),
    "max-iterations-summary-retry": Cited(PIN.at("agent/chat_completion_helpers.py", "L2094-2143"), text="the summary came back with empty content: one more toolless request"),
    "max-iterations": Cited(
        LOOP.at("L721"), FIN.at("L94-135, L194-202"), PIN.at("agent/chat_completion_helpers.py", "L1903-2151"),
        text=f"the loop exits after {MAX_ITERATIONS} iterations; turn_finalizer.py asks for a summary "
             f"(chat_completion_helpers.py L1903-2151, tools stripped), _turn_exit_reason = {REASON_MAX}; "
             "L194-202 not completed"),
}

REASONS = [f"text_response(finish_reason={x})" for x in (*LABELS, "<unlisted>")] + [
    "empty_response_exhausted", "fallback_prior_turn_content", "content_policy_blocked",
    "thinking_budget_exhausted", "truncated_after_continuations", "response_truncated",
    "incomplete_scratchpad", "codex_incomplete_exhausted", "invalid_tool_call",
    "invalid_api_response", "api_failed_after_retries", "non_retryable_client_error",
    "context_length_exceeded", REASON_MAX,
]


def _memo(state: State) -> dict[str, Any]:
    m = state.memo
    if not m:
        m.update(
            api=0,            # api_call_count (outer iterations started)
            inner=False,      # the previous decision was a retry inside the inner loop
            retry=0,          # retry_count, reset at each outer iteration (L1216)
            recovered=False,  # _retry.primary_recovery_attempted
            compress=0,       # compression_attempts (L686)
            length=0,         # length_continue_retries (L683; reset only on a final answer)
            trunc_tools=0,    # truncated_tool_call_retries (reset after tools ran, L5089)
            empty=0, prefill=0, nudged=False, prefill_tail=False,
            inv_json=0, inv_tool=0, codex_inc=0, scratch=0, ack=0,
            lcwt=None, lcwt_hk=False,  # _last_content_with_tools / ..._all_housekeeping
            last5=["user"],   # roles of the last five messages
            any_tool=False,   # a tool message anywhere in this turn's messages
            summary=0,        # summary requests made after the loop ended
            stream=0,         # stream retries of the current API call (HERMES_STREAM_RETRIES)
            boto=0,           # botocore's own retries of the current Bedrock call
            messages=1,       # len(messages): the prompt, then each appended message
            ctx=DEFAULT_CONTEXT,  # compressor.context_length, lowered by a provider-reported limit
            interim=None,     # visible output of the last message, when it is a Codex incomplete interim
            sent_max=GEMINI_WIRE_MAX_TOKENS,  # Gemini wire: maxOutputTokens of the last request
            boost=False,      # this decision boosted max_tokens
        )
    return m


def _append(m: dict[str, Any], *roles: str) -> None:
    m["messages"] += len(roles)
    last5 = (m["last5"] + list(roles))[-5:]
    m["last5"] = last5
    if "tool" in roles:
        m["any_tool"] = True
    m["prefill_tail"] = False
    m["interim"] = None


_SURVIVES_BEFORE_STOP = "a reset a few lines before the loop stops: nothing reads the memo after a stop"
_SURVIVES_API_MODE = (
    "api_mode() is consulted only when State.dialect is not one of the four dialects, and the catalogue's "
    "sequences always name one"
)
_SURVIVES_AUX_SUMMARY = (
    "when an overflow comes after 6 to 9 messages: Hermes would then summarise with a request to its "
    "auxiliary model, which the port does not model and the replay server would answer with a turn, so no "
    "such sequence is added"
)
_SURVIVES_CODEX_INCOMPLETE = (
    "the codex-incomplete path without text is declared unreachable (see the predicate); with reasoning text "
    "the interim message has just been appended, so the last message is an assistant message whatever this "
    "line asks"
)
_SURVIVES_BOOST_DEFAULT = (
    "the max_tokens boost is computed against the custom provider's default of 65,536, the cap of every "
    "request Hermes sends here, so it never changes max_tokens: a constant moved by one still gives the "
    "request's own cap (the formula itself is pinned by tests/ports/test_hermes.py)"
)
_SURVIVES_GEMINI_BOOST = (
    "no Gemini sequence goes on after a length continuation (gemini-max-tokens-empty and "
    "rec-gemini-max-tokens-no-parts end on the boosted request), so the request after a boost, back at the "
    "native client's 65,535, and a second boost appear in no cell; pinned by tests/ports/test_hermes.py (the "
    "boost goes 8192, 16384, then 65535)"
)
MUTATION_NOTES = (
    MutationNote(
        "_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)",
        "502 and 504: Bedrock names no exception with either status (service-2.json: InternalServerException 500, ServiceUnavailableException 503), only a proxy in front of it sends them, and no sequence does; tests/ports/test_bedrock_paths.py pins both",
        ("502 -> 503", "502 -> 501", "504 -> 505", "504 -> 503"),
        equivalent=False,
    ),
    MutationNote(
        "if i not in cut and (decision.run == ALL or i in decision.run))",
        "only a Bedrock turn with a cut tool input beside a whole one reaches the test; no sequence has one "
        "(bedrock-stream-cut-mid-tool-use has one call); tests/ports/test_bedrock_paths.py pins it",
        ("== -> !=",),
        equivalent=False,
    ),
    MutationNote(
        "(400 <= status < 500 and status not in (402, 408, 429))",
        "there is no HTTP status 399",
        ("400 -> 399",),
    ),
    MutationNote('m["ack"] = 0', _SURVIVES_BEFORE_STOP, next='m["length"] = 0'),
    MutationNote('m["length"] = 0', _SURVIVES_BEFORE_STOP, next="label = "),
    MutationNote("if raw is None:", _SURVIVES_API_MODE),
    MutationNote("len(text) > 1200", "no intent-ack candidate text is near 1,200 characters", equivalent=False),
    MutationNote("retry=0,", "the outer iteration sets retry to 0 before it is read"),
    MutationNote(
        'm["summary"] = 2',
        "only `summary == 1` is tested; any other non-zero value means the summary retry was made",
        ("2 -> 3",),
    ),
    MutationNote(
        'last5 = (m["last5"] + list(roles))[-5:]',
        "a tool message exactly five messages back; no sequence places one there",
        equivalent=False,
    ),
    MutationNote.reset_after_success('m["stream"] = 0'),
    MutationNote.reset_after_success('m["scratch"] = 0'),
    MutationNote.reset_after_success('m["retry"] = 0  # the outer loop'),
    MutationNote.reset_after_success('m["codex_inc"] = 0'),
    MutationNote.reset_after_success('m["inv_tool"] = 0'),
    MutationNote.reset_after_success('m["inv_json"] = 0'),
    MutationNote.reset_after_success('m["prefill"] = 0'),
    MutationNote.reset_after_success('m["empty"] = 0'),
    MutationNote(
        "if not all_hk:",
        "a housekeeping-only tool turn with text, then a substantive tool turn, then an empty reply; no "
        "sequence has that order",
        equivalent=False,
    ),
    MutationNote(
        'if m["prefill_tail"]:',
        "a thinking prefill followed by a tool turn and then an empty reply; no sequence has that order",
        equivalent=False,
    ),
    MutationNote(
        'if (not structured or m["prefill"] >= 2) and m["empty"] < 3:',
        "with reasoning and fewer than 2 prefills the prefill branch above returns first, so `>= 1` "
        "and `>= 2` agree wherever this line is reached",
        ("2 -> 1",),
    ),
    MutationNote(
        "if status == 413 or (overflow and (status is None or status == 400 or status >= 500)):",
        "no sequence answers HTTP 413 or an overflow message with a 5xx status",
        equivalent=False,
    ),
    MutationNote(
        "(400 <= status < 500 and status not in (402, 408, 429))",
        "no sequence answers 401, 402 or 403",
        ("402 -> 403", "402 -> 401"),
        equivalent=False,
    ),
    MutationNote(
        'status in (500, 502) and err.kind == "invalid_request"',
        "no 5xx answer is a request-validation error (the unknown-parameter bodies some proxies send)",
        equivalent=False,
    ),
    MutationNote(
        "DEFAULT_CONTEXT = 256_000",
        "no overflow error reports a window within a token of 256,000",
        equivalent=False,
    ),
    MutationNote("limit = None if status == 413 else", "no HTTP 413 body reports a context window", equivalent=False),
    MutationNote("COMPRESS_MIN_MESSAGES = 3 + 3 + 1", _SURVIVES_AUX_SUMMARY, equivalent=False),
    MutationNote("messages=1,", _SURVIVES_AUX_SUMMARY, equivalent=False),
    MutationNote('elif m["messages"] <= COMPRESS_MIN_MESSAGES:', _SURVIVES_AUX_SUMMARY, equivalent=False),
    MutationNote('if m["last5"][-1] == "assistant":', _SURVIVES_CODEX_INCOMPLETE),
    MutationNote('return Resend("codex-incomplete-resend")', _SURVIVES_CODEX_INCOMPLETE),
    MutationNote("REQUESTED_MAX_TOKENS = 65536", _SURVIVES_BOOST_DEFAULT),
    MutationNote("BOOST_CAP = 32768", _SURVIVES_BOOST_DEFAULT),
    MutationNote(
        'changes=COMPACTED if m["messages"] > COMPRESS_MIN_MESSAGES',
        "an overflow after exactly 7 messages: Hermes would then summarise with a request to its auxiliary "
        "model, which the port does not model and the replay server would answer with a turn, so no such "
        "sequence is added",
        equivalent=False,
    ),
    MutationNote(
        'return Remind("codex-incomplete-continue", CODEX_INCOMPLETE_NUDGE)',
        "an incomplete Codex reply with reasoning and no visible text; no sequence has one (every incomplete "
        "Codex reply without calls in the catalogue cuts visible text)",
        equivalent=False,
    ),
    MutationNote("GEMINI_WIRE_MAX_TOKENS = 65535", _SURVIVES_GEMINI_BOOST, equivalent=False),
    MutationNote(
        'if (m["mode"] != "gemini_native" or m["boost"] or decision.action == "stop"',
        _SURVIVES_GEMINI_BOOST,
        equivalent=False,
    ),
    MutationNote(
        'm["sent_max"] = min(BOOST_BASE * 2 ** retries, BOOST_CAP)',
        _SURVIVES_GEMINI_BOOST,
        equivalent=False,
    ),
    MutationNote(
        "floor = requested or 0",
        "with no requested cap (the Gemini wire) the floor is below every boost (4096 * 2**n >= 8192), so 0, "
        "1 and -1 give the same max_tokens; with a cap the `or` never reaches it",
    ),
    MutationNote(
        "1024 <= limit <= 10_000_000",
        "no sequence reports a context window at either bound of Hermes' plausibility range (1,024 and "
        "10,000,000 tokens): the recorded windows are 128,000 and 200,000",
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=f"{PIN}; see the module docstring",
    max_steps=None,
    cap_note="cap 90 iterations (inner retries do not count), then one summary request -> max_iterations_reached, ok=False",
    reasons=REASONS,
    rules=RULES,
    unreachable={
        "codex-incomplete-resend": (
            "needs an incomplete Responses reply whose output is not empty but has no text (in Hermes: "
            "a reasoning item without summary text). A bench turn carries reasoning as text, so such a "
            "reply is a turn with no content, calls or reasoning, which the port takes as an empty output "
            "(invalid-response-retry, L1490-1540) first; only whitespace-only content would reach this "
            "rule, and no provider sends that as a reply of its own"),
    },
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    m = _memo(state)
    if m["summary"]:
        return _summary(turn, m)
    if not m["inner"]:
        if m["api"] >= MAX_ITERATIONS:  # L721: the while condition fails
            m["summary"] = 1
            return _summary(turn, m)
        m["api"] += 1
        m["retry"] = 0
    m["inner"] = False
    turn = served_on_chat(turn, getattr(state, "dialect", ""))
    mode = _MODE_OF_DIALECT.get(getattr(state, "dialect", ""), "") or api_mode(turn.finish_raw)
    m["mode"], m["boost"] = mode, False
    decision = _body(turn, m, mode)
    if decision.action == "continue" and not m["inner"] and m["api"] >= MAX_ITERATIONS:
        # the 90th iteration goes on, so the while condition fails (L721) and the next request is
        # the summary request: the tool results and a new user message (chat_completion_helpers.py L1912)
        decision = Remind("max-iterations-summary-request", SUMMARY_REQUEST, run=decision.run,
                          failed=decision.failed)
    return _unboosted(decision, m)


def _unboosted(decision: Decision, m: dict[str, Any]) -> Decision:
    """On the Gemini wire, the request after a boosted one is back at the native client's 65535
    (the boost is consumed by one request, chat_completion_helpers.py L1163-1166)."""
    if (m["mode"] != "gemini_native" or m["boost"] or decision.action == "stop"
            or m["sent_max"] == GEMINI_WIRE_MAX_TOKENS):
        return decision
    m["sent_max"] = GEMINI_WIRE_MAX_TOKENS
    return replace(decision, changes=replace(decision.changes or RequestChanges(), max_tokens=GEMINI_WIRE_MAX_TOKENS))


def _boost(m: dict[str, Any], retries: int) -> RequestChanges | None:
    """The n-th boost's request change on this mode's wire (see GEMINI_WIRE_MAX_TOKENS)."""
    if m["mode"] != "gemini_native":
        return boosted(retries)
    m["boost"] = True
    change = boosted(retries, requested=None, sent=m["sent_max"])
    m["sent_max"] = min(BOOST_BASE * 2 ** retries, BOOST_CAP)
    return change


def _summary(turn: Turn, m: dict[str, Any]) -> Decision:
    if turn.error is None and m["summary"] == 1 and not (turn.content or "").strip():
        m["summary"] = 2
        return Resend("max-iterations-summary-retry")
    return Stop(REASON_MAX, ok=False, rule="max-iterations")


def _body(turn: Turn, m: dict[str, Any], mode: str) -> Decision:
    if mode == "bedrock_converse":
        err = turn.error
        if (err is not None and err.status in _BOTOCORE_RETRY_STATUS and m["boto"] < BOTOCORE_RETRIES):
            m["boto"] += 1
            m["inner"] = True
            return Resend("bedrock-botocore-retry")
        m["boto"] = 0
    if turn.error is not None:
        if (mode in ("chat_completions", "anthropic_messages") and _transient_stream_error(turn)
                and m["stream"] < STREAM_RETRIES):
            m["stream"] += 1
            m["inner"] = True
            return Resend("stream-retry")
        m["stream"] = 0
        return _api_error(turn, m)
    m["stream"] = 0
    if mode == "codex_responses":
        # L1490-1540: status failed/cancelled, or an empty output list, is an invalid response
        empty_output = not turn.content and not turn.tool_calls and not turn.reasoning
        if turn.finish_raw in ("failed", "cancelled") or empty_output:
            return _invalid_response(m)
    elif turn.finish == "error" and turn.finish_raw is None:
        return _invalid_response(m)
    finish = hermes_finish(turn, mode)

    if finish == "content_filter":
        return Stop("content_policy_blocked", ok=False, rule="content-filter")
    if finish == "length":
        return _length(turn, m, stub=stream_stub(turn, mode))

    content = turn.content or ""
    if "<REASONING_SCRATCHPAD>" in content and "</REASONING_SCRATCHPAD>" not in content:
        m["scratch"] += 1
        if m["scratch"] <= 2:
            return Resend("scratchpad-retry")
        return Stop("incomplete_scratchpad", ok=False, rule="scratchpad-stop")
    m["scratch"] = 0

    if mode == "codex_responses" and finish == "incomplete":
        return _codex_incomplete(turn, m)
    m["codex_inc"] = 0

    if turn.tool_calls:
        return _bedrock_tools(turn, m) if mode == "bedrock_converse" else _tools(turn, m)
    return _final(turn, m, mode, finish)


def _bedrock_tools(turn: Turn, m: dict[str, Any]) -> Decision:
    """Bedrock's normaliser makes a tool input that does not parse {} (bedrock_adapter.py L913-925):
    valid JSON to the loop, so the call is made, and fails on the stub's required keys (the bench's
    convention, bench/serve/tools.py tool_specs)."""
    cut = {i for i, c in enumerate(turn.tool_calls) if not _parses(c.arguments)}
    decision = _tools(replace(turn, tool_calls=tuple(replace(c, arguments="{}") if i in cut else c
                                                     for i, c in enumerate(turn.tool_calls))), m)
    if not cut or decision.action != "continue" or decision.failed == ALL:
        return decision
    run = tuple(i for i in range(len(turn.tool_calls))
                if i not in cut and (decision.run == ALL or i in decision.run))
    return replace(decision, run=run, failed=tuple(sorted({*decision.failed, *cut})))


def _parses(arguments: str) -> bool:
    if not arguments.strip():
        return True
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True


def _length(turn: Turn, m: dict[str, Any], stub: bool = False) -> Decision:
    content = turn.content
    if not turn.tool_calls or stub:
        think = bool(content and re.search(r"<(?:think|thinking|reasoning|REASONING_SCRATCHPAD)[^>]*>",
                                           content, re.IGNORECASE))
        if think and not has_visible(content):
            return Stop("thinking_budget_exhausted", ok=False, rule="thinking-exhausted")
        m["length"] += 1
        _append(m, "assistant")
        if m["length"] < 4:
            _append(m, "user")
            if stub:
                return Remind("stream-stub-continue", STUB_PROMPT, changes=_boost(m, m["length"]))
            return Remind("length-continue", CONTINUE_PROMPT, changes=_boost(m, m["length"]))
        return Stop("truncated_after_continuations", ok=False, rule="length-exhausted")
    if m["trunc_tools"] < 4:
        m["trunc_tools"] += 1
        m["inner"] = True
        return Resend("length-tools-resend", changes=_boost(m, m["trunc_tools"]))
    return Stop("response_truncated", ok=False, rule="length-tools-stop")


def _codex_incomplete(turn: Turn, m: dict[str, Any]) -> Decision:
    m["codex_inc"] += 1
    content = (turn.content or "").strip()
    has_text = bool(content or (turn.reasoning or "").strip())
    duplicate = False
    if has_text:
        # L4591-4622: an interim with the same visible output as the interim just before replaces
        # it in place; any other is appended
        key = content or "\0" + (turn.reasoning or "")
        duplicate = m["interim"] == key
        if not duplicate:
            _append(m, "assistant")
            m["interim"] = key
    if m["codex_inc"] < 3:
        if content:  # L4624-4629: replayable, no nudge; the assistant message is all that is added
            if duplicate:
                return Resend("codex-incomplete-duplicate")
            return Continue("codex-incomplete-continue", run=())
        if m["last5"][-1] == "assistant":
            _append(m, "user")
            return Remind("codex-incomplete-continue", CODEX_INCOMPLETE_NUDGE)
        return Resend("codex-incomplete-resend")
    m["codex_inc"] = 0
    return Stop("codex_incomplete_exhausted", ok=False, rule="codex-incomplete-stop")


def _tools(turn: Turn, m: dict[str, Any]) -> Decision:
    calls = turn.tool_calls
    n = len(calls)
    invalid = [i for i, c in enumerate(calls) if not c.name]
    mixed = bool(invalid) and len(invalid) < n
    if invalid and not mixed:
        m["inv_tool"] += 1
        if m["inv_tool"] >= 3:
            m["inv_tool"] = 0
            return Stop("invalid_tool_call", ok=False, rule="invalid-tool-name")
        _append(m, "assistant", *(["tool"] * n))
        return Continue("invalid-tool-name", run=(), failed=ALL)  # L4780-4805: tool results only
    m["inv_tool"] = 0

    args: list[str] = []
    bad_json: list[int] = []
    for i, c in enumerate(calls):
        a = c.arguments
        if not a or not a.strip():
            a = "{}"
        args.append(a)
        if mixed and i in invalid:
            continue
        try:
            json.loads(a)
        except ValueError:
            bad_json.append(i)
    if bad_json:
        bad_names = {calls[i].name for i in bad_json}
        if any(not args[i].rstrip().endswith(("}", "]")) for i in range(n) if calls[i].name in bad_names):
            m["inv_json"] = 0
            return Stop("response_truncated", ok=False, rule="truncated-json-stop")
        m["inv_json"] += 1
        if m["inv_json"] < 3:
            return Resend("invalid-json-retry")
        m["inv_json"] = 0
        _append(m, "assistant", *(["tool"] * n))
        return Continue("invalid-json-recover", run=(), failed=ALL)  # L4873-4894: tool results only
    m["inv_json"] = 0

    seen: set[tuple[str, str]] = set()
    kept: list[int] = []
    for i, c in enumerate(calls):
        key = (c.name, args[i])
        if key not in seen:
            seen.add(key)
            kept.append(i)
    # agent/tool_executor.py L79-95: arguments that parse to anything but an object are not run
    not_obj = {i for i in kept if not (mixed and i in invalid) and not isinstance(json.loads(args[i]), dict)}
    run = tuple(i for i in kept if not (mixed and i in invalid) and i not in not_obj)
    failed = tuple(i for i in kept if (mixed and i in invalid) or i in not_obj)

    all_hk = all(calls[i].name in _HOUSEKEEPING for i in kept)
    if not all_hk:
        m["lcwt"], m["lcwt_hk"] = None, False
    if has_visible(turn.content):
        m["lcwt"], m["lcwt_hk"] = turn.content, all_hk
    if m["prefill_tail"]:  # L4971-4992: a thinking prefill before this tool turn resets the counters
        m["prefill"] = 0
        m["empty"] = 0
    m["nudged"] = False
    _append(m, "assistant", *(["tool"] * len(kept)))
    m["trunc_tools"] = 0
    rule = "tools-mixed-invalid" if mixed else "tools"
    return Continue(rule, run=run, failed=failed)


def _final(turn: Turn, m: dict[str, Any], mode: str, finish: str) -> Decision:
    content = turn.content or ""
    if not has_visible(content):
        if m["lcwt"] and m["lcwt_hk"]:
            m["lcwt"], m["lcwt_hk"] = None, False
            m["empty"] = 0
            return Stop("fallback_prior_turn_content", ok=True, rule="fallback-prior-content")
        inline = bool(re.search(r"<think>|<thinking>|<reasoning>", content, re.IGNORECASE))
        if "tool" in m["last5"] and not m["nudged"] and not inline:
            m["nudged"] = True
            m["lcwt"], m["lcwt_hk"] = None, False
            _append(m, "assistant", "user")
            return Remind("post-tool-nudge", EMPTY_NUDGE)
        structured = bool(turn.reasoning) or inline
        if structured and m["prefill"] < 2:
            m["prefill"] += 1
            _append(m, "assistant")
            m["prefill_tail"] = True
            return Continue("thinking-prefill", run=())
        if (not structured or m["prefill"] >= 2) and m["empty"] < 3:
            m["empty"] += 1
            return Resend("empty-retry")
        return Stop("empty_response_exhausted", ok=True, rule="empty-exhausted")

    m["empty"] = 0
    m["prefill"] = 0
    if (mode == "codex_responses" and m["ack"] < 2 and not m["any_tool"]
            and looks_like_ack(content)):
        m["ack"] += 1
        _append(m, "assistant", "user")
        return Remind("intent-ack", INTENT_ACK)
    m["ack"] = 0
    m["length"] = 0
    label = finish if finish in LABELS else "<unlisted>"
    return Stop(f"text_response(finish_reason={label})", ok=True, rule="text-response")


def _invalid_response(m: dict[str, Any]) -> Decision:
    m["retry"] += 1
    if m["retry"] >= API_MAX_RETRIES:
        return Stop("invalid_api_response", ok=False, rule="invalid-response-stop")
    m["inner"] = True
    return Resend("invalid-response-retry")


def context_limit(err: TurnError) -> int | None:
    """The context window an overflow error reports, as Hermes takes it (model_metadata.py
    L1238-1265, ``parse_context_limit_from_error``: the first number its patterns find in the
    message, kept when it is 1,024 to 10,000,000 tokens). The number is the error's
    ``context_window``, recorded as data with the sequence, not read from the message here."""
    limit = err.context_window
    return limit if limit is not None and 1024 <= limit <= 10_000_000 else None


def _api_error(turn: Turn, m: dict[str, Any]) -> Decision:
    err = turn.error
    assert err is not None
    status = err.status
    if err.kind == "content_filter":  # error_classifier.py L650-663: checked before any status rule
        return Stop("content_policy_blocked", ok=False, rule="api-content-policy")
    overflow = err.kind == "context_overflow"
    if status == 413 or (overflow and (status is None or status == 400 or status >= 500)):
        m["compress"] += 1
        if m["compress"] > MAX_COMPRESSION_ATTEMPTS:
            return Stop("context_length_exceeded", ok=False, rule="context-exhausted")
        # the window the error reports (context_limit reads it from the message; the port reads the
        # sequence's context_window, the same number recorded as data)
        limit = None if status == 413 else context_limit(err)
        if limit is not None and limit < m["ctx"]:
            m["ctx"] = limit  # L3738-3760: the compressor takes the provider's lower window
        elif m["messages"] <= COMPRESS_MIN_MESSAGES:
            return Stop("context_length_exceeded", ok=False, rule="context-uncompressible")
        m["inner"] = True
        m["retry"] = 0  # the outer loop restarts (L4387-4405), retry_count is set again at L1216
        # more than 7 messages: the compressor rewrites them (context_compressor.py L3353-3356 returns
        # fewer untouched), so the request is compacted; at most 7 only the window was lowered
        return Resend("context-compress", changes=COMPACTED if m["messages"] > COMPRESS_MIN_MESSAGES else None)
    if status is not None and (
        (400 <= status < 500 and status not in (402, 408, 429))
        or (status in (500, 502) and err.kind == "invalid_request")
    ):
        return Stop("non_retryable_client_error", ok=False, rule="api-error-fatal")
    m["retry"] += 1
    if m["retry"] >= API_MAX_RETRIES:
        transport = status is None and err.kind in _TRANSPORT_KINDS
        if transport and not m["recovered"]:
            m["recovered"] = True
            m["retry"] = 0
            m["inner"] = True
            return Resend("api-error-recover")
        return Stop("api_failed_after_retries", ok=False, rule="api-error-stop")
    m["inner"] = True
    return Resend("api-error-retry")
