"""The Vercel AI SDK's `generateText` tool loop, shared by the `vercel_ai` and `vercel_ai_steps` columns.

Pin: vercel/ai, npm `ai@7.0.173` with `@ai-sdk/openai@4.0.118`, `@ai-sdk/anthropic@4.0.105` and what
they resolve to (`@ai-sdk/provider-utils`, `@ai-sdk/provider`), licence Apache-2.0. Read from the
TypeScript sources the packages ship (`<package>/src/...`; line numbers below are those files').

Not a column itself: a shared rules module (bench.engine.discovery). Its factory, :func:`generate_text`,
builds each of the two columns from its parameters (``shared_factory(__file__, "_vercel_ai")`` in the
column files); they differ only in the stop condition. The mutation check mutates this file and
judges each mutant against both columns.

`generateText({model, tools, prompt})` runs steps in a do/while
(ai/src/generate-text/generate-text.ts L1019-1723): one model call per step (non-streamed,
`doGenerate`), wrapped in the retry function; the tool calls are parsed, the valid ones run, and
`shouldStartNextStep` (L971-1017) decides whether another step starts. With no `stopWhen` the
stop condition is `isStepCount(1)` (L294): exactly one step, whatever the model said. The docs'
tool-calling example sets `stopWhen: isStepCount(5)` (ai/docs/03-ai-sdk-core/15-tools-and-tool-calling.mdx
L42, L453; `stepCountIs` is the same function under its old name, src/generate-text/index.ts L74).

generateText returns normally on every finish reason: it has no success flag, so a returned run is
``ok=True`` with the last step's unified finish reason as its reason (what an application reads
from `result.finishReason`); a thrown error is ``ok=False`` with the error's name (``AI_APICallError``
or ``AI_RetryError``). Configuration modelled: the defaults (no `experimental_repairToolCall`, no
`prepareStep`, no tool approvals, `maxRetries` 2, no steering, no provider-executed tools).

Bedrock turns are read by the AI SDK's Bedrock provider, npm `@ai-sdk/amazon-bedrock@5.0.101` (the
latest release; its `src/` as published), whose `doGenerate` posts to `/model/{id}/converse`: its
stopReason map (`mapAmazonBedrockFinishReason`) gives the unified finish, an error answer is an
APICallError as on the other providers (so the same retries), and a body the response schema rejects
(no `stopReason`) is an APICallError that is not retried (`bedrock-invalid-response`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from bench import (
    ALL,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Predicate,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    predicate,
    predicate_factory,
)

AI = Source(release="npm ai@7.0.173")
OPENAI = Source(release="npm @ai-sdk/openai@4.0.118")
ANTHROPIC = Source(release="npm @ai-sdk/anthropic@4.0.105")
UTILS = Source(release="npm @ai-sdk/provider-utils (resolved by ai@7.0.173)")
PROVIDER = Source(release="npm @ai-sdk/provider (resolved by ai@7.0.173)")
BEDROCK = Source(release="npm @ai-sdk/amazon-bedrock@5.0.101")
BEDROCK_UTILS = Source(release="npm @ai-sdk/provider-utils@5.0.51 (resolved by @ai-sdk/amazon-bedrock@5.0.101)")
MAX_RETRIES = 2  # ai/src/generate-text/generate-text.ts L217, L724-727; provider-utils retry-with-exponential-backoff.ts L36
INITIAL_DELAY_MS = 2000  # ai/src/util/retry-with-exponential-backoff.ts: initialDelayInMs 2000, backoffFactor 2
_RETRY_STATUS = (408, 409, 429)  # @ai-sdk/provider src/errors/api-call-error.ts L28-32, and >= 500
_CUT_KINDS = ("connection_reset", "connection_refused")

# @ai-sdk/openai src/chat/map-openai-finish-reason.ts L11-26 (a `stop` with a refusal is content-filter)
_CHAT = {"stop": "stop", "length": "length", "content_filter": "content-filter",
         "function_call": "tool-calls", "tool_calls": "tool-calls"}
# @ai-sdk/anthropic src/map-anthropic-stop-reason.ts L13-31 (isJsonResponseFromTool false: no output schema)
_ANTHROPIC = {"pause_turn": "stop", "end_turn": "stop", "stop_sequence": "stop", "refusal": "content-filter",
              "tool_use": "tool-calls", "max_tokens": "length", "model_context_window_exceeded": "length",
              "compaction": "other"}
# @ai-sdk/amazon-bedrock src/map-amazon-bedrock-finish-reason.ts L4-22 (isJsonResponseFromTool false): any
# other string (malformed_*, model_context_window_exceeded, an unknown one) is other
_BEDROCK = {"stop_sequence": "stop", "end_turn": "stop", "max_tokens": "length", "content_filtered": "content-filter",
            "guardrail_intervened": "content-filter", "tool_use": "tool-calls"}
# the raw Chat string the replay server sends for a Gemini turn's canonical finish (bench/serve/render.py
# finish_for: the Chat dialect's default raw string, else the Gemini raw string, which Chat maps to other)
_GEMINI_ON_CHAT = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}

RULES = {
    "tools": Cited(AI.at("src/generate-text/generate-text.ts", "L1507-1560, L971-1017"), AI.at("src/generate-text/is-tool-execution-allowed-finish-reason.ts", "L3-7"), text="the step's finish is stop or tool-calls: the valid tool calls run, each invalid one (unknown name, arguments that fail the tool's schema: parse-tool-call.ts L110-131, no repair function by default) gets a tool-error output that goes back to the model; every call has an output, so the next step starts (the stop condition not yet met)"),
    "step-limit": Cited(AI.at("src/generate-text/generate-text.ts", "L1011-1014"), AI.at("src/generate-text/stop-condition.ts", "L29-31"), text="the stop condition `isStepCount(N)` holds after the step's tools ran (steps.length === N): the loop ends and generateText returns the last step; the reason is its finish"),
    "tools-not-run": Cited(AI.at("src/generate-text/generate-text.ts", "L1538-1545, L976-982"), text="valid tool calls with a finish other than stop or tool-calls (length, content-filter, other): no tool is executed, so outputs and calls differ ('waiting-for-tool-results') and the loop ends, returning normally with that finish"),
    "invalid-calls-answered": Cited(AI.at("src/generate-text/generate-text.ts", "L1507-1527, L976-982, L1011-1016"), text="every tool call of the step is invalid (unknown name or input the schema rejects) and the finish is not stop or tool-calls (a call cut by length): the tool-error outputs are added before the finish is consulted, so outputs equal calls and the next step starts with the errors sent to the model (found by driving chat-length-cut-json-args)"),
    "no-calls": Cited(AI.at("src/generate-text/generate-text.ts", "L984-1000"), text="no client tool call in the step (an empty response, text only, a tool-calls finish without calls, a refusal): the loop ends and generateText returns; the reason is the step's finish"),
    "retry": Cited(AI.at("src/util/retry-with-exponential-backoff.ts", detail="(maxRetries 2, 2 s doubling, retry-after honoured under 60 s)"), UTILS.at("src/retry-with-exponential-backoff.ts", "L84-131"), PROVIDER.at("src/errors/api-call-error.ts", "L28-32"), UTILS.at("src/handle-fetch-error.ts", "L50-97"), text="an APICallError with status 408/409/429/>=500, or a network error (a body cut off), is retried: the same request again, up to 2 times"),
    "retries-exceeded": Cited(UTILS.at("src/retry-with-exponential-backoff.ts", "L101-107"), text="a third retryable failure: RetryError (reason maxRetriesExceeded), thrown out of generateText"),
    "not-retryable": Cited(UTILS.at("src/retry-with-exponential-backoff.ts", "L133-141"), text="a non-retryable APICallError (another 4xx) is thrown as it is on the first attempt, or wrapped in RetryError (errorNotRetryable) after earlier retries"),
    "bedrock-invalid-response": Cited(BEDROCK.at("src/amazon-bedrock-chat-language-model.ts", "L698-711, L1509, L1425-1428"), BEDROCK_UTILS.at("src/response-handler.ts", "L197-219"), PROVIDER.at("src/errors/api-call-error.ts", "L28-32"), text="a Converse body without stopReason fails the response schema (stopReason is required): createJsonResponseHandler throws APICallError 'Invalid JSON response' with the 200 status, which is not retryable: thrown out of generateText"),
    "responses-failed": Cited(OPENAI.at("src/responses/openai-responses-language-model.ts", "L893-903"), text="a Responses body with an `error` (status failed) throws APICallError with statusCode 400, isRetryable false: thrown out of generateText on the first attempt"),
}
REASONS = ["stop", "length", "content-filter", "tool-calls", "other", "AI_APICallError", "AI_RetryError"]


def _retryable(err: TurnError) -> bool:
    """Whether the AI SDK's retry function retries this error as the replay server serves it.

    A cut body (connection_reset/refused without a status) fails while reading: undici's
    `terminated` is a network error, made retryable by handle-fetch-error.ts L72-97 (read as such,
    and seen driving chat-connection-dropped-repeat: two resends, then AI_RetryError). An error without a status goes out as HTTP 500
    (bench/serve/render.py IN_STREAM_JSON_STATUS) on a non-streamed request: retryable."""
    if err.status is None:
        return True
    return err.status in _RETRY_STATUS or err.status >= 500


def unified(turn: Turn, dialect: str) -> str:
    """The step's unified finish reason, as the provider the driver uses maps the raw finish it is sent."""
    has_calls = bool(turn.tool_calls)
    refused = bool(turn.refusal)
    if dialect == "bedrock-converse":
        return _BEDROCK.get(turn.finish_raw or "", "other")
    if dialect == "anthropic":
        # the server sends stop_reason refusal for a refusal (bench/serve/render.py finish_for)
        raw = "refusal" if turn.refusal is not None else turn.finish_raw
        return _ANTHROPIC.get(raw or "", "other")
    if dialect == "openai-responses":
        # @ai-sdk/openai src/responses/map-openai-responses-finish-reason.ts L14-27, read from
        # incomplete_details.reason (openai-responses-language-model.ts L1573-1578)
        raw = turn.finish_raw or ""
        reason = raw.partition("/")[2] if raw.startswith("incomplete/") else None
        if reason is None:
            return "tool-calls" if has_calls else "content-filter" if refused else "stop"
        if reason == "max_output_tokens":
            return "length"
        if reason == "content_filter":
            return "content-filter"
        return "tool-calls" if has_calls else "other"
    raw = turn.finish_raw if dialect == "openai-chat" else _GEMINI_ON_CHAT.get(turn.finish, turn.finish_raw)
    mapped = _CHAT.get(raw or "", "other")
    return "content-filter" if mapped == "stop" and refused else mapped


