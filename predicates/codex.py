"""Codex's turn loop: follow up on tool-call items, end_turn false or queued input; retry stream errors 5 times.

Pin: openai/codex (Apache-2.0), single files read with the search tool's ``read_file`` (the whole
repository, about 757 MB, is over the fetch limit, and no one commit holds all three files in the
store, so each file is pinned to the commit it was read at):

* ``codex-rs/core/src/session/turn.rs`` @ ``553376ffcb5d4848ebb52cb7fb022e6d836d8eb6``
  (85,944 chars): ``run_turn`` (the turn loop), ``run_sampling_request`` (the stream retry loop),
  ``try_run_sampling_request`` (the event loop of one response), ``drain_in_flight``.
* ``codex-rs/core/src/stream_events_utils.rs`` @ ``010ccb0c68ecacf2e5a4724385d5bab9deb9510b``
  (22,834 chars): ``handle_output_item_done``.
* ``codex-rs/codex-api/src/sse/responses.rs`` @ ``0a7fb0d762765b7777bd3ca30edabcbeeab1abb0``
  (25,212 chars): ``process_sse``.

The store gives these files without line numbers, so citations are ``@c<offset>`` (a character
offset, approximate to a few hundred characters, marked ~) plus the function name. No line number is
guessed. Seed 002's ``stream_events_utils.rs:325``, ``turn.rs:2542-2544`` and
``responses.rs:426-435`` are at another (later) pin and could not be checked as lines; see the
golden header for what the pinned text says instead.

What is modelled, per model response:

* Tool calls are ``function_call`` output items. ``handle_output_item_done`` starts each one at
  once and returns ``needs_follow_up = true``; ``try_run_sampling_request`` ORs that in and, after
  the stream ends *whatever the outcome*, ``drain_in_flight`` awaits the tools and records their
  outputs. So the calls of a response that then fails are still run.
* ``response.completed`` ends the response. ``run_turn`` computes
  ``needs_follow_up = model_needs_follow_up || has_pending_input``: true -> another sampling request
  (history now holds the items and tool outputs); false -> stop hooks (none configured) -> break.
* ``end_turn: false`` -> follow-up. NOT in the pinned turn.rs (its ``ResponseEvent::Completed`` has
  no ``end_turn`` field) nor in the pinned responses.rs; it is in later upstream versions as quoted
  by several independent write-ups (``if let Some(false) = end_turn { needs_follow_up = true; }``,
  quoted at turn.rs:2539-2584, :2232, :3009-3015 of different commits). Ported because the issue asks
  for it; marked secondary in its rule.
* Steering: input queued while the response streamed (``turn.steer``) makes ``has_pending_input``
  true, so the loop asks again even with no tool call (Remind carrying the queued text). Input that
  arrived during a response that then failed stays queued until a response completes.
* Stream errors. ``run_sampling_request`` retries a retryable error with the provider's
  ``stream_max_retries`` (``DEFAULT_STREAM_MAX_RETRIES = 5``, model_provider_info, secondary: seen
  verbatim by docs/loops.md, not re-read here): while ``retries < max_retries`` it sleeps and
  re-runs the request (history re-read, so outputs of tools already run are in it); after 5
  retries the error goes to ``run_turn``, which emits an Error event and breaks. The HTTPS
  transport has no fallback transport (the websocket fallback does not apply), and there is no
  other cap: Codex has no step limit.
* ``response.incomplete``: the pinned ``process_sse`` has no branch for it, so the event is
  ignored and the stream ends without ``response.completed`` -> ``ApiError::Stream("stream closed
  before response.completed")``, a retryable stream error. Later versions raise "Incomplete response
  returned, reason: ..." (also retryable) from a dedicated branch; the port's decisions are the
  same for max_output_tokens and content_filter. ``response.failed`` with no error object ->
  ``Stream("response.failed event received")`` (retryable); with code context_length_exceeded /
  insufficient_quota / usage_not_included -> fatal.

Dialects: Codex speaks only the Responses API. A sequence of another dialect is read as the
Responses stream a proxy would produce: tool calls as ``function_call`` items, finish ``length`` as
``incomplete/max_output_tokens``, ``content_filter`` as ``incomplete/content_filter``, ``error``
(a raw error finish with no error object, e.g. Gemini MALFORMED_FUNCTION_CALL) as
``response.failed`` without an error object, and every other finish (stop, tool_calls, unknown) as
``response.completed``: Codex never reads a finish string. A ``turn.error`` is a transport error:
429, 5xx, no status -> retryable; other 4xx and context-window errors -> fatal (ambiguous: the
classification of HTTP errors lives in codex-client / ``CodexErr::is_retryable``, not read here).

Not modelled: auto-compaction on the token limit (needs the model's auto_compact limit), stop and
after_agent hooks (none configured), plan mode, mailbox pre-emption (multi-agent), the request-level
HTTP retries inside the transport (``DEFAULT_REQUEST_MAX_RETRIES = 4``, secondary), invalid-image
sanitising.

Tool calls whose arguments are not valid JSON are dispatched like any other, and the function tool
handler answers them with a "failed to parse function arguments" error output instead of running
the tool; the port counts them as failed (answered with an error result), the others as run.
Secondary: the handlers (``codex-rs/core/src/tools/handlers``) were not read at the pin; the error
text is what third-party test suites see Codex send back. Empty arguments fail the same way (they
were counted as run until the original, driven, answered "" with "failed to parse function
arguments: EOF while parsing a value at line 1 column 0").
"""

