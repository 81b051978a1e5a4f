"""pydantic-ai `Agent.run`: run the tool calls, retry-prompt what fails validation, end on text; 50 requests.

Pin: pydantic/pydantic-ai, PyPI `pydantic-ai-slim[openai,anthropic]==2.68.0` (the library the
`pydantic-ai` meta-package installs with every extra; the wheel's `pydantic_ai/` paths below),
licence MIT, with the SDK clients it resolves to: `openai==3.57.0`, `anthropic==2.14.0`
(Apache-2.0). Read from the installed wheels.

Configuration modelled (the defaults, said once here): `Agent(model, tools=[...])` with
`output_type=str`, `retries=1` for tools and for output (agent/__init__.py L487-493, L822-826),
`end_strategy='graceful'` (L641), no output validators, no capabilities or toolsets beyond the
function tools, `agent.run(prompt)` (not streamed) with the default `UsageLimits()`
(usage.py L559 `request_limit=50`, L568 `tool_calls_limit=None`). The model is `OpenAIChatModel`,
`OpenAIResponsesModel` or `AnthropicModel` on a provider built from base URL and key only, so the
SDK client's own 2 retries apply (models/_sdk_retries.py L24-37: `max_retries` is forwarded only
when a model setting sets it; providers/_openai_compatible.py L39-56 builds a default AsyncOpenAI).
Gemini turns are read as a Gemini model on an OpenAI-compatible endpoint (`OpenAIChatModel`):
ASSUMPTION, stated here (GoogleModel is another extra, not read).

What the loop reads (CallToolsNode, _agent_graph.py L3891-4046): the response's parts. Tool calls
come first: each is validated and run (an unknown name or arguments that fail the signature's
schema become a retry prompt to the model, charged to that tool's retry budget); with no tool
call, non-blank text is the output; a response with no text and no call (empty, blank or
thinking-only) raises on `length` and `content_filter` finishes and otherwise asks the model
again once (the output retry budget of 1), then raises UnexpectedModelBehavior.

Bedrock (`bedrock-converse` turns): `BedrockConverseModel` (the `bedrock` extra, models/bedrock.py of the
same wheel) on a `BedrockProvider` built from region, endpoint and keys. The loop is the same; what the
model class changes: its stopReason map (L597-607: end_turn/stop_sequence -> stop, tool_use -> tool_call,
max_tokens and model_context_window_exceeded -> length, guardrail_intervened and content_filtered ->
content_filter, malformed_model_output and malformed_tool_use -> error) is the Bedrock finish table's, so
the canonical finish is read as it is; a Converse body without `stopReason` raises KeyError
(`response['stopReason']`, L1388), out of run; and the client is boto3's, built with timeouts only
(providers/bedrock.py L852-882), so botocore's standard retry mode applies, not the OpenAI/Anthropic
SDKs' retries (see `bedrock-retry`).

A refusal (`Turn.refusal`): on Chat Completions `message.refusal` makes the response empty with
finish 'content_filter' (models/openai/_chat_model.py L658-675), so ContentFilterError whatever else
the message carried; on Anthropic the server sends `stop_reason: refusal`, which pydantic-ai maps to
'content_filter', so the text, if any, is still the output. A Responses refusal part was not read:
NOT PORTED (such a turn goes through the text and tool rules).
"""

from __future__ import annotations

import json

from bench import (
    ALL,
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
    TurnError,
    predicate,
)

PIN = Source(release="PyPI pydantic-ai-slim==2.68.0")
BOTOCORE = Source(release="PyPI botocore==1.44.8")
OPENAI = Source(release="openai==3.57.0")
ANTHROPIC = Source(release="anthropic==2.14.0")
REQUEST_LIMIT = 50  # usage.py L559
TOOL_RETRIES = 1  # agent/__init__.py L487 default=1
OUTPUT_RETRIES = 1  # the same default, the output budget
MAX_CONTINUATIONS = 10  # models/_continuation.py L92 MAX_GENERATION_CONTINUATIONS
CLIENT_RETRIES = 2  # openai/_constants.py L8; anthropic/_constants.py DEFAULT_MAX_RETRIES
_RETRY_STATUS = (408, 409, 429)
# botocore standard mode (retries/standard.py): 429 (ThrottlingStatusCodeChecker L549) and the transient
# statuses (L469); 3 attempts in all (L36), the same 2 retries as the SDK clients
_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)