def _binds(arguments: str) -> bool:
    """Whether a call's arguments pass the tool's input schema (parse-tool-call.ts L251-264).

    Blank arguments are validated as {} (L252-256). AMBIGUOUS, the port cannot see the schema: like
    the other ports it takes a JSON object as binding and anything else (cut JSON, a JSON string)
    as failing (bench/serve/tools.py tool_specs' convention). On Anthropic the server sends
    such arguments as {} (render.py tool_input), which the stub's required keys reject as well."""
    if not arguments.strip():
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def decide_step(turn: Turn, state: State, limit: int) -> Decision:
    """One model request of generateText with `stopWhen: isStepCount(limit)`."""
    memo = state.memo
    err = turn.error
    has_output = turn.content is not None or turn.reasoning is not None or bool(turn.tool_calls)
    cut = err is not None and err.status is None and err.kind in _CUT_KINDS
    # bench/serve/render.py render: a Responses `failed` turn goes out as a 200 body with status failed
    # unless its error has a status and no output (then that HTTP status)
    failed_body = (state.dialect == "openai-responses" and turn.finish_raw == "failed" and not cut
                   and (err is None or err.status is None or has_output))
    if failed_body:
        attempts = memo.get("attempts", 0) + 1
        memo["attempts"] = 0
        return Stop("AI_APICallError" if attempts == 1 else "AI_RetryError", ok=False, rule="responses-failed")
    if err is not None and err.kind != "stream_cut":
        attempts = memo.get("attempts", 0) + 1
        if attempts > MAX_RETRIES:
            memo["attempts"] = 0
            return Stop("AI_RetryError", ok=False, rule="retries-exceeded")
        if cut or _retryable(err):
            memo["attempts"] = attempts
            return Resend("retry")
        memo["attempts"] = 0
        return Stop("AI_APICallError" if attempts == 1 else "AI_RetryError", ok=False, rule="not-retryable")
    if state.dialect == "bedrock-converse" and turn.finish_raw is None and err is None:
        attempts = memo.get("attempts", 0) + 1
        memo["attempts"] = 0
        return Stop("AI_APICallError" if attempts == 1 else "AI_RetryError", ok=False,
                    rule="bedrock-invalid-response")
    memo["attempts"] = 0
    memo["steps"] = steps = memo.get("steps", 0) + 1
    finish = unified(turn, state.dialect)
    if not turn.tool_calls:
        return Stop(finish, ok=True, rule="no-calls")
    run = tuple(i for i, c in enumerate(turn.tool_calls) if c.name.strip() and _binds(c.arguments))
    failed = tuple(i for i in range(len(turn.tool_calls)) if i not in run)
    if finish not in ("stop", "tool-calls"):
        if run:
            return Stop(finish, ok=True, rule="tools-not-run", run=())
        # every call invalid: each already has its tool-error output (L1507-1527, before the finish is
        # consulted), so outputs equal calls and the loop goes on (found driving chat-length-cut-json-args)
        if steps >= limit:
            return Stop(finish, ok=True, rule="step-limit", run=(), failed=failed)
        return Continue("invalid-calls-answered", run=(), failed=failed)
    if steps >= limit:
        return Stop(finish, ok=True, rule="step-limit", run=run, failed=failed)
    return Continue("tools", run=ALL if not failed else run, failed=failed)