from __future__ import annotations

import json
from typing import Any

from bench import Continue, Remind, Stop, predicate
from bench.model import Decision, Turn
from bench.predicate import State

REPO = "openai/codex"
TURN = f"{REPO}@553376ff codex-rs/core/src/session/turn.rs"
SEU = f"{REPO}@010ccb0c codex-rs/core/src/stream_events_utils.rs"
SSE = f"{REPO}@0a7fb0d7 codex-rs/codex-api/src/sse/responses.rs"

STREAM_MAX_RETRIES = 5  # DEFAULT_STREAM_MAX_RETRIES (model_provider_info; secondary, see docstring)

_FATAL_CODES = ("context_length_exceeded", "insufficient_quota", "usage_not_included")

RULES = {
    "tool-follow-up": f"{SEU} @c~13900-15000 handle_output_item_done: a tool call item -> record it, "
                      "start the tool future, needs_follow_up = true; "
                      f"{TURN} @c~72000 try_run_sampling_request needs_follow_up |= ...; "
                      "@c~18000 run_turn: needs_follow_up -> continue (another sampling request)",
    "end-turn-false": "SECONDARY (not in the pinned turn.rs): later upstream turn.rs, ResponseEvent::"
                      "Completed { end_turn, .. }: if let Some(false) = end_turn { needs_follow_up = "
                      "true } - the model's message is recorded and the loop samples again",
    "steer": f"{TURN} @c~18000 run_turn: needs_follow_up = model_needs_follow_up || "
             "has_pending_input; queued user input is drained into the next request (@c~15600-17000)",
    "no-follow-up": f"{TURN} @c~19800-26000 run_turn: !needs_follow_up -> last_agent_message = ...; "
                    "stop hooks (none configured) and after_agent hooks pass -> break (TurnComplete)",
    "stream-retry": f"{TURN} @c~40500-43500 run_sampling_request: a retryable error with retries < "
                    "stream_max_retries (5) -> retries += 1, backoff, re-run the request with the "
                    f"history re-read; {TURN} @c~84500 drain_in_flight runs the tools of items already "
                    f"done; {SSE} @c~5000-6000 process_sse: stream end without response.completed "
                    "(response.incomplete is not handled) -> ApiError::Stream",
    "stream-retry-exhausted": f"{TURN} @c~43500 run_sampling_request: retries used up -> return Err; "
                              "@c~25500-26300 run_turn Err(e) -> Error event, break",
    "fatal-error": f"{TURN} @c~40800 run_sampling_request: !err.is_retryable() (or ContextWindowExceeded"
                   f" / UsageLimitReached) -> return Err at once; {SSE} @c~7500-8300 response.failed "
                   "codes context_length_exceeded / insufficient_quota / usage_not_included",
}


# ---------------------------------------------------------------- conformance (the original, driven)
# `stopbench conform codex` drives npm @openai/codex@0.169.0 (`codex app-server`, dynamic tools;
# conformance/drivers/codex_driver.mjs). The port is pinned to single-file commits that are not that
# release; where 0.169.0 behaves differently, the difference is a version difference, explained here
# with what the pin says and what 0.169.0 did (its error texts are at the byte offsets given, in
# node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex, sha256 b452ca20f838a885...).
# Re-pinning the port to rust-v0.169.0 would turn the first two groups into port changes.
_V_MAX_TOKENS = (
    "Version difference. The turn ends as response.incomplete with reason max_output_tokens. At the "
    f"pin, {SSE} process_sse has no branch for response.incomplete, so the stream ends without "
    "response.completed: ApiError::Stream, retried (rule stream-retry). Codex 0.169.0 has a dedicated "
    "branch: it failed the turn at once with 'Incomplete response returned, reason: max_output_tokens' "
    "(binary @380429), codexErrorInfo 'other', willRetry false: no retry, reason error.")
_V_CONTENT_FILTER = (
    "Version difference. The turn ends as response.incomplete with reason content_filter. The retry "
    "count and the final stream_error agree with the port (0.169.0: 'stream disconnected before "
    "completion: Incomplete response returned, reason: content_filter', willRetry true, 'Reconnecting... "
    "n/5'). But before each retry 0.169.0 adds a <content_filter_guidance> message to the history "
    "(binary @2125421), so the server sees a reminder, not the same request. The pinned turn.rs "
    "run_sampling_request re-sends the history unchanged.")
_RATE_LIMIT = (
    "Retry layer. The driver sets request_max_retries = 0, because the port leaves the transport's "
    "request-level retries out (see the module docstring). In 0.169.0 an HTTP 429 is handled by that "
    "layer, not by the stream retry loop: with no request retries left, the turn failed at once with "
    "'exceeded retry limit, last status: 429 Too Many Requests' (binary @720263; codexErrorInfo "
    "responseTooManyFailedAttempts). That error is not retryable. With the default "
    "request_max_retries = 4 there would be 4 re-sends, then the same error. The port's 'ambiguous' "
    "429 classification (module docstring) is thus wrong for 0.169.0. It is left as it is until the "
    "codex-client retry code is read at the pin.")
