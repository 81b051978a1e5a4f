"""OpenCode's session loop: exit on a settled finish with no tool parts and no newer user message.

Pin: OpenCode v1.18.32 (anomalyco/opencode, formerly sst/opencode), MIT licence. Read from the
released artefact itself: npm ``opencode-linux-x64@1.18.32`` (the platform package that
``opencode-ai@1.18.32`` installs), file ``bin/opencode``, a Bun-compiled executable that embeds the
bundled, minified JavaScript of ``packages/opencode/src`` and of the AI SDK providers it ships.
Citations below give byte offsets into that file and the minified names, because the tag's source
tree could not be had here: the stored copies of ``packages/opencode/src/session/prompt.ts`` are
at other commits (anomalyco/opencode@00078e84 and an sst/opencode
copy), and they differ from the release exactly where it matters (see `unknown` below). Seed 002
cites ``prompt.ts:1111-1116`` at v1.18.32; those line numbers were not verifiable here.

Exit test at v1.18.32 (``SessionPrompt.run``, bin/opencode @96801587), checked at the top of every
iteration against the messages re-read from storage::

    lastAssistant.finish && !["tool-calls", "unknown"].includes(lastAssistant.finish)
      && !hasToolCalls            # tool parts, not provider-executed, not interrupted orphans
      && lastAssistant.parentID === lastUser.id

So at the pin `unknown` does NOT exit: the loop asks again (no cap, ``agent.steps ?? Infinity``).
The newer prompt.ts (anomalyco/opencode@00078e84) tests only ``["tool-calls"]`` and
``lastUser.id < lastAssistant.id``, so there `unknown` exits; seed 002 ("OpenCode keeps going on
unknown") agrees with the pin. The bench's model of each request: tools run inside
``processor.process`` (the AI SDK executes them while streaming), so a turn with tool parts is
Continue; a turn with no tool parts that does not exit adds only its assistant message to the
history: Continue with no calls when it has text or reasoning (the next request echoes it), Resend
when it is empty (the request is the same again; driving the original showed both); a newer user
message (``turn.steer``) is Remind.

Finish mapping: the AI SDK provider maps the raw string to its unified reason (``other`` for
anything it does not know), OpenCode's ``fs()`` keeps the six values of its FinishReason schema
and turns anything else (``other``) into ``unknown``. The predicate API does not see the
sequence's dialect, so the provider mapper is chosen from the raw string (the four dialects'
vocabularies do not overlap); an unknown string or no finish maps to ``other`` in every mapper
except openai-responses (see ``_responses``). A Bedrock sequence is the exception, chosen by
``State.dialect`` (four of its strings are Anthropic's): the bundled @ai-sdk/amazon-bedrock
provider's map (bin/opencode @118735431 ``kL``: end_turn/stop_sequence -> stop, max_tokens ->
length, content_filtered/guardrail_intervened -> content-filter, tool_use -> tool-calls, anything
else -> other, so malformed_*, model_context_window_exceeded and a missing messageStop, whose
stream keeps its initial ``{unified: "other"}``, are ``unknown`` to OpenCode and asked again). A Chat
sequence is chosen by ``State.dialect`` too, since a compatible provider sends Anthropic's
``model_context_window_exceeded`` there: the openai-compatible mapper makes it ``other``, so ``unknown``.
A sequence of a dialect none of those providers speaks (Ollama's native API, Cohere's) reaches
OpenCode through the openai-compatible provider (how it reaches Ollama): read as the replay server
serves it on Chat Completions (:func:`served_on_chat`).

Errors (``turn.error``): ``process`` runs the stream under ``Effect.retry(SessionRetry.policy)``:
a retryable error is retried with backoff up to RETRY_MAX_RETRIES = 5 times (``attempt > 5`` ends
it; Effect's Schedule metadata counts ``attempt: ++X`` from 1, bin/opencode @106052907, so five
consecutive errors are re-sent and the 6th stops); any other error is halted into ``assistantMessage.error`` and ``process`` returns
"stop". A context overflow goes to compaction instead (modelled approximately, see the rules).

Not modelled: subtasks, permission rejections (``blocked``), structured output (json_schema), the
doom-loop permission ask (three identical calls within one assistant message: in source,
anomalyco/opencode@002d9822 packages/opencode/src/session/processor.ts L129-170 compares the last
DOOM_LOOP_THRESHOLD = 3 (L21) parts of ``input.assistantMessage``, one model response, so a call repeated
once per response, as in the catalogue's stuck sequences, never reaches it), the overflow
check on token counts, the MAX_STEPS reminder (only with ``agent.steps`` set), the experimental
native LLM runtime (off by default; the AI SDK runtime is the default path).
"""

