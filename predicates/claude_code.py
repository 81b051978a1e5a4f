"""Claude Code's headless loop (``claude -p``): run every tool_use, nudge on empty or cut replies, retry errors.

Pin: npm ``@anthropic-ai/claude-code@2.1.328`` with its platform package
``@anthropic-ai/claude-code-linux-x64@2.1.328`` (the native binary ``claude``, a Bun executable that
embeds its JavaScript as text). Licence: proprietary (Anthropic's commercial terms), so nothing is
quoted beyond the harness messages the loop sends, which the server sees anyway. Citations are
``claude@<byte offset>`` into that binary (373 MB, the release ``stopbench conform claude_code``
drives); the embedded bundle keeps its chunk names (``/$bunfs/root/chunk-*.js``). Configuration: the
defaults (no settings file, no ``--max-turns``, no model flag, ``CLAUDE_CODE_MAX_RETRIES`` unset);
the driver only adds MCP stub tools and allows them (conformance/drivers/claude_code_driver.mjs).

How much was read: the retry decision (``zPs``/``qPs``/``uAt``, claude@320103811-320106000), the
retry budget (``nKr`` claude@320138000, ``QPs=10`` and ``T_e=3`` at claude@320110807-320110840), and
the harness messages with the choice among them (claude@307870800-307873000 and the output-limit
recovery at claude@328694000-328695800), the reactive compaction (claude@328813000-328816500,
``k6n`` claude@319524457-319527700, ``Dye``/``Gee`` claude@319856900-319864500) and the stream
failure's classification (``vso``/``XPs`` claude@320110417, ``isServerError`` claude@320297824).
The main loop's dispatch on the stop reason (chunk
``86h1x6mk``, from claude@328528000) was NOT read line by line: where a rule below rests on what
driving 2.1.328 showed instead, it says "observed" and names the sequence (the importer fixtures of
tests/importers/fixtures/claude_code/ and ``stopbench conform claude_code``'s record).

Per model response (every sequence is served on the Anthropic Messages API):

* ``tool_use`` blocks, whatever the stop reason: each is answered with a tool_result and the loop
  goes on. A name Claude Code does not have gets the error result "No such tool available"
  (observed); input that is not a JSON object (a call cut by ``max_tokens``) is kept as
  ``__unparsedToolInput`` (claude@306444306) and fails the tool's input validation; a call whose
  input lacks a required key fails validation too.
* ``tool_use`` without a block (claude@328819797-328820600): the response is retracted (tombstoned)
  and the loop sends "The previous response failed to produce a valid tool call. Please retry the
  tool call now." (``Ogr``, claude@307871119) while ``malformedToolUseRetryCount < VS`` (``VS=2``,
  ``Rl``, claude@328738673): two nudges; the third such response is an error ("The model's tool
  call could not be parsed (retry also failed).", ``malformed_tool_use_exhausted``). The server
  sees a retracted reply as a request that drops it (explained per sequence below).
* ``end_turn`` / ``stop_sequence`` (or any other stop reason) with no calls: the run ends, result
  subtype ``success``. An ``end_turn``/``stop_sequence`` reply with no visible text
  (claude@328740500-328741500, ``query_thinking_only_response``): the first time the loop sends
  "[Your previous response had no visible output. ...]" (``iHn``, claude@307871292), once
  (``thinkingOnlyNudged``); an empty reply after that ends the run as a success. The resend
  (``empty_resent``) and give-up (``empty_completion``) branches need a response with no message at
  all, which the server never sends (observed: chat-empty-stop, two requests). AMBIGUOUS: further
  conditions of that test (``JS``, ``pm``, ``Vf`` of the transcript) were not  read; the port applies the rule to every empty end_turn.
* A ``tool_use`` block whose id an earlier response already used is dropped, not run (observed:
  chat-tool-call-id-reused-per-round, chat-repeat-same-call); a response left with none is answered
  with "(no content)" and the loop asks again, without end (where this happens was not read).
* ``max_tokens`` / ``model_context_window_exceeded`` with no calls, text or not (the thinking-only
  variant ``xpo`` is off: ``Si()`` returns false, claude@328692780): the output-limit
  recovery sends "Output token limit hit. Resume directly ..." (``Rpo``, claude@307872281, chosen
  at claude@328694000-328694700): a Remind, max_tokens unchanged (observed,
  anthropic-context-window-exceeded), up to ``cs=3`` attempts (``up``, claude@328692797-328693400);
  after that the withheld reply surfaces as an error (``exhausted``).
* ``refusal``: the first one is withheld and the loop sends "Your response above was stopped by a
  safety classifier ..." (``Cpo``, claude@307871696) once; a second refusal in a row ends the run as
  an API error, ``model_refusal_no_fallback`` (claude@325804429; both observed, anthropic-refusal).
  Unless the refusal's ``stop_details`` names the category ``cyber`` or ``frontier_llm`` (``vR``, the
  categories the silent refusal fallback takes, ``Gdi`` at claude@312485945-312486302; armed per refusal
  by ``refusalFallbackSilentRearm``, claude@320289627 and claude@328784198; the ``fallback_request`` it
  yields, claude@320289802): then the second refusal is sent again, the same messages, on the fallback
  model ``claude-opus-4-8`` with max_tokens 64000, once; refused there too, the run ends as an API error
  naming that model's safeguards (observed, anthropic-refusal-mid-stream on 2.1.328: "Opus 4.8's
  safeguards flagged this message ... real-time-cyber-safeguards"). AMBIGUOUS: the gates around the
  fallback (``bor``/``pZe``: ``convolute_arcades``, ``tender_quilt``) were not read to their sources; the
  driven defaults switched, and the port follows them. Why the switch waits for the same-model retry
  (``eia``, claude@325802615) to be refused was not read line by line: observed.
* ``pause_turn``: the run ends with ``success`` and the paused text (observed,
  anthropic-pause-turn: one request).

Silent turns (claude@320920954-320921900): after ``silentTurnReminderTurns`` (``Qgo`` = 5) tool
rounds in a row without visible text, the tool results carry "The user hasn't heard from you in a
while. ..." (``Jgo``): a Remind that runs the calls (observed at turns 4, 9, 14 of chat-long-tool-run;
where the counter lives was not read: the port counts tool rounds without text and restarts after
each reminder, which is what the runs showed).

Errors (``zPs``, claude@320103811, for an HTTP status; ``qPs``, claude@320104200-320105500, for a
streamed request that failed): 529 -> the overloaded path (``uAt``, claude@320105517): up to
``maxOverloaded`` 3 overloaded answers are retried, then the run fails; 408, 409, 429 and any 5xx are
retried while ``retries < maxRetries`` (``zG``), 10 by default (``nKr`` returns ``QPs`` = 10 unless
CLAUDE_CODE_MAX_RETRIES is set); a 404 is retried once without streaming (``j1e``), and so is any other
status, as the streamed request's failure (``badRequest`` -> ``j1e``; observed: a 400 and a 403 were each
sent twice); after that the run fails. A stream that breaks (``qPs`` by cause, ``XPs`` at
claude@320110417): a dropped connection is retried 10 times, then once without streaming; a stream cut
short once, then without streaming; an error event with nothing received goes out again at once without
streaming (``j1e``: max_tokens 64000, observed), after thinking only it fails unless the event is a
server error (two more tries), after output a bad request fails and a server error keeps the partial
reply (``keepPartial``: the port goes on with the turn); a reply with no block and no stop reason is tried
again without streaming. The kinds stand for what the server sends (bench/wires/delivery.py error_mode). A
run that fails ends with a synthetic "API Error" message, exit 1, and a result line with ``is_error``
true and ``terminal_reason`` ``api_error``: reason ``api_error``.

Context overflow (a 400/413 whose words Claude Code reads as "prompt is too long", claude@316096009; the
port reads the kind ``context_overflow``): reactive compaction (claude@328813000-328816500, ``k6n`` at
claude@319524457): a summarising request; each refused try of it is sent twice (observed); refused as too
long, the oldest fifth of the message groups is dropped (``Dye``, claude@319856914) and the request tried
again, up to ``Gee`` = 3 truncations and while two groups are left; then the run ends, "Prompt is too
long", result subtype ``success`` with ``is_error`` true (observed). A summary without a ``<summary>``
block is asked for once more; then the loop goes on with the compacted conversation (``compact``). A
second overflow after a compaction ends the run (``hasAttemptedReactiveCompact``; not driven). NOT
ported: the compactor's passes on a long conversation (``FEt``, ``d6n``, ``h6n``): see
CONFORMANCE_EXPLAINED.

Cap: none by default (no ``--max-turns``; ``error_max_turns`` is only reachable with it).
"""

