"""Pi's agent-core loop: run toolCall blocks, fail the calls of a `length` reply, stop on error.

Pin: earendil-works/pi at commit 31b513e3 (Pi 0.84.1), MIT licence. Read as the TypeScript
sources embedded (``sourcesContent``) in the source maps of the npm packages
``@earendil-works/pi-agent-core@0.84.1`` (``packages/agent/src``) and
``@earendil-works/pi-ai@0.84.1`` (``packages/ai/src``); `npm pack` in /tmp. The line numbers of
``agent-loop.ts`` in those sources match the ones seed 002 cites for pi@31b513e3
(``agent-loop.ts:192-224``). The repository itself could not be fetched here (no snapshot), so
the commit was not checked out; the npm 0.84.1 sources stand in for it.

What is modelled: ``runLoop`` of the agent core (agent-loop.ts L155-275) with a default
``AgentLoopConfig`` (no ``shouldStopAfterTurn``, no ``prepareNextTurn``, no follow-up queue) and
the provider mappers of pi-ai that turn the provider's raw finish string into ``stopReason``.
Not modelled: the coding-agent session (``coding-agent/src/core/agent-session.ts``), whose
auto-retry re-runs the agent up to 3 times on a retryable error message; the port stops where the
core loop stops. pi-ai's own request retry (``utils/provider-retry.ts`` L105-125) defaults to
``maxRetries ?? 0``, so it adds no retries. There is no step cap in the core loop.

Steering (``turn.steer``): ``Agent.steer()`` queues a message; the loop polls the queue after each
turn (L259) and injects it before the next request (L182-190), so a turn with a steer is followed
by another request even when it has no tool calls: modelled as Remind (carrying the tools the
turn ran or failed). A turn whose stopReason is error returns first (L196-200): the steer is not
consumed and the port stops.

Dialect: the mapper is chosen from the raw string, not from ``State.dialect``: the raw vocabularies
of the four wires it maps (Chat, Messages, Responses, Gemini) do not overlap, so the raw string alone
names its mapper, as each Pi provider maps only its own API's strings. A raw string no mapper knows,
or no finish at all, is an error in every mapper (see the rules), so the choice does not matter then.
Bedrock is the exception: its stopReason values share four strings with Anthropic's, so a
``bedrock-converse`` sequence is read by Pi's Bedrock provider (``packages/ai/src/api/
bedrock-converse-stream.ts``, the ``amazon-bedrock`` provider, from the same 0.84.1 source maps),
chosen by ``State.dialect``. That provider streams through the AWS SDK's ``BedrockRuntimeClient``
built without ``maxAttempts`` (L228), so the SDK's default standard retry strategy retries an HTTP
error of a throttling or transient status before Pi sees it (``bedrock-sdk-retry``), unlike Pi's other
providers (``maxRetries`` 0). A sequence of a dialect no Pi provider speaks (Ollama's native
API, Cohere's) reaches Pi on Chat Completions, its openai-completions provider (the one Pi reaches
Ollama and other OpenAI-compatible servers with): read as the replay server serves it there
(:func:`served_on_chat`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from bench import (
    ALL,
    TABLES,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Remind,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    predicate,
)

PIN = Source("earendil-works/pi", ref="31b513e3", release="npm pi-agent-core/pi-ai 0.84.1 sources")
LOOP = PIN.file("packages/agent/src/agent-loop.ts")
BEDROCK = PIN.file("packages/ai/src/api/bedrock-converse-stream.ts")
SMITHY = Source(release="npm @smithy/core@3.41.1 (the AWS SDK's retry; the release @aws-sdk/client-bedrock-runtime "
                        "3.1048.0 resolves was not installed here)")
SDK_RETRIES = 2  # @smithy/core dist-es/submodules/retry/util-retry/config.js L6 DEFAULT_MAX_ATTEMPTS = 3
# the HTTP statuses the standard strategy retries: THROTTLING (429, service-error-classification.js L19-21)
# and TRANSIENT (constants.js L27: 500, 502, 503, 504); StandardRetryStrategy.js L94-95
_SDK_RETRY_STATUS = (429, 500, 502, 503, 504)

# the text of each failed call's error tool result (agent-loop.ts L381-406); it goes back as the
# call's result, not as a message, so the decision carries no message
TRUNCATED_MESSAGE = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its '
    "arguments may be truncated. Re-issue the tool call with complete arguments."
)

# ---------------------------------------------------------------- the provider mappers

# openai-completions.ts L1412-1436 mapStopReason (a known string or the default branch)
_CHAT = {"stop": "stop", "end": "stop", "length": "length", "function_call": "toolUse",
         "tool_calls": "toolUse", "content_filter": "error", "network_error": "error"}
# anthropic-messages.ts L1325-1351 mapStopReason (anything else throws)
_ANTHROPIC = {"end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse", "refusal": "error",
              "pause_turn": "stop", "stop_sequence": "stop", "sensitive": "error"}
_PROVIDERS = ("openai-chat", "anthropic", "openai-responses", "gemini", "bedrock-converse")
"""The dialects a Pi provider speaks (openai-completions, anthropic-messages, openai-responses, google, amazon-bedrock)."""
# openai-responses-shared.ts L742-772 mapStopReason(status, incompleteReason)
_RESPONSES_STATUS = {"completed": "stop", "failed": "error", "cancelled": "error",
                     "in_progress": "stop", "queued": "stop"}
# google-shared.ts L341-367 mapStopReason: the FinishReason enum of @google/genai (others throw)
_GEMINI = {"STOP": "stop", "MAX_TOKENS": "length"}
# bedrock-converse-stream.ts L1019-1034 mapStopReason (anything else -> error)
_BEDROCK = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
            "model_context_window_exceeded": "length", "tool_use": "toolUse"}
_GEMINI_ERROR = frozenset({
    "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "SAFETY", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION", "IMAGE_OTHER", "RECITATION", "FINISH_REASON_UNSPECIFIED", "OTHER", "LANGUAGE",
    "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "NO_IMAGE",
})


def stop_reason(turn: Turn, dialect: str = "") -> tuple[str, str]:
    """Pi's ``stopReason`` for a turn and the rule id of the mapper line that decided it."""
    if turn.error is not None:
        return "error", "stream-error"
    raw = turn.finish_raw
    has_calls = bool(turn.tool_calls)
    if dialect == "bedrock-converse":
        if raw is None:
            return "error", "bedrock-no-finish"
        return _BEDROCK.get(raw, "error"), "map-bedrock"
    if raw is None:
        # openai-completions L584-586 ("Stream ended without finish_reason", supportsFinishReason
        # defaults to true L1499), anthropic L751-753, responses L170-172, google L267-269:
        # stopReason stays "pending" and the provider throws.
        return "error", "no-finish"
    if raw in _ANTHROPIC:
        return _ANTHROPIC[raw], "map-anthropic"
    if raw in _CHAT:
        return _CHAT[raw], "map-openai-completions"
    if raw in _RESPONSES_STATUS or raw == "incomplete" or raw.startswith("incomplete/"):
        if raw.startswith("incomplete"):
            reason = raw.partition("/")[2]
            mapped = "length" if reason == "max_output_tokens" else "error"
        else:
            mapped = _RESPONSES_STATUS[raw]
        if mapped == "stop" and has_calls:  # responses-shared L574-576
            mapped = "toolUse"
        return mapped, "map-openai-responses"
    if raw in _GEMINI or raw in _GEMINI_ERROR:
        mapped = _GEMINI.get(raw, "error")
        if has_calls:  # google-generative-ai.ts L215-220: any toolCall block makes it toolUse
            mapped = "toolUse"
        return mapped, "map-google"
    # Not in any mapper: the openai-completions default branch (L1430-1434) maps it to error, the
    # anthropic (L1347-1349), responses (L767-770) and google (L362-365) defaults throw; in all of
    # them the provider ends with stopReason "error" (e.g. openai-completions L581-583, L590-609).
    return "error", "unknown-finish"