from __future__ import annotations

import json
from dataclasses import replace

from bench import (
    ALL,
    TABLES,
    Cited,
    Continue,
    Decision,
    ErrorKind,
    MutationNote,
    Note,
    Remind,
    RequestChanges,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    predicate,
)

BIN = Source(release="opencode-ai@1.18.32 (npm opencode-linux-x64@1.18.32 bin/opencode)")
RUN = f"{BIN} SessionPrompt.run"

_PROVIDERS = ("openai-chat", "anthropic", "openai-responses", "gemini", "bedrock-converse")
"""The dialects of the AI SDK providers bundled in OpenCode that the port maps (openai-compatible,
anthropic, openai responses, google, amazon-bedrock)."""
def served_on_chat(turn: Turn, dialect: str) -> Turn:
    """`turn` of a sequence in a dialect OpenCode has no provider for (Ollama's native API, Cohere's v2 chat),
    as the replay server serves it on Chat Completions (bench/wires/base.py ``Wire.finish_for``): Chat's
    string for its canonical finish, else its own raw string (an unknown or error finish)."""
    if dialect in _PROVIDERS or dialect not in TABLES or turn.finish_raw is None or turn.finish == "unknown":
        return turn
    raw = next((r for r, e in TABLES["openai-chat"].items() if e.finish == turn.finish), turn.finish_raw)
    return replace(turn, finish_raw=raw)


# bin/opencode @104608071 (exported as vA, imported as `us`): the six values OpenCode keeps.
FINISH_REASONS = frozenset({"stop", "length", "tool-calls", "content-filter", "error", "unknown"})

# ---------------------------------------------------------------- AI SDK provider mappers

# @ai-sdk/openai(-compatible) chat, bin/opencode @95186185 zG / @117240569 UY
_CHAT = {"stop": "stop", "length": "length", "content_filter": "content-filter",
         "function_call": "tool-calls", "tool_calls": "tool-calls"}
# @ai-sdk/anthropic, bin/opencode @95371025 RG (isJsonResponseFromTool false)
_ANTHROPIC = {"pause_turn": "stop", "end_turn": "stop", "stop_sequence": "stop", "refusal": "content-filter",
              "tool_use": "tool-calls", "max_tokens": "length", "model_context_window_exceeded": "length",
              "compaction": "other"}
# @ai-sdk/google, bin/opencode @118187234 MX (STOP depends on hasToolCalls)
_GEMINI = {"MAX_TOKENS": "length", "IMAGE_SAFETY": "content-filter", "RECITATION": "content-filter",
           "SAFETY": "content-filter", "BLOCKLIST": "content-filter", "PROHIBITED_CONTENT": "content-filter",
           "SPII": "content-filter", "MALFORMED_FUNCTION_CALL": "error", "FINISH_REASON_UNSPECIFIED": "other",
           "OTHER": "other"}
# @ai-sdk/amazon-bedrock as bundled, bin/opencode @118735431 kL (isJsonResponseFromTool false; default other)
_BEDROCK = {"stop_sequence": "stop", "end_turn": "stop", "max_tokens": "length", "content_filtered": "content-filter",
            "guardrail_intervened": "content-filter", "tool_use": "tool-calls"}
_GEMINI_KNOWN = frozenset({*_GEMINI, "STOP", "LANGUAGE", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
                           "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER", "NO_IMAGE"})


