"""Codex's turn loop: follow up on tool-call items, end_turn false or queued input; retry stream errors 5 times.

Pin: ``@openai/codex@0.169.0`` (npm; Apache-2.0), the release that ``stopbench conform codex``
drives. Read from the released artefact: the platform package ``@openai/codex-linux-x64@0.169.0``,
file ``vendor/x86_64-unknown-linux-musl/bin/codex`` (sha256 ``b452ca20f838a885...``), a compiled
Rust executable. Citations ``bin/codex @N`` give byte offsets of string literals in that file (found
with ``grep -boa``). The source of tag ``rust-v0.169.0`` could not be had here: the search tool's
store holds ``codex-rs/core/src/session/turn.rs`` at one commit only (553376ff, no release), and the
repository (about 757 MB) is over the fetch limit. A compiled binary keeps its strings, not its
control flow, so the structure of the loop is still cited from the single files read before, each
at the commit it was read at (they correspond to no release):

* ``codex-rs/core/src/session/turn.rs`` @ ``553376ffcb5d4848ebb52cb7fb022e6d836d8eb6``
  (85,944 chars): ``run_turn``, ``run_sampling_request``, ``try_run_sampling_request``,
  ``drain_in_flight``.
* ``codex-rs/core/src/stream_events_utils.rs`` @ ``010ccb0c68ecacf2e5a4724385d5bab9deb9510b``:
  ``handle_output_item_done``.
* ``codex-rs/codex-api/src/sse/responses.rs`` @ ``0a7fb0d762765b7777bd3ca30edabcbeeab1abb0``:
  ``process_sse``.

Those citations are ``@c<offset>`` (character offsets, approximate, marked ~). Where 0.169.0 does
something else, the rule cites the binary's strings and the behaviour seen when driving it (every
cell of the catalogue, ``reports/conformance/codex.json``); those rules say "observed". Seed 002's
line numbers (``stream_events_utils.rs:325``, ``turn.rs:2542-2544``, ``responses.rs:426-435``)
could not be checked at any pin.

Configuration modelled: Codex's defaults for a custom Responses provider, as the conformance driver
now runs it (no ``request_max_retries`` / ``stream_max_retries`` in config.toml; both are fields of
``ModelProviderInfo``, bin/codex @1948847 / @1948866). The defaults, ``DEFAULT_REQUEST_MAX_RETRIES
= 4`` and ``DEFAULT_STREAM_MAX_RETRIES = 5`` (model_provider_info), are secondary (seen verbatim in
openai/codex's model-provider-info source, ``codex-rs/core/src/model_provider_info.rs`` in older trees,
not in the binary's strings) but agree with what driving 0.169.0 showed: a persistent
HTTP 500 got 30 requests (6 stream attempts of 1 + 4 request retries each).

What is modelled, per model response:

* Tool calls are ``function_call`` output items. ``handle_output_item_done`` starts each one at
  once and returns ``needs_follow_up = true``; after the stream ends, whatever the outcome,
  ``drain_in_flight`` awaits the tools and records their outputs. So the calls of a response that
  then fails are still run (the server cannot see this for a stop; unverified for 0.169.0).
* ``response.completed`` ends the response: ``needs_follow_up = model_needs_follow_up ||
  has_pending_input``; true -> another sampling request, false -> the turn ends.
* ``end_turn: false`` -> follow-up. Not in the pinned turn.rs; in later upstream versions (quoted by
  several write-ups); driving 0.169.0 agreed with it (responses-end-turn-false ends at turn 2, not
  1). Secondary.
* Steering: input queued while the response streamed (``turn.steer``) makes ``has_pending_input``
  true: Remind carrying the queued text (with the tools' outputs when the response had calls: the
  follow-up carries both; driven on chat-steer-with-tool-calls, see CONFORMANCE_EXPLAINED for the
  driver's race).
* ``response.incomplete`` (0.169.0 has a branch for it, unlike the pinned process_sse):
  - reason ``max_output_tokens`` (and any reason but content_filter): the turn fails at once,
    "Incomplete response returned, reason: " (bin/codex @380429), codexErrorInfo ``other``, no
    retry (observed: every cut-off sequence stopped at its cut-off turn, willRetry false). Stop
    ``error``.
  - reason ``content_filter``: a retryable stream error, "stream disconnected before completion:
    Incomplete response returned, reason: content_filter" (@5389750, @5424824), counted against
    ``stream_max_retries``; before each retry 0.169.0 appends a
    ``<content_filter_guidance>`` message (template ``generic.content_filter_guidance`` @3730913,
    text "Your previous response was blocked by a content filter. ..." @5321139). Remind; the 6th
    filtered response ends the turn with ``stream_error``.
* Other stream errors (the stream ends without ``response.completed``: "stream closed before
  response.completed" @2446904; a body cut mid-stream: "error decoding response body" @8225014;
  ``response.failed`` with no error object) are retried by ``run_sampling_request`` while
  ``retries < 5`` with the history re-read; the 6th ends the turn (``stream_error``). The
  history holds the output items whose ``output_item.done`` arrived before the stream ended, so a
  retry after output carries them (a Continue, with the calls of those items run) and a retry
  after none is the same request (a Resend): driving 0.169.0 showed both (chat-finish-null-intent,
  rec-openrouter-length-then-stream-error: an echo; rec-gemini-prompt-blocked-no-candidates: the
  same request). Such a stream is: a turn with no finish at all (finish_raw null: no terminal
  event; Codex reads no finish string, so this holds in every dialect), a ``stream_cut`` or
  ``connection_reset``, and any error that arrives in a stream that had started: an in-stream
  error event (``stream_error``), an error with no status, or an error after output, whatever its
  status (once output has streamed the HTTP status is 200; driving 0.169.0 on a status-400
  ``error`` event after reasoning showed no end of the response on the event, then the retry).
* HTTP errors before the stream (``turn.error`` with a status): the transport retries 5xx
  ``request_max_retries`` (4) times itself (Resend); after that the 5xx becomes a retryable
  ``internalServerError`` ("We're currently experiencing high demand", @5390450) and the stream
  retry above starts a new attempt, again with 4 request retries. A 429 is NOT retried by either
  layer: "exceeded retry limit, last status: " (@720263), codexErrorInfo
  ``responseTooManyFailedAttempts`` (@2301577), not retryable -> Stop ``error`` at once (observed
  with the default configuration: one request). A 400 is ``InvalidRequest``, fatal; context-window /
  quota errors are fatal too (``context_overflow``, ``quota``: checked first, also in a stream;
  unverified there). Any other status is ``UnexpectedStatus``, which ``is_retryable`` (core
  ``api_bridge.rs`` @ ``001cb8e2`` ``map_api_error``: 400 -> InvalidRequest, 500 ->
  InternalServerError, 429 -> RetryLimit, else UnexpectedStatus; ``error.rs`` ``is_retryable``:
  UnexpectedStatus true; no release, read from the search tool's store): a stream retry, with no
  transport retries first (those are for 5xx only). Driving 0.169.0 on
  chat-transient-errors-after-tools showed it: 408 and 409 each re-sent once, then the 429 ended the
  turn. 401 is left fatal: later upstream (``should_retry_response_stream``) excludes it from the
  stream retry; whether 0.169.0 does is not visible, and no sequence sends a 401 (ambiguous, said).
* The stop reason says how the turn ended as the app-server reports it (the driver's reading): a
  turn that failed after Codex had retried the stream at least once in it (an ``error`` notification
  with ``willRetry``) is ``stream_error``, whatever ended it; a turn that failed with no retry before
  is ``error``. Seen driving 0.169.0: the 429 after two stream retries ended as ``stream_error``.

Dialects: Codex speaks only the Responses API. A sequence of another dialect is read as the
Responses stream a proxy would produce: tool calls as ``function_call`` items, finish ``length`` as
``incomplete/max_output_tokens``, ``content_filter`` as ``incomplete/content_filter``, ``error``
(a raw error finish with no error object) as ``response.failed`` without an error object, no finish
at all as a stream with no terminal event, and every other finish as ``response.completed``: Codex
never reads a finish string.

Not modelled: auto-compaction, stop and after_agent hooks (none configured), plan mode, mailbox
pre-emption (multi-agent), invalid-image sanitising, the request-level retry of transport errors
before the response headers (the server never produces one: its dropped connections come after
the headers).

Tool calls whose arguments are not valid JSON (empty included) are answered by the function tool
handler with "failed to parse function arguments: ..." instead of running the tool (seen when
driving 0.169.0); the port counts them as failed. Valid JSON that is not an object (a JSON string
holding the object) runs: the bench's tools are the driver's dynamic tools, whose handler parses the
arguments into a `serde_json::Value`, not a struct, and sends them to the client as they are
(``codex-rs/core/src/tools/handlers/dynamic.rs`` @ ``2c353d2f``, no release: `let args: Value =
parse_arguments(&arguments)?`). A call whose name no tool has (a blank name; the bench's other
names are taken to be the driver's tools) finds no handler: ``ToolRegistry::dispatch_any`` returns
``FunctionCallError::RespondToModel("unsupported call: <name>")`` (``codex-rs/core/src/tools/
registry.rs`` @ ``0004ad15``, no release; the literal is in the binary, bin/codex @659030), an
error output for the model, and the turn follows up as for any call: failed. Neither was driven.
"""