def served_on_chat(turn: Turn, dialect: str) -> Turn:
    """`turn` of a sequence in a dialect Pi has no provider for (Ollama's native API, Cohere's v2 chat),
    as the replay server serves it on Chat Completions (bench/wires/base.py ``Wire.finish_for``): Chat's
    string for its canonical finish, else its own raw string (an unknown or error finish)."""
    if dialect in _PROVIDERS or dialect not in TABLES or turn.finish_raw is None or turn.finish == "unknown":
        return turn
    raw = next((r for r, e in TABLES["openai-chat"].items() if e.finish == turn.finish), turn.finish_raw)
    return replace(turn, finish_raw=raw)


_MAPPER_RULES = {
    "stream-error": Cited(
        PIN.at("packages/ai/src/api/openai-completions.ts", "L590-609"),
        PIN.at("packages/ai/src/api/anthropic-messages.ts", "L760-769"),
        PIN.at("packages/ai/src/api/openai-responses.ts", "L179-189"),
        PIN.at("packages/ai/src/api/google-generative-ai.ts", "L279-289"),
        text="the same catch in each provider: a transport or provider error sets stopReason 'error' and emits an "
             "error event; utils/provider-retry.ts:L105-125 retries only when maxRetries is given (default 0); "
             "then agent-loop.ts returns"),
    "no-finish": (
        Cited(PIN.at("packages/ai/src/api/openai-completions.ts", "L584-586"), PIN.at("packages/ai/src/api/anthropic-messages.ts", "L751-753"), PIN.at("packages/ai/src/api/openai-responses.ts", "L170-172"), PIN.at("packages/ai/src/api/google-generative-ai.ts", "L267-269"), LOOP.at("L196-200"), text="no finish reason: the provider throws, stopReason 'error'; earendil-works/pi@31b513e3 (npm pi-agent-core/pi-ai 0.84.1 sources) packages/agent/src/agent-loop.ts:L196-200 returns")
    ),
    "map-openai-completions": (
        Cited(PIN.at("packages/ai/src/api/openai-completions.ts", "L1412-1436", detail="mapStopReason"), text="stop/end -> stop, length -> length, tool_calls/function_call -> toolUse, content_filter/network_error -> error; L581-583 throws on error")
    ),
    "map-anthropic": (
        Cited(PIN.at("packages/ai/src/api/anthropic-messages.ts", "L1325-1351", detail="mapStopReason"), text="end_turn/pause_turn/stop_sequence -> stop, max_tokens -> length, tool_use -> toolUse, refusal/sensitive -> error; L754-756 throws on error")
    ),
    "map-openai-responses": (
        Cited(PIN.at("packages/ai/src/api/openai-responses-shared.ts", "L742-772", detail="mapStopReason"), text="completed -> stop, incomplete with max_output_tokens -> length, other incomplete/failed/cancelled -> error; L574-576 stop with a toolCall block -> toolUse; L722-735 error and response.failed events throw")
    ),
    "map-google": (
        Cited(PIN.at("packages/ai/src/api/google-shared.ts", "L341-367", detail="mapStopReason"), PIN.at("packages/ai/src/api/google-generative-ai.ts", "L215-220"), text="STOP -> stop, MAX_TOKENS -> length, the other enum values -> error; google-generative-ai.ts:L215-220 any toolCall block -> toolUse (so a MAX_TOKENS reply with calls is not guarded); L270-275 throws on error")
    ),
    "map-bedrock": Cited(BEDROCK.at("L274-279, L1019-1034", detail="mapStopReason"), BEDROCK.at("L304-306"), text="end_turn/stop_sequence -> stop, max_tokens/model_context_window_exceeded -> length, tool_use -> toolUse, any other (guardrail_intervened, content_filtered, malformed_*, unknown) -> error with 'Provider stopped with: <reason>'; L304-306 throws on error"),
    "bedrock-no-finish": Cited(BEDROCK.at("L129, L301-303"), text="no messageStop: stopReason stays 'pending' and the provider throws 'Bedrock stream ended without a stop reason'"),
    "unknown-finish": Cited(
        PIN.at("packages/ai/src/api/openai-completions.ts", "L1430-1434", detail="(default -> error)"),
        PIN.at("packages/ai/src/api/anthropic-messages.ts", "L1347-1349"),
        PIN.at("packages/ai/src/api/openai-responses-shared.ts", "L767-770"),
        PIN.at("packages/ai/src/api/google-shared.ts", "L362-365", detail="(default throws 'Unhandled stop reason')"),
        text="an unknown raw string ends as stopReason 'error'"),
}