MUTATION_NOTES = (
    MutationNote(
        "INITIAL_DELAY_MS = 2000",
        "the retry back-off's first delay, said for the record: no rule reads it (the replay has no clock)",
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate_factory
def generate_text(*, step_limit: int, stop_condition: str, cap_note: str,
                  unreachable: Mapping[str, str] | None = None,
                  explained: Mapping[str, str] | None = None,
                  mutation_notes: Sequence[MutationNote] = ()) -> Predicate:
    """A column of `generateText` with `stopWhen: isStepCount(step_limit)`: the rules above, where
    ai's sources set that stop condition (`stop_condition`, the lines of the column's citation), how
    the cap is counted (`cap_note`), the rules the step limit leaves unreachable, the column's
    conformance explanations and the notes on its own file's mutants (each column also carries
    this file's notes, so the mutation check finds them)."""

    @predicate(
        source=f"{AI}: {stop_condition}; {OPENAI}; {ANTHROPIC}; {BEDROCK}",
        max_steps=None,
        cap_note=cap_note,
        reasons=REASONS,
        rules=RULES,
        unreachable=unreachable,
        explained=explained,
        mutation_notes=(*MUTATION_NOTES, *mutation_notes),
    )
    def decide(turn: Turn, state: State) -> Decision:
        return decide_step(turn, state, step_limit)

    return decide