from __future__ import annotations

import json
from typing import Any

from bench import (
    TABLES,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Note,
    Remind,
    RequestChanges,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    error_mode,
    predicate,
)

PIN = Source(release="npm @anthropic-ai/claude-code@2.1.328 (+ claude-code-linux-x64@2.1.328, the native binary)")
BIN = "claude"

MAX_RETRIES = 10  # nKr -> QPs=10, claude@320110807 / claude@320138000
MAX_OVERLOADED = 3  # T_e=3, claude@320110838
MALFORMED_RETRIES = 2  # VS=2, claude@328738673
OUTPUT_LIMIT_ATTEMPTS = 3  # cs=3, claude@328692797
NO_STREAM = RequestChanges(max_tokens=64000)
"""A retry without streaming (j1e) goes out with max_tokens 64000 (observed: every such request of the
driven runs; the streamed requests carry 32000)."""
SILENT_TURNS = 5  # Qgo=5, claude@320920954 (silentTurnReminderTurns, VUs)
SILENT_MAX = 3  # Zgo=3, claude@320920956: three reminders at most (observed: none at step 20)
SILENT_REMINDER = ("The user hasn't heard from you in a while. As you continue, keep them updated when there's "
                   "something to tell \u2014 a finding, a change of plan.")  # Jgo, claude@320921012

DROPPED_CALL = "The previous response failed to produce a valid tool call. Please retry the tool call now."  # Ogr
NO_OUTPUT = ("[Your previous response had no visible output. Please continue and produce a user-visible "
             "response.]")  # iHn, claude@307871292
OUTPUT_LIMIT = ("Output token limit hit. Resume directly \u2014 no apology, no recap of what you were doing. "
                "Pick up mid-thought if that is where the cut happened. Break remaining work into smaller "
                "pieces.")  # Rpo, claude@307872281
REFUSED = ("Your response above was stopped by a safety classifier \u2014 this is not a tool or API error. "
           "The rest of it was withheld, and tool calls in it that had not finished did not run. Do not "
           "produce that content again, even reworded.")  # Cpo, claude@307871696
SWITCH_CATEGORIES = ("cyber", "frontier_llm")  # vR, claude@312485945 (Gdi's refusal categories)
SWITCHED = RequestChanges(max_tokens=64000, model="claude-opus-4-8")
"""The refused request sent again on the fallback model (observed: anthropic-refusal-mid-stream on 2.1.328,
the third request of the turn; the model name and max_tokens as the server received them)."""