CONFORMANCE_EXPLAINED = {
    "con-anthropic-spliced-message-start": (
        "A continue the server reads as a remind because of how pydantic-ai replays reasoning, not a different "
        "decision. Turn 0's thinking block arrives without a signature (the server sends none), so the Anthropic "
        "adapter cannot replay it natively and writes it out as text in a user turn, "
        "'<assistant_thinking>Let me call the tool.</assistant_thinking>' (models/__init__.py L2513-2523, "
        "_thinking_part.py L45-60), and adds the framing explanation to the system prompt ('Mid-conversation "
        "system messages from the application arrive inside user turns ...', _framing.py L387-400). Driven by "
        "hand, request 2 carries the tool_use, its tool_result 'STOPBENCH-OK test-tool' (is_error false) and "
        "those two additions: the observer sees a new user message and a changed system prompt (remind) with "
        "test-tool run, as the port's continue runs it; the run then meets the end of the script (410), as "
        "the port's cell is still running."),
    "rec-anthropic-pause-turn-then-end-turn": (
        "The same replay of unsigned reasoning as con-anthropic-spliced-message-start: turn 0 (pause_turn) "
        "carries a thinking block without a signature, so the continuation request writes it out as "
        "'<assistant_thinking>' text in a user turn (models/__init__.py L2513-2523) beside the echoed text, "
        "which the observer reads as a remind; the port's continuation (pause-continue) sends nothing new "
        "either. Then the merged response's text is the output, as the port says (observed: ok, reason "
        "output, two requests)."),
    "rec-gemini-compat-empty-tool-id": (
        "The call has an empty id (Gemini's OpenAI-compatible endpoint sends ''); pydantic-ai gives such a call "
        "its own id, 'pyd_ai_' + a uuid (messages.py L3176 `tool_call_id or _generate_tool_call_id()`, _utils.py L747-752), and answers it under that id. The tool ran and "
        "its result carries the ok marker, but the server matches results to the calls it sent by id, finds "
        "none for 'pyd_ai_...' (observed detail: 'result for unknown call id'), and records the step as a "
        "continue with no call run; the port's continue runs it, and the run then ends with the output as "
        "observed."),
    **{sid: ("The call has an empty id, which pydantic-ai replaces with its own 'pyd_ai_' id (messages.py L3176), "
             "so the server cannot match the tool result to the call it sent (observed detail: 'result for "
             "unknown call id pyd_ai_...'), as in rec-gemini-compat-empty-tool-id: the port's continue runs the "
             "call, the observed continue shows none run; the steps and the ending agree.")
       for sid in ("rec-gemini-partial-args-stop", "rec-mixed-agents-tool-calls-run1", "rec-openai-legacy-function-call")},
}
"""Differences between this port and pydantic-ai 2.68.0 run by `stopbench conform pydantic_ai` that come
from what the replay server can serve or see, not from the loop's decisions (reports/conformance.md)."""


def _client_retries(err: TurnError, dialect: str) -> bool:
    """Whether the SDK client retries this error (a non-streamed request)."""
    if err.status is None:
        # served as a broken body (a connection error) or as HTTP 500 (bench/serve/render.py): both retried
        return True
    if dialect == "bedrock-converse":
        return err.status in _BOTOCORE_RETRY_STATUS
    return err.status in _RETRY_STATUS or err.status >= 500


def _binds(arguments: str) -> bool:
    """Whether a call's arguments pass the tool's schema validation (tool_manager.py validate path).

    Empty arguments are validated as '{}'. AMBIGUOUS, the port cannot see the tool's schema: like
    the other ports it takes a JSON object as binding and anything else (cut JSON, a JSON string)
    as failing the validation (bench/serve/tools.py tool_specs' convention).
    """
    if not arguments.strip():
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


_CHAT_FINISHES = ("stop", "length", "tool_calls", "content_filter", "function_call")


def finish_reason(turn: Turn, state: State) -> str | None:
    """The finish the loop reads: the canonical one, but on Chat Completions a raw finish_reason outside
    OpenAI's five maps to None (models/openai/_chat_model.py L1124-1129 `_map_finish_reason` over
    _chat_completions.py L16-24 CHAT_FINISH_REASON_MAP; L102-104 let any string through validation), so
    a compatible provider's "model_context_window_exceeded" is no 'length' to pydantic-ai."""
    if state.dialect == "openai-chat" and turn.finish_raw is not None and turn.finish_raw not in _CHAT_FINISHES:
        return None
    return turn.finish