# What utils/json-parse.ts L104-124 parseStreamingJson makes of arguments JSON.parse rejects: the
# text repaired (L85-95: control characters and bad escapes inside strings), else partial-json's
# parse of a cut-off prefix (L113, L117), else {}. For the decision only one thing matters: whether
# the result is an object with a member. partial-json (0.1.7, pi-ai's dependency) keeps the
# complete members of a cut-off object and a last member whose value has begun (a cut string,
# array, object or literal is closed), and drops a member cut in its key or before its value; text
# that does not start as an object gives {}. So: an object whose first member's value has begun.
# AMBIGUOUS in one case the regex reads as a member: a first value cut at a number's point
# ('{"a": 1.'), which partial-json drops. Checked against parseStreamingJson run under Node on the
# cases of tests/ports/test_pi.py.
_MEMBER_BEGUN = re.compile(r'\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*(?:["\[{tfn]|-?\d)')


def _refused(name: str, arguments: str) -> bool:
    """Whether prepareToolCall answers the call with an error result instead of running it.

    agent-loop.ts L600-614: no tool has the name (a blank name; the bench's other names are taken
    to be tools the agent has). L616-618 with pi-ai utils/validation.ts L285-317: the arguments,
    as the provider parses them (openai-completions.ts L537, openai-responses-shared.ts L638-695,
    anthropic-messages.ts L659-695: parseStreamingJson, utils/json-parse.ts L104-124), are checked
    against the tool's object schema; a value that is not an object (a JSON string, a number, an
    array, null) fails it (L304-316 throws, caught at agent-loop.ts L661-666). Text that is not
    JSON becomes what partial-JSON repair makes of it: a cut-off object keeps its complete members
    and runs; text it cannot read becomes {}, which misses the tool's required key and fails (the
    bench's stub tools require the keys their calls carry, bench/serve/tools.py tool_specs;
    AMBIGUOUS: the port cannot see a real tool's schema). Found by driving 0.84.1 on
    responses-tool-args-python-dict (Python-quoted arguments: failed, not run).
    """
    if not name:
        return True
    if not arguments.strip():
        return False  # {} for a call that sends none: a tool without parameters
    try:
        value = json.loads(arguments)
    except ValueError:
        return _MEMBER_BEGUN.match(arguments) is None
    return not isinstance(value, dict)