from __future__ import annotations

import json
from typing import Any

from bench import Cited, Continue, Decision, MutationNote, Note, Remind, Resend, Source, State, Stop, Turn, predicate

REPO = "openai/codex"
BIN = ("@openai/codex@0.169.0 (npm @openai/codex-linux-x64@0.169.0 "
       "vendor/x86_64-unknown-linux-musl/bin/codex, sha256 b452ca20f838a885...)")
TURN = Source(REPO, ref="553376ff").file("codex-rs/core/src/session/turn.rs")
SEU = Source(REPO, ref="010ccb0c").file("codex-rs/core/src/stream_events_utils.rs")
SSE = Source(REPO, ref="0a7fb0d7").file("codex-rs/codex-api/src/sse/responses.rs")
REGISTRY = Source(REPO, ref="0004ad15").file("codex-rs/core/src/tools/registry.rs")
API_BRIDGE = Source(REPO, ref="001cb8e2").file("codex-rs/core/src/api_bridge.rs")
OBSERVED = "observed driving 0.169.0 (reports/conformance/codex.json)"

STREAM_MAX_RETRIES = 5  # DEFAULT_STREAM_MAX_RETRIES (model_provider_info; secondary, see docstring)
REQUEST_MAX_RETRIES = 4  # DEFAULT_REQUEST_MAX_RETRIES (model_provider_info; secondary, see docstring)