def refusal_category(turn: Turn) -> str | None:
    """The category of the ``stop_details`` the Anthropic wire serves with a refusal (the turn's
    ``finish_detail`` when it is the refusal object, bench/wires/anthropic/render.py), else None."""
    try:
        details = json.loads(turn.finish_detail or "")
    except ValueError:
        return None
    if isinstance(details, dict) and details.get("type") == "refusal" and isinstance(details.get("category"), str):
        return str(details["category"])
    return None


def served_stop_reason(turn: Turn, dialect: str) -> str | None:
    """The stop_reason Claude Code receives for `turn` (bench/serve/render.py finish_for, wire anthropic)."""
    if turn.refusal is not None and turn.error is None:
        return "refusal"
    if dialect == "anthropic" or turn.finish_raw is None or turn.finish == "unknown":
        return turn.finish_raw  # an unknown finish goes out as its raw string (never pause_turn)
    for raw, entry in TABLES["anthropic"].items():
        if entry.finish == turn.finish:
            return raw
    return turn.finish_raw


_KNOWN = ("end_turn", "stop_sequence", "max_tokens", "model_context_window_exceeded", "tool_use", "pause_turn",
          "refusal")
"""The Messages API's stop reasons; another string ends the run with result subtype error_during_execution
(observed: gemini-malformed-function-call, responses-failed)."""


def _bad_input(arguments: str) -> bool:
    """Input that is not a JSON object: kept as __unparsedToolInput (claude@306444306), fails validation."""
    if not arguments.strip():
        return False
    try:
        return not isinstance(json.loads(arguments), dict)
    except ValueError:
        return True


def _status(err: TurnError) -> int | None:
    if err.status is not None:
        return err.status
    return {"overloaded": 529, "rate_limit": 429, "server_error": 500}.get(err.kind)


COMPACT_RETRIES = 3  # Gee=3, claude@319856902: head truncations of the compaction request at most
SUMMARY_REQUEST = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. ..."
"""The head of the compaction (summary) request's prompt (claude@319496760), as the server sees it."""
COMPACT_RETRY = "[earlier conversation truncated for compaction retry]"  # Jvt, claude@319856914
SUMMARY_AGAIN = ("For this reply only: write what the instructions above ask for, with the summary inside "
                 "<summary></summary> tags. ...")
"""The paragraph the second compaction request adds to its last message (k6n's retry, claude@319524457)."""


def _delivery(turn: Turn, err: TurnError) -> str:
    """How Claude Code receives `err` from the replay server (bench.error_mode, the rule the server renders by): "cut" (the
    connection breaks), "end" (the stream ends with no stop reason), "stream" (an error event inside the
    stream, after the turn's output if any) or "http" (an HTTP status before any output)."""
    return error_mode(turn) or "http"  # `err` is the turn's error, so a mode is always found


def _without_streaming(memo: dict[str, Any], rule: str) -> Decision:
    """j1e (claude@320105900): a retry without streaming, counted against maxRetries; the first one goes out
    with max_tokens 64000 (observed, NO_STREAM), later ones repeat that request; none left: the run fails."""
    retries = memo.get("retries", 0)
    tried = bool(memo.get("no_stream"))
    if tried and retries >= MAX_RETRIES:
        return Stop("api_error", ok=False, rule="api-error")
    memo["retries"] = min(retries + 1, MAX_RETRIES)
    memo["no_stream"] = True
    return Resend(rule, changes=None if tried else NO_STREAM)


def _stream_failed(turn: Turn, err: TurnError, memo: dict[str, Any], how: str) -> Decision | None:
    """qPs (claude@320104200-320105500) for a streamed request that failed: by cause and progress."""
    retries = memo.get("retries", 0)
    if how == "cut":  # connectionLost: zG, then j1e (observed: chat-connection-dropped-repeat, 11 resends)
        if retries < MAX_RETRIES:
            memo["retries"] = retries + 1
            return Resend("stream-retry")
        return _without_streaming(memo, "stream-retry")
    if how == "end":  # truncated: a6("truncations", 1): one streamed retry, then j1e
        if not memo.get("truncations") and retries < MAX_RETRIES:
            memo["truncations"] = 1
            memo["retries"] = retries + 1
            return Resend("stream-retry")
        return _without_streaming(memo, "stream-retry")
    # an error event: XPs (claude@320110417, isServerError at claude@320297824) reads the event's type:
    # api_error / timeout_error -> serverError, anything else -> badRequest; the port reads the kinds those
    # types answer to (server_error, timeout), never the recorded code
    server = err.kind in ("server_error", "timeout") or (err.status is not None and err.status >= 500)
    if (turn.content or "").strip() or turn.tool_calls:  # progress "output"
        # badRequest/unknown after output: fail; a server error after output: keepPartial, the reply as
        # received is the model's answer (None: decide goes on with the turn as if it had no error)
        return None if server else Stop("api_error", ok=False, rule="stream-error-stop")
    if turn.reasoning is not None:  # progress "thinkingOnly": serverError a6("afterThinkingOnly", 2), else fail
        spent = memo.get("thinking_retries", 0)
        if server and spent < 2 and retries < MAX_RETRIES:
            memo["thinking_retries"] = spent + 1
            memo["retries"] = retries + 1
            return Resend("stream-retry")
        return Stop("api_error", ok=False, rule="stream-error-stop")
    return _without_streaming(memo, "no-stream-retry")  # nothing received: j1e at once


def _groups(state: State) -> int:
    """The conversation's message groups as the compaction counts them (jee, claude@319856914): the prompt
    and one per tool round."""
    return 1 + sum(1 for t in state.turns if t.error is None and t.tool_calls)


