"""Gemini CLI's non-interactive loop: run every functionCall, retry an invalid stream 3 times, no cap.

Pin: npm ``@google/gemini-cli@0.61.0`` (Apache-2.0), the release ``stopbench conform gemini_cli``
drives. Read from the published bundle (esbuild output that keeps each source file's path as a
comment), under ``node_modules/@google/gemini-cli/bundle/``: the entry ``gemini.js`` loads
``gemini-3HFX2LNT.js`` (the CLI: ``packages/cli/src/nonInteractiveCli.ts``), which imports
``chunk-JDPZ4CE3.js`` (``packages/core``: ``core/client.js``, ``core/turn.js``,
``core/geminiChat.js``, ``utils/retry.js``, ``services/loopDetectionService.js``). Citations are
``FILE L<first>-<last>`` in those two files. Configuration: the defaults (no settings but the
driver's, which touch no loop setting: conformance/drivers/gemini_cli_driver.mjs).

The loop (gemini-3HFX2LNT.js L12182-12450, ``runNonInteractive``): each iteration sends one message
(the prompt, then the function responses) through ``GeminiClient.sendMessageStream`` and collects
the ``ToolCallRequest`` events; calls present -> run them all and send their responses; none ->
the run ends. What decides, per model response:

* Calls: every ``functionCall`` part is a request, whatever the finish reason (turn.js
  L333058-333063; a blank name becomes ``generic_tool``, L333132, a tool that does not exist: an
  error result). Arguments that are not a JSON object reach the tool as ``{}`` (the replay server
  sends ``{}`` for them, bench/wires/gemini/render.py) and fail its parameter validation: failed.
* No calls: ``GeminiChat.processStreamResponse`` validates the response (chunk-JDPZ4CE3.js
  L332647-332679) and throws an ``InvalidStreamError`` for: no finish reason (unless the request
  was a function response), ``MALFORMED_FUNCTION_CALL``, ``UNEXPECTED_TOOL_CALL``; with empty text
  (trimmed, zero-width characters and HTML comments removed, L332640-332646): ``MAX_TOKENS``,
  ``SAFETY``, ``RECITATION``, ``OTHER``, thoughts only, or (unless the request was a function
  response) anything else. Any other response ends the run as a success: a ``MAX_TOKENS`` reply
  with text, ``LANGUAGE``, ``BLOCKLIST`` or ``TOO_MANY_TOOL_CALLS`` with text, an empty ``STOP``
  after tool results.
* An invalid stream is retried mid-stream (L332069-332140): ``MID_STREAM_RETRY_OPTIONS``
  ``maxAttempts: 4`` (L331736-331741), so 3 retries; before a retry after ``NO_RESPONSE_TEXT`` or
  ``THINKING_ONLY_RESPONSE`` the request gets a nudge (L332243-332256, ``applyRetryNudge``
  L331818-331855): a Remind, and the same nudged request again on the next retry, a Resend. The
  fourth invalid response is an ``InvalidStream`` event: the CLI reports an error and ends
  (gemini-3HFX2LNT.js L12296-12336, L12422-12449).
* HTTP errors (retryWithBackoff, chunk-JDPZ4CE3.js L308010-308185, config ``maxAttempts`` 10,
  L379137 / L307884): 429, 499 and 5xx are retried up to 10 attempts (``RetryableQuotaError`` or
  ``is500``, L308120-308160); 404 is a ``ModelNotFoundError`` thrown at once (L307290, no fallback
  handler in non-interactive mode, L308338); any other status is not retryable (isRetryableError
  L307971-307990). An error that stays is an ``Error`` event; the CLI throws it and exits non-zero
  (gemini-3HFX2LNT.js L12253-12254, L12452-12460).
* A connection dropped by the server (``connection_reset`` without a status, served as a response
  that starts and breaks off) is retried by retryWithBackoff like a 5xx, 10 attempts: seen when
  driving 0.61.0 (chat-connection-dropped-repeat: 10 requests, then the run failed); which of the
  network error codes of L307892-307905 (or ``retryFetchErrors``) matched is not read here.
* Errors inside a stream (the SDK throws the error object's ``code`` as an ``ApiError``,
  chunk-JDPZ4CE3.js L267627-267640) are retried mid-stream like an invalid response when the code
  is 429, 499 or 5xx (L332119-332140), sharing the 4 attempts.
* Loops: every call's name and arguments go into a history; the same cycle of 1 to 5 calls five
  times in a row is a loop (loopDetectionService L342418-342447, threshold 5). The first
  detection injects a "Potential loop detected" message and asks again without running the looped
  call (client.js L346676-346710, ``_recoverFromLoop`` L346954-346962): a Remind; the history is
  kept (``clearDetection`` L342698-342700), so the next identical call is the second detection,
  ``LoopDetected``: the CLI records a warning and ends with status success
  (gemini-3HFX2LNT.js L12231-12245). The model-based loop check after 30 turns (L342399) and the
  content-repetition check are not modelled (no sequence of the catalogue reaches them).
* Cap: none. ``model.maxSessionTurns`` defaults to -1 (L379033; the check at
  gemini-3HFX2LNT.js L12186 is off); ``MAX_TURNS = 100`` (L346212) bounds the recursion of one
  ``sendMessageStream`` (loop recovery), not the session. The next-speaker check, which could send
  "Please continue.", is off by default (``skipNextSpeakerCheck`` true, L379065).

Steering: ``gemini -p`` takes one prompt and reads nothing more while it runs, so a ``turn.steer``
never reaches the loop; the port ignores it.

Dialects: Gemini CLI speaks only the Gemini API. A sequence of another dialect is served on it
(bench/serve/render.py ``finish_for``): a tool-call finish as ``STOP`` with the calls as parts,
any other finish as the first Gemini string of the same canonical finish in bench's TABLES, none
as none. How an error reaches the client follows the server's rendering of its kind and status
(bench/wires/delivery.py ``error_mode``; the in-stream code is the status, or the kind's usual one,
bench/wires/gemini/render.py ``KIND_STATUS``).
"""