def _responses(raw: str, has_calls: bool) -> str:
    """@ai-sdk/openai responses, bin/opencode @117286192 XX: mapped from incomplete_details.reason."""
    reason = None if raw == "completed" else raw.partition("/")[2] or None
    if reason is None:
        return "tool-calls" if has_calls else "stop"
    if reason == "max_output_tokens":
        return "length"
    if reason == "content_filter":
        return "content-filter"
    return "tool-calls" if has_calls else "other"


def unified(raw: str | None, has_calls: bool, dialect: str = "") -> tuple[str, str]:
    """The AI SDK's unified finish reason for a raw string, and the rule of the mapper used."""
    if dialect == "bedrock-converse":
        # the stream starts with {unified: "other"} (@118745399) and kL maps a messageStop's reason
        return _BEDROCK.get(raw or "", "other"), "map-bedrock"
    if raw is None:
        # The providers' streams start with finishReason {unified: "other"} and replace it only
        # when a finish arrives (openai-compatible @95186185 ff., google @118194485). (Responses would take the `undefined -> stop` branch only
        # on a response.completed event, which a missing finish does not have.)
        return "other", "map-none"
    if dialect == "openai-chat":
        # a Chat sequence's string reaches the openai-compatible mapper whatever it spells: a compatible
        # provider's "model_context_window_exceeded" (Anthropic's name) is other there, so unknown
        return _CHAT.get(raw, "other"), "map-chat"
    if raw in _ANTHROPIC:
        return _ANTHROPIC[raw], "map-anthropic"
    if raw in _CHAT:
        return _CHAT[raw], "map-chat"
    if raw == "completed" or raw.startswith("incomplete"):
        return _responses(raw, has_calls), "map-responses"
    if raw in _GEMINI_KNOWN:
        if raw == "STOP":
            return ("tool-calls" if has_calls else "stop"), "map-google"
        return _GEMINI.get(raw, "other"), "map-google"
    # "cancelled" (a Responses status with no stream event of its own) and any new string: every
    # mapper's default branch gives "other". Ambiguous for Responses "cancelled" - see the report.
    return "other", "map-other"


def opencode_finish(raw: str | None, has_calls: bool, dialect: str = "") -> tuple[str, str]:
    """OpenCode's stored ``message.finish``: fs() keeps the six schema values, else "unknown"."""
    reason, rule = unified(raw, has_calls, dialect)
    return (reason if reason in FINISH_REASONS else "unknown"), rule


# ---------------------------------------------------------------- errors

# The original classifies errors by these words; the port does not run them (a port reads an error's kind
# and status only): they are kept, as strings, as the citation the kinds below answer to.
# SessionRetry Rd (bin/opencode @96735412 onwards): messages that make an error retryable
_RETRYABLE_MESSAGE = (
    r"429|500|502|503|504|524",
    r"rate increased too quickly|rate limit|rate-limit|rate_limit|too many requests",
    r"overloaded|service unavailable|service_unavailable|service-unavailable|internal error|internal_error"
    r"|internal server error|server error|server_error|server-error|provider returned error"
    r"|provider_returned_error|provider-returned-error",
    r"terminated|fetch failed|failed to fetch|network[-_\s]error|upstream connect|connection error"
    r"|connection refused|connection lost|socket connection was closed|socket hang up|reset before headers"
    r"|getaddrinfo|enotfound|eai_again|econnrefused|econnreset|etimedout",
    r"^timeout$|\b(?:request|response|connection|network|stream|read) (?:timeout|timed out|time out)\b",
    r"try your request again|retry your request|resource exhausted|resource_exhausted",
    r"\btry again (?:later|in\b)|\b(?:currently|temporarily) at capacity\b",
)
# Overflow patterns b$ and their exclusions X$ (bin/opencode @104638000-104639700, used as p8 by
# MessageV2 parseAPICallError a9 @98393469)
_OVERFLOW = (
    r"prompt is too long", r"request_too_large", r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum", r"tokens in request more than max tokens allowed",
    r"maximum prompt length is \d+", r"reduce the length of the messages", r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)", r"exceeds the limit of \d+",
    r"exceeds the available context size", r"greater than the context length", r"context window exceeds limit",
    r"exceeded model token limit", r"context[_ ]length[_ ]exceeded", r"request entity too large",
    r"context length is only \d+ tokens", r"input length.*exceeds.*context length",
    r"prompt too long; exceeded (?:max )?context length", r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded", r"too many tokens", r"token limit exceeded",
    r"^4(00|13)\s*(status code)?\s*\(no body\)",
)
_NOT_OVERFLOW = (r"^(throttling error|service unavailable):", r"rate limit", r"too many requests")
RETRY_MAX_RETRIES = 5