# bin/codex @5321139: the text of the guidance; the tags are the literals next to the template name
# (@3730913). How 0.169.0 joins them (newlines, message role) is not visible in the binary's strings
# and the bench does not compare a reminder's text.
CONTENT_FILTER_GUIDANCE = (
    "<content_filter_guidance>Your previous response was blocked by a content filter. Do not treat this as "
    "a transient failure or try to reproduce or work around the blocked content through repeated attempts, "
    "altered formatting, splitting, encoding, tools, subagents, or later wakes. Briefly explain the limitation "
    "and offer a permitted alternative. Continue unrelated authorized work.</content_filter_guidance>")

_FATAL_KINDS = ("context_overflow", "quota")
"""The error kinds of Codex's fatal codes: it matches the codes context_length_exceeded,
insufficient_quota and usage_not_included, and the words "context window", in the error (see
stream_outcome); the port reads the kinds those codes answer to, never the text."""

RULES = {
    "tool-follow-up": Cited(
        SEU.at(detail="@c~13900-15000 handle_output_item_done"),
        TURN.at(detail="@c~72000 try_run_sampling_request, @c~18000 run_turn"),
        REGISTRY.at(detail="dispatch_any"), Note(f"{BIN} @824468, @659030"), Note(OBSERVED),
        text="a tool call item -> record it, start the tool future, needs_follow_up = true; try_run_sampling_request "
             "needs_follow_up |= ...; run_turn: needs_follow_up -> continue (another sampling request); a call with "
             "arguments that are not JSON ('failed to parse function arguments', bin/codex @824468) or a name no tool "
             "has ('unsupported call: ', @659030; registry.rs dispatch_any) gets an error output instead of running: "
             "failed"),
    "end-turn-false": Cited(
        Note("SECONDARY (not in the pinned turn.rs): later upstream turn.rs, ResponseEvent::Completed { end_turn, .. "
             "}: if let Some(false) = end_turn { needs_follow_up = true }"), Note(OBSERVED),
        text="the model's message is recorded and the loop samples again"),
    "steer": Cited(
        TURN.at(detail="@c~18000 run_turn, @c~15600-17000"),
        text="needs_follow_up = model_needs_follow_up || has_pending_input; queued user input is drained into the "
             "next request (@c~15600-17000)"),
    "no-follow-up": Cited(
        TURN.at(detail="@c~19800-26000 run_turn"),
        text="!needs_follow_up -> last_agent_message = ...; stop hooks (none configured) and after_agent hooks pass "
             "-> break (TurnComplete)"),
    "incomplete-response": Cited(
        Note(f"{BIN} @380429 'Incomplete response returned, reason: '"), Note(OBSERVED),
        text="response.incomplete, any reason but content_filter: an error that is not retried -> the turn fails "
             "(codexErrorInfo other, willRetry false)"),
    "content-filter-retry": Cited(
        Note(f"{BIN} @5424824 'Incomplete response returned, reason: content_filter', @5389750 'stream disconnected "
             "before completion: ...', @3730913, @5321139"), Note(f"{OBSERVED} (5 reminders, then stream_error)"),
        text="a retryable stream error counted against stream_max_retries (5); before the retry the template "
             "generic.content_filter_guidance (@3730913, text @5321139) is appended as a <content_filter_guidance> "
             "message"),
    "stream-retry": Cited(
        TURN.at(detail="@c~40500-43500 run_sampling_request, @c~84500 drain_in_flight"),
        Note(f"{BIN} @2446904 'stream closed before response.completed', @8225014 'error decoding response body'"),
        Note(OBSERVED),
        text="a retryable error with retries < stream_max_retries (5) -> retries += 1, backoff, re-run the request "
             "with the history re-read; drain_in_flight runs the tools of items already done; the items already done "
             "are in the history re-read, so a retry after output is a continue (their calls run), after none a "
             "resend"),
    "request-retry": Cited(
        Note(f"{BIN} @1948847 ModelProviderInfo.request_max_retries (default 4, secondary), @2301490, @5390450"),
        Note(f"{OBSERVED} (HTTP 500 on every request: 30 requests = 6 x (1 + 4))"),
        text="the transport re-sends a request answered with a 5xx up to 4 times before the error reaches "
             "run_sampling_request, then as internalServerError (@2301490, 'We're currently experiencing high "
             "demand' @5390450) it is a stream retry"),
    "stream-retry-exhausted": Cited(
        TURN.at(detail="@c~43500 run_sampling_request, @c~25500-26300 run_turn"), Note(OBSERVED),
        text="retries used up -> return Err; run_turn Err(e) -> Error event, break"),
    "rate-limit": Cited(
        Note(f"{BIN} @720263 'exceeded retry limit, last status: ', @2301577"),
        Note(f"{OBSERVED} with the default request_max_retries: one request"),
        text="RetryLimit (codexErrorInfo responseTooManyFailedAttempts @2301577): a 429 is re-sent by neither the "
             "transport (429 not among its retried statuses) nor run_sampling_request (not retryable) -> the turn "
             "fails"),
    "fatal-error": Cited(
        TURN.at(detail="@c~40800 run_sampling_request"), SSE.at(detail="@c~7500-8300"),
        API_BRIDGE.at(detail="map_api_error"), Note(OBSERVED),
        text="!err.is_retryable() (or ContextWindowExceeded / UsageLimitReached) -> return Err at once; "
             "response.failed codes context_length_exceeded / insufficient_quota / usage_not_included; "
             "map_api_error: HTTP 400 -> InvalidRequest (not retryable); any status but 400/429/500 -> "
             "UnexpectedStatus, retryable (a stream retry; 401 kept fatal, see the docstring)"),
}