def _sdk_retries(turn: Turn) -> bool:
    """Whether the AWS SDK retries the HTTP answer a Bedrock turn's error is served as: an error status
    with no output before it (bench/serve/render.py error_mode ``http``) of a retried status."""
    err = turn.error
    if err is None or err.status is None or err.kind == "stream_error":
        return False
    if turn.content is not None or turn.reasoning is not None or turn.tool_calls:
        return False
    return err.status in _SDK_RETRY_STATUS


MUTATION_NOTES = (
    MutationNote(
        "_SDK_RETRY_STATUS = (429, 500, 502, 503, 504)",
        "502 and 504: Bedrock names no exception with either status (service-2.json: InternalServerException 500, ServiceUnavailableException 503), only a proxy in front of it sends them, and no sequence does; tests/ports/test_bedrock_paths.py pins both",
        ("502 -> 503", "502 -> 501", "504 -> 505", "504 -> 503"),
        equivalent=False,
    ),
    MutationNote.default_below('if _sdk_retries(turn) and state.memo.get("sdk", 0) < SDK_RETRIES:'),
    MutationNote(
        'return Remind("truncated-calls", steer, failed=ALL)',
        "a length turn with calls that also carries a steer; no sequence has one",
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(LOOP.at("L155-275", detail="runLoop (MIT)")),
    max_steps=None,
    reasons=["stop", "length", "toolUse", "error"],
    rules={
        "bedrock-sdk-retry": Cited(BEDROCK.at("L228"), SMITHY.at("dist-es/submodules/retry/util-retry/config.js", "L6"), SMITHY.at("dist-es/submodules/retry/service-error-classification/constants.js", "L10-27"), SMITHY.at("dist-es/submodules/retry/service-error-classification/service-error-classification.js", "L19-32"), SMITHY.at("dist-es/submodules/retry/util-retry/StandardRetryStrategy.js", "L94-95"), text="on Bedrock the AWS SDK client (no maxAttempts set) retries an HTTP error answer that is throttling (429, ThrottlingException) or transient (500/502/503/504) up to 2 times (3 attempts) before the stream starts; an exception inside the stream, a 408 ModelTimeoutException or a 400 reaches Pi at once"),
        **{f"error/{k}": Cited(*v.citations, LOOP.at("L196-200"),
                               text=f"{v.text}; agent-loop.ts L196-200: stopReason error or aborted: turn_end, "
                                    "agent_end, return (no tool runs, no retry in the core loop)")
           for k, v in _MAPPER_RULES.items()},
        "truncated-calls": (
            Cited(LOOP.at("L202-216, L381-406", detail="failToolCallsFromTruncatedMessage"), text="stopReason 'length' and toolCall blocks: every call is answered with an error tool result (not executed; the results are pushed like executed ones, no extra message), terminate false, so hasMoreToolCalls stays true and the loop asks again")
        ),
        "tool-calls": (
            Cited(LOOP.at("L202-216, L411-426", detail="executeToolCalls"), text="toolCall content blocks (only those; stopReason toolUse is not consulted) are executed, results pushed, hasMoreToolCalls true (a batch terminates only if every result sets terminate, which the bench's tools do not)")
        ),
        "tool-calls-refused": (
            Cited(LOOP.at("L202-216, L411-426, L600-614", detail="prepareToolCall"), PIN.at("packages/ai/src/utils/validation.ts", "L285-317"), PIN.at("packages/ai/src/utils/openai-completions.ts", "L537"), PIN.at("packages/ai/src/utils/json-parse.ts", "L104-110"), text="a call whose name no tool has (here: blank) gets the error result 'Tool <name> not found'; L616-618, L661-666 with earendil-works/pi@31b513e3 (npm pi-agent-core/pi-ai 0.84.1 sources) packages/ai/src/utils/validation.ts:L285-317 validateToolArguments - arguments that parse (openai-completions.ts L537, utils/json-parse.ts L104-110) to a JSON value that is not an object fail the tool's object schema and get the validation error as the result: those calls are failed, the others run, hasMoreToolCalls true")
        ),
        "steer": Cited(
            LOOP.at("L259, L174, L182-190"),
            text="L259 polls getSteeringMessages after the turn; L174 keeps the inner loop running "
                 "while pendingMessages is non-empty; L182-190 inject them before the next request"),
        "done": Cited(
            LOOP.at("L206, L174, L261-274"),
            text="L206 hasMoreToolCalls = false with no toolCall blocks; L174 inner loop ends; "
                 "L261-274 no follow-up messages: break, agent_end. The final message's stopReason "
                 "(stop, length, or toolUse without blocks) is the only exit reason; no error is raised"),
    },
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    turn = served_on_chat(turn, state.dialect)
    if state.dialect == "bedrock-converse":
        if _sdk_retries(turn) and state.memo.get("sdk", 0) < SDK_RETRIES:
            state.memo["sdk"] = state.memo.get("sdk", 0) + 1
            return Resend("bedrock-sdk-retry")
        state.memo["sdk"] = 0
    reason, mapper = stop_reason(turn, state.dialect)
    if reason == "error":
        return Stop("error", ok=False, rule=f"error/{mapper}")
    calls = turn.tool_calls
    steer = turn.steer
    if calls:
        if reason == "length":
            # The 'was not executed' text goes back as each call's error tool result, not as a
            # harness message: a continue with every call failed. (Driving the original showed it:
            # the next request carries tool results only; the port had it as a Remind before.)
            if steer:
                return Remind("truncated-calls", steer, failed=ALL)
            return Continue("truncated-calls", run=(), failed=ALL)
        failed = tuple(i for i, c in enumerate(calls) if _refused(c.name, c.arguments))
        run = tuple(i for i in range(len(calls)) if i not in failed)
        if steer:
            return Remind("steer", steer, run=run, failed=failed)
        if failed:
            return Continue("tool-calls-refused", run=run, failed=failed)
        return Continue("tool-calls")
    if steer:
        return Remind("steer", steer)
    return Stop(reason, ok=True, rule="done")