def is_overflow(kind: ErrorKind, status: int | None) -> bool:
    """MessageV2 parseAPICallError a9 (bin/opencode @98393469): status 413, the body's error code
    context_length_exceeded, or a message matching an overflow pattern (p8, _OVERFLOW above, unless
    it matches an exclusion, _NOT_OVERFLOW). The port reads the kind these answer to: an error
    whose kind is ``context_overflow`` is one OpenCode's code and patterns call an overflow; the
    patterns stay above as the citation of what OpenCode matches, and are not run."""
    return status == 413 or kind == "context_overflow"


RETRYABLE_KINDS: tuple[ErrorKind, ...] = ("rate_limit", "quota", "overloaded", "server_error", "timeout",
                                          "connection_refused", "connection_reset")
"""The kinds OpenCode's retryable messages name (_RETRYABLE_MESSAGE above, and too_many_requests,
exhausted, unavailable): rate limits, exhausted resources, overload and unavailability, server errors,
timeouts, and network failures. A stream error event is retryable only by its words in OpenCode: the
kind ``stream_error`` says none of these, so it is not retryable here."""


def is_retryable(kind: ErrorKind, status: int | None) -> bool:
    """SessionRetry.retryable ga (bin/opencode @96736794).

    An HTTP error is an APIError: retryable when the AI SDK marks it so (408, 409, 429, >= 500),
    when the status is >= 500, or when its message matches. Any other error (a stream cut) is
    retryable only by its message: too_many_requests, exhausted, unavailable, or the patterns. The
    port reads the kind the message would be matched for (RETRYABLE_KINDS), not the message.
    """
    if status is not None:
        return status in (408, 409, 429) or status >= 500 or kind in RETRYABLE_KINDS
    return kind in RETRYABLE_KINDS


# A connection that breaks (no HTTP status): the message OpenCode sees is its runtime's, not the one a
# sequence recorded from another client. @ai-sdk/provider-utils handleFetchError (bin/opencode
# @94935712) wraps a fetch TypeError "fetch failed" or an error coded ConnectionClosed / ECONNRESET /
# EPIPE / ... as APICallError("Cannot connect to API: ...", isRetryable: true), and the retry policy
# retries it. Driving the original showed it: Bun says "The socket connection was closed unexpectedly".
def is_connection_break(kind: ErrorKind, status: int | None) -> bool:
    """A turn error that is a broken connection rather than an answer from the server (the server
    serves both kinds as a connection closed mid-body)."""
    return status is None and kind in ("connection_reset", "connection_refused")


def _call_ok(name: str, arguments: str) -> bool:
    """Whether the AI SDK parses a call's input (parseToolCall eZ, bin/opencode @99365350): '' is
    {}, else it must parse as JSON; it is then validated against the tool's schema, which the bench
    does not carry, so any JSON object is taken to pass. A failure goes to experimental_repairToolCall
    (@96729657), which answers it through the 'invalid' tool: the call is failed, not run.
    A blank name is no tool (the bench's other names are taken to be tools): eZ throws
    NoSuchToolError (@99365478, `if($==null)...throw new AY`), which yK (@99364145)
    hands to the same repair; ''.toLowerCase() is no tool either, so it too goes to 'invalid'."""
    if not name:
        return False
    if not arguments.strip():
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


# ---------------------------------------------------------------- conformance (the original, driven)
# `stopbench conform opencode` drives npm opencode-ai@1.18.32 (`opencode run`, custom tool files;
# conformance/drivers/opencode_driver.mjs). Differences that remain, and why:
_STEER = ("`opencode run` takes one prompt, and the driver has no way to add a user message while the run "
          "is going (that needs `opencode serve` and its HTTP API, not tried), so the steer would never reach "
          "OpenCode: the port's newer-user rule (a user message that arrived while the response streamed) is "
          "read from the source only.")