# ---------------------------------------------------------------- conformance (the original, driven)
# `stopbench conform codex` drives npm @openai/codex@0.169.0 (`codex app-server`, dynamic tools,
# Codex's default retry settings; conformance/drivers/codex_driver.mjs). The two differences once
# explained here (a missing finish read as response.completed; an error after output classified by
# its status) were settled by following what the driven original does (stream_outcome, in_stream),
# as was a third on the 118 sequences (408/409 are stream retries, a failure after one stream_error).
CONFORMANCE_EXPLAINED: dict[str, str] = {
    "chat-steer-with-tool-calls": (
        "A race in the driver, not a decision: the server answers a turn at once, and "
        "conformance/drivers/codex_driver.mjs sends turn/steer only once the server has answered the turn "
        "(polled on /_stopbench/state every 100 ms). When it lands before Codex's follow-up, request 1 "
        "carries call_1's output and the steered user message, the port's remind (driven 2026-11-30, "
        "once). When Codex is faster (driven twice the same day, the machine loaded), request 1 carries "
        "call_1's output only and the steer reaches Codex while turn 1 is sampled: request 2 then carries "
        "the steered message and neither turn 1's call_2 nor an output for it, read by the server as a "
        "reminder with call_2 not run. That is input steered into a sampling request in flight, a case "
        "this sequence does not describe and the port does not model. Either way the request count (3), "
        "the stop (turn_complete) and ok agree."),
}