_NO_FINISH = (
    "Served differently. The server renders a missing finish (finish_raw null) as a Responses stream "
    "with no terminal event. The port reads a missing finish as a proxy's response.completed (module "
    "docstring, 'Dialects'). Codex does what the port's own stream-retry rule says for a stream without "
    "response.completed ('stream closed before response.completed', binary @2446904): it retries. When the "
    "turn had output, the retry request carries the partial assistant message, so the server sees an echo, not a resend.")
_IN_STREAM_ERROR = (
    "Served differently. The turn's error (status 400, type stream_error) comes after output, so the "
    "server sends it as an in-stream `error` event, not as an HTTP 400. 0.169.0 does not end the "
    "response on that event: the stream closes without response.completed ('stream closed before "
    "response.completed'), which is retried. The port classifies the error by its status (4xx -> "
    "fatal-error), as an HTTP error.")
_MERGED_ECHO = (
    "Server inference, not Codex. Codex made the same steps as the port. It ran read_file "
    "('STOPBENCH-OK read_file' is in request 3). The server's dialect-neutral reduction merges turn "
    "0's assistant message and turn 1's function_call, which are consecutive assistant items, into "
    "one assistant message. The earlier item therefore looks changed, and the step is 'unknown'.")

CONFORMANCE_EXPLAINED = {
    **{seq: _V_MAX_TOKENS for seq in (
        "anthropic-context-window-exceeded", "anthropic-max-tokens-partial-tool-use", "chat-length-cut-json-args",
        "chat-length-cut-json-repeat", "chat-length-in-reasoning", "chat-length-text-cut", "gemini-max-tokens-empty",
        "rec-anthropic-max-tokens-twice-run1", "rec-anthropic-max-tokens-twice-run2", "rec-deepseek-chat-length",
        "rec-deepseek-r1-length-unclosed-think", "rec-gemini-max-tokens-no-parts", "rec-openai-chat-length",
        "responses-incomplete-max-output-tokens", "seed000-truncated-max-tokens")},
    **{seq: _V_CONTENT_FILTER for seq in (
        "anthropic-refusal", "chat-content-filter", "con-anthropic-refusal-json", "con-anthropic-refusal-stream",
        "gemini-safety", "rec-gemini-safety-no-parts", "responses-incomplete-content-filter")},
    "chat-error-rate-limit": _RATE_LIMIT,
    "chat-finish-null-intent": _NO_FINISH,
    "rec-gemini-prompt-blocked-no-candidates": _NO_FINISH,
    "rec-openrouter-length-then-stream-error": _IN_STREAM_ERROR,
    "responses-end-turn-false": _MERGED_ECHO,
}


def _memo(state: State) -> dict[str, Any]:
    m = state.memo
    if not m:
        m.update(retries=0, pending=False)
    return m


def dispatched(turn: Turn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Indices of the turn's calls that run, and of those answered with an argument-parse error."""
    run: list[int] = []
    failed: list[int] = []
    for i, call in enumerate(turn.tool_calls):
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
    """How the Responses stream of this turn ends: ``completed``, ``retryable`` or ``fatal``."""
    err = turn.error
    if err is not None:
        text = f"{err.type} {err.message}".lower()
        if any(code in text for code in _FATAL_CODES) or "context window" in text:
            return "fatal"
        if err.status is not None and 400 <= err.status < 500 and err.status not in (408, 429):
            return "fatal"
        return "retryable"
    if turn.finish in ("length", "content_filter", "error"):
        return "retryable"
    return "completed"


@predicate(
    source=f"{REPO}: {TURN}; {SEU}; {SSE} (see the module docstring)",
    max_steps=None,
    reasons=["turn_complete", "stream_error", "error"],
    rules=RULES,
)
def decide(turn: Turn, state: State) -> Decision:
    m = _memo(state)
    if turn.steer:
        m["pending"] = True
    run, failed = dispatched(turn)
    outcome = stream_outcome(turn)
    if outcome == "fatal":
        return Stop("error", ok=False, rule="fatal-error", run=run, failed=failed)
    if outcome == "retryable":
        if m["retries"] < STREAM_MAX_RETRIES:
            m["retries"] += 1
            return Decision("resend", "stream-retry", run=run, failed=failed)
        return Stop("stream_error", ok=False, rule="stream-retry-exhausted", run=run, failed=failed)

    m["retries"] = 0  # a new run_sampling_request starts with retries = 0
    pending = m["pending"]
    m["pending"] = False
    if turn.tool_calls:
        return Continue("tool-follow-up", run=run, failed=failed)
    if turn.end_turn is False:
        return Continue("end-turn-false", run=())
    if pending:
        return Remind("steer", turn.steer or "(queued user input)")
    return Stop("turn_complete", ok=True, rule="no-follow-up")