def _cap(state: State, run: tuple[int, ...] | None, failed: tuple[int, ...], fallback: Decision) -> Decision:
    """The next request would be the 51st: UsageLimitExceeded before it is made."""
    if state.memo["requests"] >= REQUEST_LIMIT:
        return Stop("UsageLimitExceeded", ok=False, rule="request-limit", run=ALL if run is None else run,
                    failed=failed)
    return fallback


def _tools(turn: Turn, state: State) -> Decision:
    retries: dict[str, int] = state.memo.setdefault("tool_retries", {})
    run: list[int] = []
    failed: list[int] = []
    failed_names: set[str] = set()
    for i, c in enumerate(turn.tool_calls):
        if c.name and _binds(c.arguments):
            run.append(i)
            continue
        # tool_manager.py L519-533: the step-start count of this name against its budget
        if retries.get(c.name, 0) >= TOOL_RETRIES:
            last = turn.tool_calls[-1]
            if finish_reason(turn, state) == "length" and not (last.name and _binds(last.arguments)):
                # _tool_execution.py L764-767, _agent_graph.py L830-845: a cut-off last call names the cause
                return Stop("IncompleteToolCall", ok=False, rule="incomplete-tool-call", run=tuple(run),
                            failed=tuple(failed))
            return Stop("UnexpectedModelBehavior", ok=False, rule="tool-retries-exceeded", run=tuple(run),
                        failed=tuple(failed))
        failed.append(i)
        failed_names.add(c.name)
    # tool_manager.py L436-447: succeeded names start over, each failed name counts once per step
    ok_names = {turn.tool_calls[i].name for i in run}
    kept = {n: k for n, k in retries.items() if n not in ok_names}
    for n in failed_names:
        kept[n] = retries.get(n, 0) + 1
    state.memo["tool_retries"] = kept
    decision = Continue("tools", run=ALL if not failed else tuple(run), failed=tuple(failed))
    return _cap(state, None if not failed else tuple(run), tuple(failed), decision)