def _memo(state: State) -> dict[str, Any]:
    m = state.memo
    if not m:
        m.update(retries=0, requests=0, pending=False, retried=False)
    return m


def dispatched(turn: Turn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Indices of the turn's calls that run, and of those answered with an argument-parse error."""
    run: list[int] = []
    failed: list[int] = []
    for i, call in enumerate(turn.tool_calls):
        if not call.name:  # no handler: "unsupported call: " (registry.rs dispatch_any)
            failed.append(i)
            continue
        # empty arguments fail too: driving the original (0.169.0) answered a call with "" as
        # "failed to parse function arguments: EOF while parsing a value at line 1 column 0"
        try:
            json.loads(call.arguments)
        except ValueError:
            failed.append(i)
            continue
        run.append(i)
    return tuple(run), tuple(failed)


def stream_outcome(turn: Turn) -> str:
    """How this turn's request ends: ``completed``, ``incomplete``, ``content_filter``, ``stream``
    (a retryable stream error), ``http5xx`` (retried by the transport first), ``rate_limit`` or ``fatal``."""
    err = turn.error
    if err is not None:
        if err.kind in _FATAL_KINDS:
            return "fatal"
        if in_stream(turn):
            return "stream"  # the response had started: Codex sees the end of a stream, not a status
        if err.status == 429:
            return "rate_limit"
        if err.status is not None and err.status >= 500:
            return "http5xx"
        if err.status in (400, 401):
            return "fatal"  # InvalidRequest (api_bridge.rs map_api_error); 401: see the docstring
        return "stream"  # UnexpectedStatus (any other status): retryable (error.rs is_retryable)
    if turn.finish == "length":
        return "incomplete"
    if turn.finish == "content_filter":
        return "content_filter"
    if turn.finish_raw is not None and turn.finish_raw.startswith("incomplete/"):
        return "incomplete"  # response.incomplete with another reason (steered, max_messages): the same branch
    if turn.finish == "error" or turn.finish_raw is None:
        return "stream"  # no terminal event: 'stream closed before response.completed' (observed)
    return "completed"


def in_stream(turn: Turn) -> bool:
    """Whether the turn's error reaches Codex inside a stream that had started rather than as an HTTP
    status: an in-stream error event (kind ``stream_error``), a stream that ends or breaks with no
    terminal event (``stream_cut``, ``connection_reset``), no status at all, or any error after output
    (once output has streamed the status is 200, so an error can only come as an event)."""
    err = turn.error
    if err is None:
        return False
    return (err.kind in ("stream_error", "stream_cut", "connection_reset") or err.status is None
            or has_output(turn))


def has_output(turn: Turn) -> bool:
    """Whether the response streamed output items before it ended: text, reasoning or tool calls.
    Codex records each item when its ``output_item.done`` arrives, so a retried request carries them."""
    return bool(turn.content) or bool(turn.reasoning) or bool(turn.tool_calls)


MUTATION_NOTES = (
    MutationNote(
        "if err.status in (400, 401):",
        "no sequence answers HTTP 401 (or 402): the 401 in this test is pinned by tests/ports/test_codex.py "
        "(400 and 401 fatal, other statuses a stream retry)",
        ("401 -> 402", "401 -> 400"),
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(Note(BIN), TURN.at(), SEU.at(), SSE.at(),
                 text="the binary runs; the source files give its structure (see the module docstring)"),
    max_steps=None,
    reasons=["turn_complete", "stream_error", "error"],
    rules=RULES,
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    m = _memo(state)
    if turn.steer:
        m["pending"] = True
    run, failed = dispatched(turn)
    outcome = stream_outcome(turn)
    # the turn failed: stream_error when Codex had retried the stream in it (see the docstring)
    failure = "stream_error" if m["retried"] else "error"
    if outcome == "fatal":
        return Stop(failure, ok=False, rule="fatal-error", run=run, failed=failed)
    if outcome == "rate_limit":
        return Stop(failure, ok=False, rule="rate-limit", run=run, failed=failed)
    if outcome == "incomplete":
        return Stop(failure, ok=False, rule="incomplete-response", run=run, failed=failed)
    if outcome == "http5xx" and m["requests"] < REQUEST_MAX_RETRIES:
        m["requests"] += 1
        return Resend("request-retry")
    m["requests"] = 0  # the next sampling attempt gets its own request retries
    if outcome != "completed":
        if m["retries"] >= STREAM_MAX_RETRIES:
            return Stop("stream_error", ok=False, rule="stream-retry-exhausted", run=run, failed=failed)
        m["retries"] += 1
        m["retried"] = True
        if outcome == "content_filter":
            return Remind("content-filter-retry", CONTENT_FILTER_GUIDANCE, run=run, failed=failed)
        if has_output(turn):  # the items already done are in the history the retry re-reads
            return Continue("stream-retry", run=run, failed=failed)
        return Resend("stream-retry")

    m["retries"] = 0  # a new run_sampling_request starts with retries = 0
    pending = m["pending"]
    m["pending"] = False
    if turn.tool_calls:
        if pending:  # the queued input goes into the follow-up with the tools' outputs
            return Remind("steer", turn.steer or "(queued user input)", run=run, failed=failed)
        return Continue("tool-follow-up", run=run, failed=failed)
    if turn.end_turn is False:
        return Continue("end-turn-false", run=())
    if pending:
        return Remind("steer", turn.steer or "(queued user input)")
    return Stop("turn_complete", ok=True, rule="no-follow-up")