def _overflow(state: State) -> Decision:
    """A context overflow (prompt too long): reactive compaction (claude@328813000-328816500, k6n at
    claude@319524457): one summarising request ("CRITICAL: Respond with TEXT ONLY ..."); each failed try is
    sent once more (observed: every 400 of the compaction request went out twice); a try refused as too long
    drops the oldest fifth of the groups (Dye, claude@319856914: at least one, never the last; no cut left
    with fewer than 2 groups) and tries again, up to Gee=3 truncations; then the run ends with "Prompt is
    too long": result subtype success, is_error true (observed: chat-context-overflow-after-tools)."""
    memo = state.memo
    phase = memo.get("compacting")
    if phase is None:
        if memo.get("compacted"):  # hasAttemptedReactiveCompact: the error is surfaced
            return Stop("success", ok=False, rule="compact-failed")
        memo["compacting"] = "summary"
        memo["groups"] = _groups(state)
        memo["compact_sent_twice"] = False
        memo["compact_truncations"] = 0
        return Remind("compact-summary", message=SUMMARY_REQUEST)
    if not memo.get("compact_sent_twice"):
        memo["compact_sent_twice"] = True
        return Resend("compact-retry")
    groups: int = memo.get("groups", 1)
    if groups < 2 or memo.get("compact_truncations", 0) >= COMPACT_RETRIES:
        memo.pop("compacting", None)
        return Stop("success", ok=False, rule="compact-failed")
    memo["groups"] = groups - min(max(1, groups // 5), groups - 1)
    memo["compact_truncations"] = memo.get("compact_truncations", 0) + 1
    memo["compact_sent_twice"] = False
    return Remind("compact-truncate", message=COMPACT_RETRY, changes=RequestChanges(compact=True))


def _summary_reply(turn: Turn, memo: dict[str, Any]) -> Decision:
    """The compaction request answered (k6n, claude@319524457): a reply without a <summary> block is asked
    for once more; then the first summary is taken and the loop goes on with the compacted conversation
    ("This session is being continued from a previous conversation ...": observed,
    chat-context-overflow-compacted)."""
    if "<summary>" not in (turn.content or "") and not memo.get("summary_asked_again"):
        memo["summary_asked_again"] = True
        # the same request, its last message grown by this paragraph (observed, chat-context-overflow-compacted)
        return Remind("compact-summary-again", message=SUMMARY_AGAIN)
    for key in ("compacting", "summary_asked_again", "compact_sent_twice"):
        memo.pop(key, None)
    memo["compacted"] = True
    memo["retries"] = 0
    return Remind("compacted", message="This session is being continued from a previous conversation ...",
                  changes=RequestChanges(compact=True))


def _error(turn: Turn, err: TurnError, state: State) -> Decision | None:
    """Claude Code's answer to a failed request; None: the partial reply is kept as the answer."""
    memo = state.memo
    if err.kind == "context_overflow":
        # Claude Code tells an overflow by the error's words (i4r/B9s, claude@316096009: "prompt is too long",
        # "maximum context length", "context_length_exceeded", ...); the port reads the kind they answer to
        return _overflow(state)
    status = _status(err)
    retries: int = memo.get("retries", 0)
    if status == 529:
        over: int = memo.get("overloaded", 0) + 1
        memo["overloaded"] = over
        if over < MAX_OVERLOADED and retries < MAX_RETRIES:
            memo["retries"] = retries + 1
            return Resend("overloaded-retry")
        return Stop("api_error", ok=False, rule="api-error")
    how = _delivery(turn, err)
    if how != "http":
        return _stream_failed(turn, err, memo, how)
    retryable = status is not None and (status in (408, 409, 429) or status >= 500)
    if retryable and retries < MAX_RETRIES:
        memo["retries"] = retries + 1
        return Resend("http-retry")
    if status is not None and not retryable and not memo.get("no_stream"):
        # a streamed request that failed with another status (badRequest/unknown) gets one more try
        # without streaming: qPs -> z = j1e (claude@320104200-320105500); zPs sends a 404 there too
        memo["no_stream"] = True
        memo["retries"] = retries + 1
        # observed: these retries carry no max_tokens change (rec-azure-prompt-filter-error)
        return Resend("not-found-retry" if status == 404 else "no-stream-retry")
    return Stop("api_error", ok=False, rule="api-error")


_RETRACTED = (
    "Not a different decision: what the server can see of a retraction. Claude Code retracts a tool_use reply "
    "without a block (tombstone, claude@328819797-328820600) and sends the Ogr nudge instead; the next request "
    "does not echo the reply as it was served (the run's note: 'history differs at item 1 (3 items before, 4 "
    "after)'), so the server cannot read it as an echo plus a message and says 'unknown' where the port says "
    "remind [dropped-call]. The importer fixture "
    "tests/importers/fixtures/claude_code/anthropic-dropped-tool-use.jsonl (driven on 2.1.328) shows the "
    "retraction (retractedMessageUuids) and the nudge text; the steps before and after agree."
)
_WITHHELD = (
    "Not a different decision: a reply Claude Code withholds. An empty end_turn, a cut (max_tokens) reply "
    "without text, or a refusal is kept out of the next request (the output-limit recovery and the empty-reply "
    "nudge build the request from the messages without the withheld one, claude@328818300-328819500, "
    "claude@328740500-328741500; a refused reply is not written at all: con-anthropic-refusal-stream.jsonl in "
    "tests/importers/fixtures/claude_code/), so the nudge request does not echo the reply as it was served "
    "('history differs at item 1'): the server reads 'unknown' where the port says remind. Driving 2.1.328 "
    "showed one request per step as the port has."
)
_REFUSAL_RESEND = (
    "Not a different decision: a refusal with no content. Claude Code withholds the refused reply and sends "
    "the Cpo note with the request again (H6's transcript anthropic-refusal.jsonl has the isMeta user line "
    "with refusedMessageId); on the wire the note is not a message the server tells apart from the request "
    "before (the refused reply had nothing to echo), so it reads a resend where the port says remind "
    "[refusal-nudge]; the second refusal ends the run as the port says (api_error, "
    "model_refusal_no_fallback). With content (chat-content-filter) the server sees the remind and agrees."
)
_LONG_COMPACTION = (
    "A real difference, not modelled (said so, not guessed): on a long conversation (47 message groups) "
    "the reactive compactor's own passes decide how many compaction requests go out: it splits what to "
    "summarise from what to keep (FEt), leaves tool results out (d6n, up to Gee=3 passes) and puts "
    "truncated groups back (h6n) around its head truncations (claude@319527115-319527700); driving 2.1.328 "
    "showed a first compaction request already shrunk (+compact) and nine tries of two requests each "
    "before 'Prompt is too long' (step 65), where the port sends the full summary request and stops after "
    "three truncations (step 55). The short conversations (chat-context-overflow-after-tools, "
    "-window-shrinks, -compacted) agree step by step."
)
_TOOL_SEARCH = (
    "The harness, not the loop's stop rule: Claude Code defers MCP tools behind its ToolSearch tool, and "
    "the driver can only give it the sequence's tools as MCP stub tools (conformance/drivers/claude_code_"
    "driver.mjs). A 400 on a request that declared deferred tools, 'that no other recovery took', is sent "
    "again without deferred tools with the note 'ToolSearch is no longer available ...' (R9e/Jq, "
    "claude@320195316), which the server reads as reminders and resends (7 requests where the port, whose "
    "tools are the loop's own, sends 2); both end with api_error. The 400 before any tool round "
    "(rec-azure-prompt-filter-error, rec-openai-image-403-then-invalid-image) agrees."
)

_EMPTY_NO_STOP_OUTCOME = (
    "A real difference in the outcome, not modelled (said so, not guessed): the steps agree (the empty reply "
    "with no stop reason and zero usage is sent again once, then the run ends), but driving 2.1.328 on the "
    "2026 shapes of earendil-works/pi#8233 and anomalyco/opencode#28507 showed the run's result as "
    "error_during_execution, not ok, where the port ends it as success on the second empty reply; the rule "
    "that tells these apart from rec-gemini-prompt-blocked-no-candidates (which ends as success in both) was "
    "not found in the pinned lines"
)

CONFORMANCE_EXPLAINED = {
    "seed000-truncated-max-tokens": _WITHHELD,
    "responses-reasoning-only": _WITHHELD,
    "anthropic-dropped-tool-use": _RETRACTED,
    "chat-dropped-calls-reasoning-only": _RETRACTED,
    "chat-empty-stop": _WITHHELD,
    "chat-stop-null-unfinished-reasoning": _WITHHELD,
    "gemini-max-tokens-empty": _WITHHELD,
    "rec-gemini-max-tokens-no-parts": _WITHHELD,
    "con-anthropic-refusal-json": _WITHHELD,
    "con-anthropic-refusal-stream": _WITHHELD,
    "rec-azure-content-filter-hate": _WITHHELD,
    "anthropic-refusal": _REFUSAL_RESEND,
    "gemini-safety": _REFUSAL_RESEND,
    "rec-gemini-safety-no-parts": _REFUSAL_RESEND,
    "bedrock-content-filtered": _REFUSAL_RESEND,
    "gemini-prohibited-content": _REFUSAL_RESEND,
    "gemini-spii": _REFUSAL_RESEND,
    "gemini-escalation": _REFUSAL_RESEND,
    "gemini-model-armor": _REFUSAL_RESEND,
    "chat-context-window-exceeded-finish": _WITHHELD,
    "anthropic-empty-response-zero-usage": _EMPTY_NO_STOP_OUTCOME,
    "chat-empty-after-tool-call-repeat": _EMPTY_NO_STOP_OUTCOME,
    "chat-error-400-request-too-large": _TOOL_SEARCH,
    "seed001-never-stops-context-overflow": _LONG_COMPACTION,
}
"""Differences between this port and driving 2.1.328, each with the evidence (stopbench conform claude_code)."""


_SURVIVES_NO_529 = (
    "no sequence sends an overloaded error to this port (HTTP 529, or the kind overloaded without a status; "
    "chat-transient-errors-after-tools' overloaded answer is a 409): Claude Code's overloaded path (uAt, "
    "maxOverloaded 3) never runs. A sequence would be worth it only with every column's cell checked"
)
_SURVIVES_NO_STREAM_CUT = (
    "no sequence sends a stream_cut (a stream that ends cleanly with no stop reason and no error event) to "
    "this port: qPs's truncation budget (one streamed retry, then j1e) never runs"
)
_SURVIVES_THINKING_RETRY = (
    "no in-stream server error after thinking only reaches this port (the one after thinking, "
    "rec-openrouter-length-then-stream-error, is a bad request, which fails at once)"
)
_SURVIVES_COMPACTION_KEY = "the key is set when the compaction starts, before any read: the default is never read"
MUTATION_NOTES = (
    MutationNote("MAX_OVERLOADED = 3  # T_e=3", _SURVIVES_NO_529, equivalent=False),
    MutationNote("if status == 529:", _SURVIVES_NO_529, equivalent=False),
    MutationNote('over: int = memo.get("overloaded", 0) + 1', _SURVIVES_NO_529, equivalent=False),
    MutationNote("if over < MAX_OVERLOADED and retries < MAX_RETRIES:", _SURVIVES_NO_529, equivalent=False),
    MutationNote('return Resend("overloaded-retry")', _SURVIVES_NO_529, equivalent=False),
    MutationNote(
        'return {"overloaded": 529, "rate_limit": 429, "server_error": 500}.get',
        _SURVIVES_NO_529,
        ("529 -> 528", "529 -> 530"),
        equivalent=False,
    ),
    MutationNote(
        'memo["retries"] = retries + 1',
        _SURVIVES_NO_529,
        equivalent=False,
        next='return Resend("overloaded-retry")',
    ),
    MutationNote(
        'return Stop("api_error", ok=False, rule="api-error")',
        _SURVIVES_NO_529,
        ("Stop: ok inverted",),
        equivalent=False,
        next="how = _delivery(turn, err)",
    ),
    MutationNote(
        'return {"overloaded": 529, "rate_limit": 429, "server_error": 500}.get',
        "a status-less error is never served as an HTTP status (bench/wires/delivery.py error_mode), so the "
        "code a status-less rate_limit or server_error is given only meets the `== 529` test, which 428, 430, "
        "499 and 501 fail alike",
        ("429 -> 428", "429 -> 430", "500 -> 499", "500 -> 501"),
    ),
    MutationNote(
        'retries = memo.get("retries", 0)',
        "the default is read only when the first response of a run fails in the stream with nothing received, "
        "and it counts only towards the budget of 10, which no such run reaches: a coverage gap",
        equivalent=False,
    ),
    MutationNote(
        'memo["retries"] = min(retries + 1, MAX_RETRIES)',
        "the count after a retry without streaming decides only when the budget of 10 is reached after it: "
        "chat-connection-dropped-repeat gets there first (min(.., 10) caps 11 and 12 alike) and "
        "chat-network-flaky-after-tools has one more failure only",
        equivalent=False,
    ),
    MutationNote(
        'if not memo.get("truncations") and retries < MAX_RETRIES:',
        _SURVIVES_NO_STREAM_CUT,
        equivalent=False,
    ),
    MutationNote('memo["truncations"] = 1', _SURVIVES_NO_STREAM_CUT, equivalent=False),
    MutationNote(
        'memo["retries"] = retries + 1',
        "no sequence sends a stream_cut (a stream that ends cleanly with no stop reason and no error event) "
        "to this port: qPs's truncation budget (one streamed retry, then j1e) never runs; nor an in-stream "
        "server error after thinking only",
        equivalent=False,
        next='return Resend("stream-retry")',
    ),
    MutationNote(
        'return Resend("stream-retry")',
        _SURVIVES_NO_STREAM_CUT,
        ("Resend -> Continue (no calls run)",),
        equivalent=False,
        next='return _without_streaming(memo, "stream-retry")',
    ),
    MutationNote(
        'server = err.kind in ("server_error", "timeout") or (err.status is not None and err.sta',
        "the status test of an in-stream error: the catalogue's in-stream errors to this port are status-less "
        "(a timeout) or a 400 (rec-openrouter-length-then-stream-error), and `server` decides only after "
        "output or thinking: no in-stream 5xx after output reaches it",
        equivalent=False,
    ),
    MutationNote(
        'if (turn.content or "").strip() or turn.tool_calls:  # progress "output"',
        "no in-stream error after text or tool calls reaches this port "
        "(rec-openrouter-length-then-stream-error has thinking only, which a bad request fails on either "
        "branch), and with nothing received the kept partial reply meets the empty-reply rule, the same retry "
        "without streaming",
        equivalent=False,
    ),
    MutationNote(
        'return None if server else Stop("api_error", ok=False, rule="stream-error-stop")',
        "no in-stream error after text or tool calls reaches this port",
        equivalent=False,
    ),
    MutationNote('spent = memo.get("thinking_retries", 0)', _SURVIVES_THINKING_RETRY, equivalent=False),
    MutationNote("if server and spent < 2 and retries < MAX_RETRIES:", _SURVIVES_THINKING_RETRY, equivalent=False),
    MutationNote('memo["thinking_retries"] = spent + 1', _SURVIVES_THINKING_RETRY, equivalent=False),
    MutationNote(
        'return Resend("stream-retry")',
        "no in-stream server error after thinking only",
        ("Resend -> Continue (no calls run)",),
        equivalent=False,
        next='return Stop("api_error", ok=False, rule="stream-error-stop")',
    ),
    MutationNote(
        'return Stop("success", ok=False, rule="compact-failed")',
        "a second overflow after a compaction: chat-context-overflow-compacted ends after its compacted "
        "request, and the other overflows never compact",
        ("Stop: ok inverted",),
        equivalent=False,
        next='memo["compacting"] = "summary"',
    ),
    MutationNote('groups: int = memo.get("groups", 1)', _SURVIVES_COMPACTION_KEY),
    MutationNote('if groups < 2 or memo.get("compact_truncations", 0) >= COMPACT_RETRIES:', _SURVIVES_COMPACTION_KEY),
    MutationNote('memo["compact_truncations"] = memo.get("compact_truncations", 0) + 1', _SURVIVES_COMPACTION_KEY),
    MutationNote(
        'memo["groups"] = groups - min(max(1, groups // 5), groups - 1)',
        "`groups - 1` never binds: for two groups or more a fifth (at least 1) is below it",
        ("1 -> 0",),
    ),
    MutationNote(
        'memo["groups"] = groups - min(max(1, groups // 5), groups - 1)',
        "the fifth only sets how many groups are left, which decides only for a conversation that runs out "
        "before Gee=3 truncations with 3 to 9 groups: the catalogue's overflows come after 1 tool round (out "
        "after one truncation whatever the fraction) or 46 (never out)",
        ("1 -> 2", "5 -> 4", "5 -> 6"),
        equivalent=False,
    ),
    MutationNote(
        'memo["retries"] = 0',
        "the retry count after a compaction: no sequence fails again after a compacted request",
        equivalent=False,
        next='return Remind("compacted"',
    ),
    MutationNote(
        'memo["retries"] = retries + 1',
        "the retry without streaming of another status counts towards the budget of 10 only if retryable "
        "failures follow it; no sequence has one after a 4xx",
        equivalent=False,
        next="# observed: these retries carry no max_tokens change",
    ),
    MutationNote(
        'return Resend("not-found-retry" if status == 404 else "no-stream-retry',
        "only the rule's name changes, and only for a 403, 404 or 405: the catalogue sends no 404, 403 or 405 "
        "to this port (a 404 would be an unknown model, which a driven run never sees)",
        equivalent=False,
    ),
    MutationNote.reset_after_success("memo[counter] = 0  # the counts of qPs/zPs are per request"),
    MutationNote(
        'memo["retries"] = 1',
        "the count after a reply with no block and no stop reason decides only if ten failures follow it "
        "(rec-gemini-prompt-blocked-no-candidates ends after one)",
        equivalent=False,
    ),
    MutationNote(
        'memo["output_limit"] = 0',
        "a reset of the output-limit budget at a tool round: only three cut replies, a tool round, then a "
        "fourth cut tell it apart; no sequence has them",
        equivalent=False,
    ),
    MutationNote(
        "silent: int = 0 if turn.content and turn.content.strip() else memo.get",
        "a text round restarts the silent count: only a run with text rounds and then four or more silent "
        "ones before its answer tells 0 from 1; none",
        ("0 -> 1",),
        equivalent=False,
    ),
    MutationNote(
        "silent: int = 0 if turn.content and turn.content.strip() else memo.get",
        "counting by 2 modulo 5 reaches 5 at the same rounds as counting by 1 (2, 4, 1, 3, 5)",
        ("1 -> 2",),
    ),
    MutationNote(
        'if silent == SILENT_TURNS and memo.get("silent_sent", 0) < SILENT_MAX:',
        "the check's default is read only before the key is set, and -1, 0 and 1 all pass `< 3`; the count "
        "itself is set from its own default on the next line",
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(Note(f"{PIN}: the native binary's embedded JavaScript, byte offsets claude@N")),
    max_steps=None,
    reasons=["success", "api_error", "error_during_execution"],
    rules={
        "calls": Cited(Note(f"{BIN}@306444306 + observed"), text="every tool_use block is answered; unknown names and input that is not an object fail"),
        "answer": Cited(Note("observed (anthropic-tool-use-rounds)"), text="no calls: the run ends, subtype success"),
        "pause": Cited(Note("observed (anthropic-pause-turn)"), text="pause_turn ends the run with success, one request"),
        "dropped-call": Cited(Note(f"{BIN}@328819797-328820600 + @307871119 (Ogr) + @328738673 (VS=2)"), text="tool_use without a block: retracted, retry nudge, twice"),
        "dropped-call-stop": Cited(Note(f"{BIN}@328820500 (malformed_tool_use_exhausted)"), text="the third one ends the run"),
        "no-output": Cited(Note(f"{BIN}@328740500-328741000 + @307871292 (iHn)"), text="an empty end_turn: nudge"),
        "silent-turn": Cited(Note(f"{BIN}@320920954-320921900 (Qgo=5, Jgo) + observed"), text="the 5th tool round in a row without text: its results carry the silent-turn reminder"),
        "output-limit": Cited(Note(f"{BIN}@307872281 (Rpo) + {BIN}@328694000-328694700 + @328692797 (cs=3)"), text="max_tokens with text: resume nudge, 3 attempts"),
        "output-limit-stop": Cited(Note(f"{BIN}@328693000-328693400 (up: exhausted)"), text="the 4th cut reply ends the run"),
        "refusal-nudge": Cited(Note(f"{BIN}@307871696 (Cpo) + observed"), text="the first refusal: withheld, nudge once"),
        "refusal-switch": Cited(Note(f"{BIN}@312485945-312486302 (vR, Gdi) + @320289802 (fallback_request) + observed (anthropic-refusal-mid-stream)"), text="a second refusal of category cyber or frontier_llm: sent again once on claude-opus-4-8"),
        "refusal-stop": Cited(Note(f"{BIN}@325804429 (model_refusal_no_fallback) + observed"), text="a second refusal ends the run"),
        "http-retry": Cited(Note(f"{BIN}@320103811-320104200 (zPs) + @320138000 (nKr, 10)"), text="408/409/429/5xx retried"),
        "overloaded-retry": Cited(Note(f"{BIN}@320105517 (uAt) + @320110838 (maxOverloaded 3)"), text="529 retried"),
        "stream-retry": Cited(Note(f"{BIN}@320104200-320105500 (qPs: connectionLost -> zG, truncated a6 1, thinkingOnly serverError a6 2) + observed"), text="a broken stream retried, 10 retries"),
        "stream-error-stop": Cited(Note(f"{BIN}@320104200-320105500 (qPs: an error event after output or thinking, badRequest -> fail) + @320110417 (XPs) + observed (rec-openrouter-length-then-stream-error)"), text="the run fails at once"),
        "compact-summary": Cited(Note(f"{BIN}@328813000-328816500 + @319524457 (k6n, reactive compaction) + observed (chat-context-overflow-after-tools)"), text="an overflow: a summarising request"),
        "compact-retry": Cited(Note("observed (chat-context-overflow-after-tools, -window-shrinks)"), text="each failed try of the compaction request is sent once more"),
        "compact-truncate": Cited(Note(f"{BIN}@319856914 (Dye, Jvt) + @319856902 (Gee=3)"), text="too long: the oldest fifth of the groups dropped, the request tried again"),
        "compact-failed": Cited(Note(f"{BIN}@319862938 (Qye 'Conversation too long') + observed"), text="no cut left: the run ends, subtype success, is_error true"),
        "compact-summary-again": Cited(Note(f"{BIN}@319524457 (k6n: no <summary> block: asked once more, a paragraph added; observed, chat-context-overflow-compacted)")),
        "compacted": Cited(Note(f"{BIN}@319524457 (k6n: the first summary taken) + observed (chat-context-overflow-compacted)"), text="the loop goes on with the compacted conversation"),
        "not-found-retry": Cited(Note(f"{BIN}@320103811 (zPs -> j1e)"), text="a 404 is retried once without streaming"),
        "duplicate-id": Cited(Note("observed (chat-tool-call-id-reused-per-round, chat-repeat-same-call)"), text="a tool_use whose id was used before is dropped, not run; none left: the request ends in '(no content)'"),
        "no-stream-retry": Cited(Note(f"{BIN}@320104200-320105500 (qPs badRequest/unknown -> j1e) + observed (rec-azure-prompt-filter-error, rec-openai-image-403-then-invalid-image)"), text="another status is tried once more without streaming"),
        "unknown-stop": Cited(Note("observed (gemini-malformed-function-call, responses-failed)"), text="a stop_reason outside the Messages API's ends the run, subtype error_during_execution"),
        "api-error": Cited(Note(f"{BIN}@320103811 (zPs)"), text="any other status, or retries spent: the run fails"),
    },
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    err = turn.error
    if err is not None and (answer := _error(turn, err, state)) is not None:
        return answer
    if memo.get("compacting"):
        return _summary_reply(turn, memo)
    for counter in ("retries", "overloaded", "truncations", "thinking_retries"):
        memo[counter] = 0  # the counts of qPs/zPs are per request (claude@320110591, the retry state)
    no_stream = memo.pop("no_stream", False)
    stop = served_stop_reason(turn, state.dialect)
    if (stop is None and not turn.tool_calls and not (turn.content or "").strip() and turn.reasoning is None
            and not no_stream):
        # a streamed reply that ended with no block and no stop reason: the stream failed (vso/XPs,
        # claude@320110417) and is tried again without streaming (j1e, claude@320105900; observed:
        # rec-gemini-prompt-blocked-no-candidates, one request with max_tokens 64000)
        memo["no_stream"] = True
        memo["retries"] = 1
        return Resend("no-stream-retry", changes=NO_STREAM)

    if stop == "refusal":
        if memo.get("refused"):
            if refusal_category(turn) in SWITCH_CATEGORIES and not memo.get("switched"):
                memo["switched"] = True
                return Resend("refusal-switch", changes=SWITCHED)
            return Stop("api_error", ok=False, rule="refusal-stop")
        memo["refused"] = True
        return Remind("refusal-nudge", message=REFUSED)
    memo["refused"] = False

    seen: set[str] = memo.setdefault("ids", set())
    fresh = [n for n, c in enumerate(turn.tool_calls) if not c.id or c.id not in seen]
    seen.update(c.id for c in turn.tool_calls if c.id)
    if turn.tool_calls and not fresh:
        # observed (chat-tool-call-id-reused-per-round, chat-repeat-same-call): a tool_use whose id an
        # earlier turn already used is dropped; with none left the next request ends in "(no content)"
        return Remind("duplicate-id", message="(no content)")
    if turn.tool_calls:
        # every named call is a stub tool of the driver (bench/serve/tools.py tool_specs)
        # an empty id fails too (observed: rec-gemini-compat-empty-tool-id, rec-openai-legacy-function-call)
        failed = tuple(n for n in fresh if not turn.tool_calls[n].name.strip() or not turn.tool_calls[n].id
                       or _bad_input(turn.tool_calls[n].arguments))
        memo["output_limit"] = 0
        run = tuple(n for n in fresh if n not in failed)
        silent: int = 0 if turn.content and turn.content.strip() else memo.get("silent", 0) + 1
        memo["silent"] = silent % SILENT_TURNS
        if silent == SILENT_TURNS and memo.get("silent_sent", 0) < SILENT_MAX:
            memo["silent_sent"] = memo.get("silent_sent", 0) + 1
            return Remind("silent-turn", message=SILENT_REMINDER, run=run, failed=failed)
        return Continue("calls", run=run, failed=failed)
    if stop == "tool_use":
        malformed: int = memo.get("malformed", 0)
        if malformed >= MALFORMED_RETRIES:  # the result line: subtype success, is_error true (observed)
            return Stop("success", ok=False, rule="dropped-call-stop")
        memo["malformed"] = malformed + 1
        return Remind("dropped-call", message=DROPPED_CALL)
    text = (turn.content or "").strip()
    if stop in ("max_tokens", "model_context_window_exceeded"):  # text or not: Si() is false (xpo unused)
        spent: int = memo.get("output_limit", 0)
        if spent >= OUTPUT_LIMIT_ATTEMPTS:
            return Stop("api_error", ok=False, rule="output-limit-stop")
        memo["output_limit"] = spent + 1
        return Remind("output-limit", message=OUTPUT_LIMIT)
    if stop == "pause_turn":
        return Stop("success", ok=True, rule="pause")
    # AMBIGUOUS (observed only): an unknown stop_reason with no text as the first reply failed the run
    # (gemini-malformed-function-call, responses-failed); after tool results it ended as success
    # (gemini-too-many-tool-calls); the branch that decides was not read
    if stop is not None and stop not in _KNOWN and not text and not any(t.tool_calls for t in state.turns):
        return Stop("error_during_execution", ok=False, rule="unknown-stop")
    if not text and stop in ("end_turn", "stop_sequence") and not memo.get("empty_nudged"):
        memo["empty_nudged"] = True
        return Remind("no-output", message=NO_OUTPUT)
    return Stop("success", ok=True, rule="answer")