CONFORMANCE_NOT_DRIVEN = {"chat-steer-mid-run": _STEER, "chat-steer-with-tool-calls": _STEER,
                          "responses-incomplete-steered": _STEER}
"""Sequences the driver cannot produce for OpenCode: not run, reported 'not driven' (never 'explained')."""
_SUMMARY_REQUEST = (
    "The server cannot see the summary request as a reminder. After an overflow OpenCode's summary request is "
    "a conversation of its own (system 'You are a context summarization agent', the history written out in "
    "one user message, no tools; SessionCompaction.process @96755709-96760200), so the server, comparing it "
    "with the request before, sees the history rewritten into one item: 'unknown' with compact, where the "
    "port says remind (context-overflow).")
CONFORMANCE_EXPLAINED = {
    "chat-context-overflow-compacted": _SUMMARY_REQUEST + (
        " The request after the summary holds the compacted history (user 'What did we do so far?', the "
        "summary, the overflow notice with 'Continue if you have next steps'), which the server compares "
        "with the summary request: 'unknown'. The turns served (0, 1, 2, 3), the compaction and the exit "
        "agree with the port (driven 1.18.32, the sequence being reactive)."),
    "chat-context-overflow-after-tools": _SUMMARY_REQUEST + (
        " The summary request is answered by the same overflow error, which ends the run with the error, "
        "as in the port."),
    "chat-context-overflow-window-shrinks": _SUMMARY_REQUEST + (
        " The summary request is answered by another overflow error, which ends the run, as in the port."),
    "seed001-never-stops-context-overflow": _SUMMARY_REQUEST + (
        " The overflow comes at request 47, after 46 tool rounds; the summary request (48) is answered by "
        "the same overflow (then: repeat), which ends the run with the error at step 48, as in the port "
        "(driven 1.18.32: the 46 rounds and the stop agree)."),
}


# bin/opencode @96759176-96759511: after a compaction made for an overflow, the synthetic user message
# is this notice followed by the usual "Continue if you have next steps..." (seen when driving 1.18.32)
OVERFLOW_CONTINUE = (
    "The previous request exceeded the provider's size limit due to large media attachments. The conversation "
    "was compacted and media files were removed from context. If the user was asking about attached images or "
    "files, explain that the attachments were too large to process and suggest they try again with smaller or "
    "fewer files...Continue if you have next steps, or stop and ask for clarification if you are unsure how "
    "to proceed.")
COMPACTED = RequestChanges(compact=True)
"""The request after a compaction's summary carries the summary in place of the history before it."""