from __future__ import annotations

import json
import re

from bench import (
    TABLES,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Note,
    Remind,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    error_mode,
    predicate,
)

PIN = Source(release="npm @google/gemini-cli@0.61.0 (Apache-2.0)")
CLI = PIN.file("bundle/gemini-3HFX2LNT.js")
CORE = PIN.file("bundle/chunk-JDPZ4CE3.js")

MID_STREAM_ATTEMPTS = 4  # MID_STREAM_RETRY_OPTIONS.maxAttempts, L331736-331741
HTTP_ATTEMPTS = 10  # DEFAULT_MAX_ATTEMPTS, L307884; config maxAttempts, L379137
LOOP_THRESHOLD = 5  # TOOL_CALL_LOOP_THRESHOLD, L342233

NUDGE_NO_TEXT = ("[System: You previously returned an empty response with no text or thoughts. Please ensure "
                 "you provide your final answer or call a tool now.]")  # L331817
NUDGE_THOUGHTS = ("[System: You previously generated thoughts but failed to provide a final user-facing "
                  "response. Please ensure you provide your final answer or call a tool now.]")  # L331816
LOOP_FEEDBACK = "System: Potential loop detected."  # L346956 (the detail and advice follow)

_NUDGES = {"NO_RESPONSE_TEXT": NUDGE_NO_TEXT, "THINKING_ONLY_RESPONSE": NUDGE_THOUGHTS}
_BLOCKED_EMPTY = {"MAX_TOKENS": "MAX_TOKENS_EXCEEDED", "SAFETY": "SAFETY_BLOCKED",
                  "RECITATION": "RECITATION_BLOCKED", "OTHER": "OTHER_BLOCKED"}
# the in-stream error code of an error without a status (bench/wires/gemini/render.py KIND_STATUS)
_KIND_CODE = {"rate_limit": 429, "quota": 429, "overloaded": 503, "server_error": 500, "timeout": 504,
              "context_overflow": 400, "invalid_request": 400, "authentication": 401, "permission": 403,
              "not_found": 404, "content_filter": 400, "stream_error": 500, "http_status": 500}
_ZERO_WIDTH = re.compile("[\u200b-\u200d\ufeff\u200e\u200f]")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")


def served_finish(turn: Turn, dialect: str) -> str | None:
    """The finishReason Gemini CLI receives for `turn` (a sequence of another dialect is served on
    the Gemini API, bench/serve/render.py finish_for)."""
    if dialect == "gemini" or turn.finish_raw is None:
        return turn.finish_raw
    if turn.finish == "tool_calls":
        return "STOP"
    for raw, entry in TABLES["gemini"].items():
        if entry.finish == turn.finish:
            return raw
    return turn.finish_raw


def response_text(turn: Turn) -> str:
    """The text processStreamResponse judges (chunk-JDPZ4CE3.js L332638-332646)."""
    text = _ZERO_WIDTH.sub("", turn.content or "")
    while True:
        shorter = _COMMENT.sub("", text)
        if shorter == text:
            return text.strip()
        text = shorter