MUTATION_NOTES = (
    MutationNote(
        "_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)",
        "502 and 504: Bedrock names no exception with either status (service-2.json: InternalServerException 500, ServiceUnavailableException 503), only a proxy in front of it sends them, and no sequence does; tests/ports/test_bedrock_paths.py pins both",
        ("502 -> 503", "502 -> 501", "504 -> 505", "504 -> 503"),
        equivalent=False,
    ),
    MutationNote(
        'if err is not None and not (state.dialect == "openai-responses"',
        "an error on a Response whose status is failed: the server renders a failed Response from finish_raw "
        "alone, and no sequence gives such a turn an error as well",
        ("== -> !=",),
        equivalent=False,
    ),
    MutationNote.default_below('memo.get("sdk", 0) < CLIENT_RETRIES'),
    MutationNote(
        "if retries.get(c.name, 0) >= TOOL_RETRIES:",
        "a name with no count yet: 0 and -1 both fail `>= 1`",
        ("0 -> -1",),
    ),
    MutationNote(
        "kept[n] = retries.get(n, 0) + 1",
        "a failed name's count only meets `>= TOOL_RETRIES` (1): 1 and 2 both do, so the +1 and the default "
        "(0 or 1) cannot be told apart",
        ("1 -> 2", "0 -> 1"),
    ),
    MutationNote(
        "",
        "a tool that fails, then succeeds, then fails again (the mutant is in a dict comprehension, reported "
        "without its line); no catalogue sequence has one; tests/ports/test_pydantic_ai.py pins it",
        ("`n not in ok_names` negated",),
        equivalent=False,
    ),
    MutationNote(
        "None if not failed else tuple(run)",
        "only a 50th request whose calls partly fail tells it apart; no sequence reaches the request limit "
        "with a failing call",
        equivalent=False,
    ),
    MutationNote.reset_after_success('memo["paused"] = 0'),
    MutationNote(
        'memo["requests"] -= 1',
        "a continuation's request is only uncounted near the request limit of 50; no sequence pauses and then "
        "reaches it",
        equivalent=False,
    ),
    MutationNote(
        'finish = "content_filter" if turn.refusal is not None and state.dialect == "anthropic"',
        "the catalogue's Anthropic refusals already carry the canonical finish content_filter; only a refusal "
        "recorded with another finish tells the line apart",
        ("== -> !=",),
        equivalent=False,
    ),
    MutationNote(
        "last = turn.tool_calls[-1]",
        "the first and the last call differ only in a length-cut turn with several calls that exhausts a "
        "tool's budget; no sequence has one",
        ("1 -> 0",),
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3891-4046", detail="CallToolsNode"), PIN.at("pydantic_ai/_agent_graph.py", "L4067-4160", detail="_handle_tool_calls"), PIN.at("pydantic_ai/tool_manager.py"), PIN.at("pydantic_ai/usage.py", "L559-637")),
    max_steps=None,
    cap_note="request_limit 50 model requests (SDK retries do not count) -> UsageLimitExceeded, ok=False",
    reasons=["output", "UsageLimitExceeded", "UnexpectedModelBehavior", "IncompleteToolCall", "OutputTokenLimitExceeded",
             "ContentFilterError", "ModelAPIError", "KeyError"],
    rules={
        "output": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3943-3946, L4017-4020"), text="no tool call and non-blank text: with output_type=str the text is the output and the run ends; the finish reason is not read on this path"),
        "tools": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3999-4006, L4067-4160"), PIN.at("pydantic_ai/tool_manager.py", "L808-825, L880-915"), text="every tool call is validated and run (end_strategy 'graceful' never skips them for the text); an unknown name (here: blank) or arguments that fail the signature's schema become a RetryPromptPart to the model, charged to that tool name's budget: those calls are failed; the tool returns and retry prompts go in the next request"),
        "tool-retries-exceeded": Cited(PIN.at("pydantic_ai/tool_manager.py", "L519-533, L436-447"), text="a call fails validation while its tool name already used its budget of 1 retry (a failure in an earlier step, with no success of that tool since): UnexpectedModelBehavior 'Tool ... exceeded max retries count of 1', raised out of run"),
        "incomplete-tool-call": Cited(PIN.at("pydantic_ai/_tool_execution.py", "L764-767"), PIN.at("pydantic_ai/_agent_graph.py", "L830-845"), text="the tool budget is exceeded on a response cut by length whose last part is a tool call with arguments that do not parse as an object: IncompleteToolCall (a subclass of UnexpectedModelBehavior) is raised in its place (found by driving the original on chat-length-cut-json-repeat)"),
        "no-output-retry": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3906-3939, L4021-4046, L851-870"), text="a response with no tool call and no text (empty, blank text or thinking only), not cut by length nor filtered: a retry prompt ('Please return text or call a tool.') is added as a new request, consuming the output retry budget of 1"),
        "output-retries-exceeded": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L851-870"), text="a second response with nothing to act on exceeds the output retry budget (1): UnexpectedModelBehavior 'Exceeded maximum output retries (1)', raised"),
        "empty-length": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3909-3913"), text="no actionable output and finish_reason 'length': OutputTokenLimitExceeded, raised, no retry"),
        "chat-refusal": Cited(PIN.at("pydantic_ai/models/openai/_chat_model.py", "L658-675"), PIN.at("pydantic_ai/_agent_graph.py", "L3915-3921"), text="a Chat Completions message with `refusal` set becomes a response with no parts and finish 'content_filter' (its text and tool calls dropped): ContentFilterError, raised"),
        "empty-content-filter": Cited(PIN.at("pydantic_ai/_agent_graph.py", "L3915-3921"), text="no actionable output and finish_reason 'content_filter': ContentFilterError, raised"),
        "responses-failed": Cited(PIN.at("pydantic_ai/models/openai/_responses_model.py", "L1124-1127"), text="a Response with status failed carries its error object: `response_error(...)` raises a ModelAPIError after the client returned the 200, so no retry"),
        "pause-continue": Cited(PIN.at("pydantic_ai/models/anthropic/__init__.py", "L2469"), PIN.at("pydantic_ai/_agent_graph.py", "L1838-1990"), text="Anthropic `stop_reason: pause_turn` makes the response `suspended`: the model request node echoes it back and asks again (a continuation, no new message), then merges the segments into one response that CallToolsNode handles; a continuation is not a separate request step (L1805-1813). AMBIGUOUS: tool calls in a paused segment are merged, not run before the continuation; the port does not model running them afterwards"),
        "continuations-exceeded": Cited(PIN.at("pydantic_ai/models/_continuation.py", "L92"), PIN.at("pydantic_ai/_agent_graph.py", "L1911-1921"), text="more than 10 continuations of a suspended response: UnexpectedModelBehavior, raised"),
        "request-limit": Cited(PIN.at("pydantic_ai/usage.py", "L559, L631-637"), text="before each model request `usage.requests >= request_limit` (50) raises UsageLimitExceeded: the tools of the 50th response run, the 51st request is never made"),
        "client-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964, L1182-1218"), ANTHROPIC.at("anthropic/_base_client.py", detail="_should_retry"), text="the SDK client pydantic-ai builds with defaults retries up to 2 times on 408/409/429/>=500 and connection errors; pydantic-ai forwards max_retries only when a model setting sets it (PyPI pydantic-ai-slim==2.68.0 models/_sdk_retries.py:L24-37)"),
        "bedrock-retry": Cited(BOTOCORE.at("botocore/retries/standard.py", "L36, L469, L510-526, L549-565"), BOTOCORE.at("botocore/configprovider.py", "L157"), PIN.at("pydantic_ai/providers/bedrock.py", "L852-882"), text="on Bedrock the boto3 client BedrockProvider builds sets timeouts only, so botocore's default standard retry mode applies: up to 2 retries (3 attempts) of a throttling error (429, ThrottlingException) or a transient one (500/502/503/504, a connection error); a 408 ModelTimeoutException, a 424 ModelErrorException or a 400 is not retried"),
        "bedrock-no-stop-reason": Cited(PIN.at("pydantic_ai/models/bedrock.py", "L1388"), text="a Converse body without stopReason: `response['stopReason']` raises KeyError, which _map_api_errors (L212-233) does not catch: out of run"),
        "raise": Cited(PIN.at("pydantic_ai/models/openai/_errors.py", detail="map_api_errors"), PIN.at("pydantic_ai/models/anthropic/__init__.py"), text="the provider's error after the client's retries becomes a ModelAPIError, sorted into a subclass by status, code and message (ModelRateLimitError, ModelContextWindowExceededError, ModelConnectionError, ...: the bench's error kinds, not stop reasons; the reason is the family), and is raised out of run (no FallbackModel, no retry of its own)"),
    },
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    if memo.get("sdk", 0) == 0:
        memo["requests"] = memo.get("requests", 0) + 1
    err = turn.error
    if err is not None and not (state.dialect == "openai-responses" and turn.finish_raw == "failed"):
        if _client_retries(err, state.dialect) and memo.get("sdk", 0) < CLIENT_RETRIES:
            memo["sdk"] = memo.get("sdk", 0) + 1
            return Resend("bedrock-retry" if state.dialect == "bedrock-converse" else "client-retry")
        memo["sdk"] = 0
        return Stop("ModelAPIError", ok=False, rule="raise")
    memo["sdk"] = 0
    if state.dialect == "bedrock-converse" and turn.finish_raw is None:
        return Stop("KeyError", ok=False, rule="bedrock-no-stop-reason")
    if state.dialect == "openai-responses" and turn.finish_raw == "failed":
        return Stop("ModelAPIError", ok=False, rule="responses-failed")
    if turn.finish_raw == "pause_turn" and state.dialect == "anthropic":
        # a suspended response is echoed back and continued; the segments are merged into one response
        memo["paused"] = memo.get("paused", 0) + 1
        memo["requests"] -= 1  # the continuation is not a separate request step (L1805-1813)
        if memo["paused"] > MAX_CONTINUATIONS:
            return Stop("UnexpectedModelBehavior", ok=False, rule="continuations-exceeded")
        memo["stitched"] = memo.get("stitched", False) or bool(turn.content) or bool(turn.tool_calls)
        return Continue("pause-continue", run=())
    stitched = memo.pop("stitched", False)
    memo["paused"] = 0
    if turn.refusal is not None and state.dialect not in ("anthropic", "openai-responses"):
        return Stop("ContentFilterError", ok=False, rule="chat-refusal")
    if turn.tool_calls:
        return _tools(turn, state)
    if turn.content or stitched:
        return Stop("output", ok=True, rule="output")
    finish = "content_filter" if turn.refusal is not None and state.dialect == "anthropic" else finish_reason(turn, state)
    if finish == "length":
        return Stop("OutputTokenLimitExceeded", ok=False, rule="empty-length")
    if finish == "content_filter":
        return Stop("ContentFilterError", ok=False, rule="empty-content-filter")
    memo["output_retries"] = memo.get("output_retries", 0) + 1
    if memo["output_retries"] > OUTPUT_RETRIES:
        return Stop("UnexpectedModelBehavior", ok=False, rule="output-retries-exceeded")
    return _cap(state, None, (), Remind("no-output-retry"))