MUTATION_NOTES = (
    MutationNote(
        'return status == 413 or kind == "context_overflow"',
        "no sequence answers HTTP 413",
        equivalent=False,
    ),
    MutationNote(
        "return status in (408, 409, 429) or status >= 500 or kind in RETRYABLE_KINDS",
        "the catalogue's 408, 409 and 429 errors are of kinds OpenCode's retryable messages name (timeout, "
        "overloaded, rate_limit), so the status list is redundant for them",
        ("408 -> 409", "408 -> 407", "409 -> 410", "409 -> 408", "429 -> 430", "429 -> 428"),
        equivalent=False,
    ),
    MutationNote('is_retryable("server_error", 500), "responses-failed"', "501 is as retryable as 500 (>= 500)"),
    MutationNote(
        'memo["retries"] = 0',
        "the retry count reset by a context overflow: only retryable errors after a compaction tell it apart; "
        "no sequence has them",
        equivalent=False,
        next='memo["compacting"] = True',
    ),
    MutationNote.reset_after_success('memo["retries"] = 0'),
    MutationNote(
        "status in (408, 409, 429) or status >= 500 or kind in RETRYABLE_KINDS",
        "every 5xx error in the catalogue also has a retryable kind (server_error, overloaded), so the status "
        "test never decides alone",
        ("<= -> <", ">= -> >", "500 -> 501"),
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=f"{RUN} (bin/opencode @96801000-96806000), processor @96741600-96750800 (MIT)",
    max_steps=None,
    reasons=["exit", "content_filter", "error"],
    rules={
        "exit": (
            Cited(Note(f"{RUN} @96801587"), text='`if(j?.finish&&!["tool-calls","unknown"].includes(j.finish)&&!fe&&j.parentID===X.id)` ... logInfo("exiting loop"); break - finish set, not tool-calls or unknown, no non-provider-executed tool part (fe, @96801504), no newer user message')
        ),
        "tool-parts": (
            Cited(Note(f"{RUN} @96801587 conjunct !fe fails (and/or finish is tool-calls)"), text="no exit; the tools ran inside processor.process (AI SDK executes each tool-call; processor tool-result/tool-error @96744793) and the loop requests again with their results; a call whose input is not a JSON object or whose name is no tool (blank) is repaired into the 'invalid' tool (@96729657, via yK @99364145): failed, not run")
        ),
        "tool-calls-no-parts": (
            Cited(Note(f"{RUN} @96801587 conjunct 2"), text="finish 'tool-calls' never exits; with no tool part nothing is added but the (empty or text-only) assistant message and the loop requests again; maxSteps = agent.steps ?? Infinity (@96802784), so there is no cap")
        ),
        "unknown-finish": (
            Cited(Note(f'{RUN} @96801587 conjunct 2 at v1.18.32 excludes "unknown" too'), text="no exit, request again, no cap. fs() @96590298 stores any non-schema unified reason ('other') as 'unknown'")
        ),
        "newer-user": (
            Cited(Note(f"{RUN} @96801587 conjunct 4 `j.parentID===X.id`"), text="a user message that arrived while this response streamed is the new lastUser, so the loop goes on and sends it (wrapped as a system-reminder for step > 1); the turn's tools ran in process")
        ),
        "content-filter": (
            Cited(Note(f"{RUN} @96804875"), text="after process, finish 'content-filter' with no error sets ContentFilterError on the message, publishes it and breaks (tools of the turn already ran)")
        ),
        "retry": (
            Cited(Note(f"{BIN} SessionProcessor.process @96749828"), text="the stream runs under n.retry(SessionRetry.policy) (@96750462); policy Cd @96738852 retries while ga() (@96736794) says retryable and attempt <= RETRY_MAX_RETRIES = 5 (@96735412; attempt counts from 1, Effect Schedule @106052907), backoff 2s*2^(n-1); the request is sent again")
        ),
        "connection-retry": (
            Cited(Note(f"{BIN} @ai-sdk/provider-utils handleFetchError @94935712"), text="a broken connection (fetch failed, ConnectionClosed, ECONNRESET, EPIPE, ...) becomes APICallError 'Cannot connect to API: ...' with isRetryable true; the retry policy (@96738852) re-sends it like any retryable error (found by driving the original: conformance/drivers/opencode_driver.mjs)")
        ),
        "retries-exhausted": (
            Cited(Note(f"{BIN} policy Cd @96738852 `if(o.attempt>wa)return be.done` with wa = 5"), text="the error propagates to halt (@96749087), assistantMessage.error is set, process returns 'stop' (@96750666) and opencode-ai@1.18.32 (npm opencode-linux-x64@1.18.32 bin/opencode) SessionPrompt.run breaks on it (@96805449)")
        ),
        "error": (
            Cited(Note(f"{BIN} ga() @96736794 not retryable"), text="halt sets assistantMessage.error, process returns 'stop' (@96750666), opencode-ai@1.18.32 (npm opencode-linux-x64@1.18.32 bin/opencode) SessionPrompt.run breaks")
        ),
        "network-error-finish": (
            Cited(Note(f"{BIN} LLMAISDK.toLLMEvents @96591472"), text="finish-step with rawFinishReason 'network_error' fails with ResponseStreamError('Provider finish_reason: network_error'), which the retry policy treats as retryable (network[-_\\s]error)")
        ),
        "responses-failed": (
            Cited(Note(f"{BIN} @ai-sdk/openai responses doStream @117326458"), text="GX (@117234370) peeks the stream and throws APICallError (Q1/Y1: status from the error code, default 500) when a response.failed frame comes before any output; the retry policy treats status >= 500 as retryable")
        ),
        "context-overflow": (
            Cited(Note(f"{BIN} halt @96749087"), text="a ContextOverflowError (compaction.auto not false) sets needsCompaction; process returns 'compact' (@96750666); run creates a compaction and continues (@96805478). Approximation: the compaction's own summary request is taken to consume the next turn (rule compaction-summary)")
        ),
        "compaction-summary": (
            Cited(Note(f"{BIN} SessionCompaction.process @96755709-96760200"), text="the summary request; on 'continue' with auto (text @96759511) it adds a synthetic user message ('Continue if you have next steps...') and the loop goes on; an error there sets the message error and returns 'stop'. The next request is compacted: opencode-ai@1.18.32 (npm opencode-linux-x64@1.18.32 bin/opencode) SessionPrompt.run re-reads the messages at the top of every iteration with Me.filterCompactedEffect (@96801238), which drops everything before the completed compaction (the summary stands in for it): changes compact")
        ),
    },
    explained=CONFORMANCE_EXPLAINED,
    not_driven=CONFORMANCE_NOT_DRIVEN,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    turn = served_on_chat(turn, state.dialect)
    memo = state.memo
    calls = turn.tool_calls
    err = turn.error

    if memo.pop("compacting", False):
        if err is not None:
            return Stop("error", ok=False, rule="compaction-summary")
        return Remind("compaction-summary", OVERFLOW_CONTINUE, changes=COMPACTED)

    retryable: bool | None = None
    if err is not None:
        if is_overflow(err.kind, err.status):
            memo["retries"] = 0
            memo["compacting"] = True
            return Remind("context-overflow", "compaction")
        if is_connection_break(err.kind, err.status):
            retryable, rule_retry, rule_stop = True, "connection-retry", "error"
        else:
            retryable = is_retryable(err.kind, err.status)
            rule_retry, rule_stop = "retry", "error"
    elif turn.finish_raw == "network_error":
        retryable, rule_retry, rule_stop = True, "network-error-finish", "error"
    elif turn.finish_raw == "failed":
        # Responses status 'failed' with no output before it: the AI SDK raises an APICallError
        # whose status defaults to 500, which is retryable. (A failure after output, or one with no
        # error object, would take other paths; the bench's turn does not say, see the report.)
        retryable, rule_retry, rule_stop = is_retryable("server_error", 500), "responses-failed", "error"
    if retryable is not None:
        if not retryable:
            memo["retries"] = 0
            return Stop("error", ok=False, rule=rule_stop)
        attempt = memo.get("retries", 0) + 1
        if attempt > RETRY_MAX_RETRIES:
            memo["retries"] = 0
            return Stop("error", ok=False, rule="retries-exhausted")
        memo["retries"] = attempt
        return Resend(rule_retry)
    memo["retries"] = 0

    finish, _mapper = opencode_finish(turn.finish_raw, bool(calls), state.dialect)
    run = tuple(i for i, c in enumerate(calls) if _call_ok(c.name, c.arguments))
    failed = tuple(i for i, c in enumerate(calls) if not _call_ok(c.name, c.arguments))
    run_sel = ALL if len(run) == len(calls) else run

    # after process: content-filter breaks before the exit test is looked at again
    if finish == "content-filter":
        return Stop("content_filter", ok=False, rule="content-filter", run=run_sel, failed=failed)
    if turn.steer:
        return Remind("newer-user", turn.steer, run=run_sel, failed=failed)
    if calls:
        return Continue("tool-parts", run=run_sel, failed=failed)
    # No exit and no tool part: the next request carries this assistant message when it has text or
    # reasoning (a continue with no calls, as the server sees it), else it is the same request again.
    # (Was a Resend in both cases until driving the original showed the echo.)
    echo = bool(turn.content) or bool(turn.reasoning)
    if finish == "tool-calls":
        return Continue("tool-calls-no-parts", run=()) if echo else Resend("tool-calls-no-parts")
    if finish == "unknown":
        return Continue("unknown-finish", run=()) if echo else Resend("unknown-finish")
    return Stop("exit", ok=True, rule="exit")