def invalid_stream(turn: Turn, finish: str | None, function_response: bool) -> str | None:
    """The InvalidStreamError type a response without calls raises, or None (L332647-332679)."""
    if finish is None and not function_response:
        return "NO_FINISH_REASON"
    if finish in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"):
        return finish
    if response_text(turn):
        return None
    if finish in _BLOCKED_EMPTY:
        return _BLOCKED_EMPTY[finish]
    if turn.reasoning is not None:
        return "THINKING_ONLY_RESPONSE"
    return None if function_response else "NO_RESPONSE_TEXT"


def _arguments(arguments: str) -> dict[str, object] | None:
    """The arguments as the tool gets them: an object, {} for empty ones, None when not an object."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error_path(err: TurnError, turn: Turn) -> tuple[str, int | None]:
    """How the server serves the error (bench.error_mode, the rule it renders by) and its status or code."""
    mode = error_mode(turn) or "http"  # `err` is the turn's error, so a mode is always found
    if mode in ("cut", "end"):
        return mode, None
    if mode == "stream":
        return mode, err.status if err.status is not None else _KIND_CODE.get(err.kind, 500)
    return mode, err.status


def _retryable(code: int | None) -> bool:
    """isRetryableError (L307971-307990): 429, 499 and 5xx."""
    return code is not None and (code in (429, 499) or 500 <= code < 600)


def _loop_at(history: list[str]) -> bool:
    """checkToolCallLoop (L342418-342447): the last 1-5 keys repeated LOOP_THRESHOLD times."""
    n = len(history)
    for k in range(1, 6):
        need = k * LOOP_THRESHOLD
        if n >= need and all(history[n - need + i] == history[n - k + i % k] for i in range(need)):
            return True
    return False


_LLM_LOOP_CHECK = (
        "Not driven in the campaign, and not modelled: the model-based loop check. From the 30th turn of one prompt, every 10 turns "
        "(LoopDetectionService.turnStarted, chunk-JDPZ4CE3.js L342390-342416, LLM_CHECK_AFTER_TURNS 30, "
        "DEFAULT_LLM_CHECK_INTERVAL 10) Gemini CLI asks the model itself whether the conversation loops: "
        "a request of its own with the last 20 contents (LLM_LOOP_CHECK_HISTORY_COUNT), which the replay "
        "server answers with the sequence's next turns. Driving 0.61.0 showed it: after turn 28 the request "
        "is that check (seen as a remind, then a history cut to 20 items), its JSON answer never comes (the "
        "scripted turn is a tool call), so it is retried with back-off (9 resends), and the main loop goes "
        "on with the turns left; 10 turns later the same again, until the run outlasted the driver's time "
        "limit (chat-long-tool-run, seed001-never-stops-capped: 400 s, at the second check). The port runs the "
        "scripted rounds; the original spends part of the script on its own check requests, and each check "
        "costs about 3.5 minutes of real back-off (10 attempts, 5 s doubling to 30 s), so a sequence of 50 to "
        "200 turns would take 10 to 60 minutes per run: the campaign does not drive the sequences longer "
        "than 30 turns.")

CONFORMANCE_NOT_DRIVEN = {
    "chat-long-tool-run": _LLM_LOOP_CHECK,
    "seed001-never-stops-capped": _LLM_LOOP_CHECK,
    "seed001-never-stops-context-overflow": _LLM_LOOP_CHECK,
}
"""Sequences of more than 30 turns: the original's own loop-check requests (not modelled) make them
take tens of minutes; reported 'not driven' (never 'explained')."""

CONFORMANCE_EXPLAINED = {
    "anthropic-turn-limit-mid-work": (
        "A real difference, not modelled (said so, not guessed): the model-based loop check (LoopDetectionService."
        "turnStarted, chunk-JDPZ4CE3.js L342390-342416: from the 30th turn of one prompt, every 10 turns, "
        "LLM_CHECK_AFTER_TURNS 30, DEFAULT_LLM_CHECK_INTERVAL 10). Driven on 0.61.0 on the virtual clock "
        "(stopbench conform gemini_cli --virtual-clock, 14 s): at step 29 the check request (the last 20 "
        "contents, read as remind +compact), 9 retries of it (resend: the scripted answer is a function call, "
        "not the JSON the check asks for), then the main loop's request with its whole history ('unknown'), and "
        "the same every 10 turns after (steps 39, 49, ... 99). The check requests take scripted turns, so the "
        "main loop runs fewer of the 100 reads; the port runs them all. Both end at request 101 on the scripted "
        "answer: the stop, its reason (no_tool_calls) and ok agree."),
}
"""Differences between this port and driving 0.61.0, each with the evidence."""


_SURVIVES_KIND_CODE = (
    "the code of a status-less in-stream error is only tested by _retryable, and each change keeps it in its "
    "class (5xx and 499 retryable; 4xx other than 429 not)"
)
_SURVIVES_499 = (
    "only HTTP status 498 or 499 tells the mutant apart; no provider API returns either (499 is nginx's "
    "client-closed-request code), so no sequence carries one"
)
MUTATION_NOTES = (
    MutationNote(
        '_KIND_CODE = {"rate_limit": 429, "quota": 429',
        "a status-less in-stream rate_limit or quota error: 428 and 430 are not retryable where 429 is; no "
        "sequence sends one to this port",
        ("429 -> 428", "429 -> 430"),
        equivalent=False,
    ),
    MutationNote('_KIND_CODE = {"rate_limit": 429, "quota": 429', _SURVIVES_KIND_CODE),
    MutationNote('"context_overflow": 400, "invalid_request": 400', _SURVIVES_KIND_CODE),
    MutationNote('"not_found": 404, "content_filter": 400, "stream_error": 500', _SURVIVES_KIND_CODE),
    MutationNote(
        "return mode, err.status if err.status is not None else _KIND_CODE.",
        "every error kind served in the stream is in _KIND_CODE (the three others return earlier as cut or "
        "end): the default is never read",
    ),
    MutationNote(
        "return code is not None and (code in (429, 499) or 500 <= code < 600)",
        _SURVIVES_499,
        ("499 -> 498", "499 -> 500"),
        equivalent=False,
    ),
    MutationNote(
        "return code is not None and (code in (429, 499) or 500 <= code < 600)",
        "499 is retryable by the tuple already",
        ("500 -> 499",),
    ),
    MutationNote(
        "return code is not None and (code in (429, 499) or 500 <= code < 600)",
        "there is no HTTP status 600 or above",
        ("< -> <=", "600 -> 601"),
    ),
    MutationNote(
        "return code is not None and (code in (429, 499) or 500 <= code < 600)",
        "only a status 599 tells it apart; no provider API sends 599",
        ("600 -> 599",),
        equivalent=False,
    ),
    MutationNote(
        "for k in range(1, 6):",
        "a repeated cycle of 5 (or 6) different calls, 25 (30) calls long: the catalogue's repeats are cycles "
        "of one call",
        equivalent=False,
    ),
    MutationNote(
        "memo.update(attempt=0, http=0, nudged=False, function_response=functio",
        "the budgets restart at each tool round: only a tool round followed by four invalid streams, or by "
        "ten failed HTTP attempts, tells it apart; the catalogue's long failures start the run",
        equivalent=False,
    ),
    MutationNote(
        "if code == 404 or not _retryable(code) or http + 1 >= HTTP_ATTEMPTS:",
        "404 is not retryable, so `not _retryable(code)` stops it anyway (and 403, 405 too)",
        ("404 -> 403", "404 -> 405"),
    ),
    MutationNote(
        'memo["http"] = 0',
        "the HTTP budget after an in-stream error: only HTTP failures reaching 10 after one tell it apart; none",
        equivalent=False,
        next="if not _retryable(code) or attempt + 1",
    ),
    MutationNote(
        "if not _retryable(code) or attempt + 1 >= MID_STREAM_ATTEMPTS:",
        "the mid-stream budget of 4: no sequence sends four retryable in-stream errors in a row "
        "(chat-network-flaky-after-tools sends one, then a cut)",
        equivalent=False,
    ),
    MutationNote(
        "memo.update(attempt=attempt + 1, nudged=False)",
        "the mid-stream budget of 4: no sequence sends four retryable in-stream errors in a row",
        equivalent=False,
    ),
    MutationNote.reset_after_success('memo["http"] = 0', next="finish = None if err is not None"),
    MutationNote('if memo.get("loops", 0) >= 1:', "-1 and 0 both fail `>= 1`", ("0 -> -1",)),
    MutationNote('memo["loops"] = 1', "only `>= 1` reads it, which 2 passes too", ("1 -> 2",)),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(CLI.at(detail="(packages/cli/src/nonInteractiveCli.ts)"),
                 CORE.at(detail="(packages/core: client, turn, geminiChat, retry, loopDetectionService)")),
    max_steps=None,
    reasons=["no_tool_calls", "invalid_stream", "api_error", "loop_detected"],
    rules={
        "calls": Cited(CLI.at("L12339-12421"), CORE.at("L333058-333063"), text="every functionCall part is run, whatever the finish"),
        "answer": Cited(CLI.at("L12422-12450"), CORE.at("L332647-332679"), text="no calls and a valid response: the run ends"),
        "invalid-retry": Cited(CORE.at("L332069-332140, L331736-331741"), text="an invalid stream is asked again, 3 times"),
        "invalid-nudge": Cited(CORE.at("L332243-332256, L331816-331855"), text="a retry after an empty or thoughts-only response adds a nudge"),
        "invalid-stop": Cited(CLI.at("L12296-12336"), text="the 4th invalid stream ends the run with an error"),
        "http-retry": Cited(CORE.at("L308010-308185, L379137"), text="429, 499 and 5xx retried with back-off, 10 attempts"),
        "cut-retry": Cited(CORE.at("L308010-308185, L307892-307990"), Note("observed: 10 requests"),
                           text="a connection dropped before the first chunk (L307892-307990: the network error "
                                "codes) is retried like a 5xx, 10 attempts"),
        "stream-error-retry": Cited(CORE.at("L267627-267640, L332119-332140"), text="an in-stream 429/499/5xx is retried mid-stream"),
        "api-error": Cited(CORE.at("L307290, L307971-307990"), CLI.at("L12253-12254"), text="any other error ends the run"),
        "loop-recover": Cited(CORE.at("L342418-342447, L346676-346710, L346954-346962"), text="a 5-fold repeated call cycle: feedback message, the call not run"),
        "loop-stop": Cited(CORE.at("L346676-346680"), CLI.at("L12231-12245"), text="the second detection ends the run (status success)"),
    },
    explained=CONFORMANCE_EXPLAINED,
    not_driven=CONFORMANCE_NOT_DRIVEN,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    attempt: int = memo.get("attempt", 0)  # attempts of the current sendMessageStream already failed
    http: int = memo.get("http", 0)  # failed attempts of the current retryWithBackoff
    function_response: bool = memo.get("function_response", False)
    nudged: bool = memo.get("nudged", False)

    def new_message(function_response: bool) -> None:
        memo.update(attempt=0, http=0, nudged=False, function_response=function_response)

    err = turn.error
    if err is not None:
        path, code = _error_path(err, turn)
        if path == "cut":  # a dropped connection: retried like a 5xx (observed, see the module docstring)
            if http + 1 >= HTTP_ATTEMPTS:
                return Stop("api_error", ok=False, rule="api-error")
            memo["http"] = http + 1
            return Resend("cut-retry")
        if path == "http":
            if code == 404 or not _retryable(code) or http + 1 >= HTTP_ATTEMPTS:
                return Stop("api_error", ok=False, rule="api-error")
            memo["http"] = http + 1
            return Resend("http-retry")
        if path == "stream":
            memo["http"] = 0
            if not _retryable(code) or attempt + 1 >= MID_STREAM_ATTEMPTS:
                return Stop("api_error", ok=False, rule="api-error")
            memo.update(attempt=attempt + 1, nudged=False)
            return Resend("stream-error-retry")
        # "end": the stream just stops; judged below like a response without a finish
    memo["http"] = 0
    finish = None if err is not None else served_finish(turn, state.dialect)

    if turn.tool_calls:
        history: list[str] = memo.setdefault("calls", [])
        for n, call in enumerate(turn.tool_calls):
            args = _arguments(call.arguments)
            history.append(f"{call.name.strip() or 'generic_tool'}:{json.dumps(args or {}, sort_keys=True)}")
            if _loop_at(history):
                if memo.get("loops", 0) >= 1:
                    return Stop("loop_detected", ok=True, rule="loop-stop", run=tuple(range(n)))
                memo["loops"] = 1
                new_message(False)
                return Remind("loop-recover", message=LOOP_FEEDBACK)
        failed = tuple(n for n, c in enumerate(turn.tool_calls)
                       if not c.name.strip() or _arguments(c.arguments) is None)
        new_message(True)
        return Continue("calls", run=tuple(n for n in range(len(turn.tool_calls)) if n not in failed),
                        failed=failed)

    problem = invalid_stream(turn, finish, function_response)
    if problem is None:
        return Stop("no_tool_calls", ok=True, rule="answer")
    if attempt + 1 >= MID_STREAM_ATTEMPTS:
        return Stop("invalid_stream", ok=False, rule="invalid-stop")
    nudge = problem in _NUDGES
    memo.update(attempt=attempt + 1, nudged=nudge)
    if nudge and not nudged:
        return Remind("invalid-nudge", message=_NUDGES[problem])
    return Resend("invalid-retry")
