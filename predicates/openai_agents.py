"""OpenAI Agents SDK Runner.run with defaults: run tools and ask again; no tools ends with the text; 10 turns raise.

Pin: openai/openai-agents-python, PyPI release `openai-agents==0.24.0`
(openai_agents-0.24.0-py3-none-any.whl, src paths below are inside the wheel's `agents/`), licence
MIT. Transport retries come from the `openai` client the SDK builds with defaults: read in
openai==3.57.0 (PyPI wheel, Apache-2.0; openai-agents 0.24.0 requires `openai>=3,<4`).

Configuration modelled: `Runner.run` (not streamed) on an `Agent` with defaults: no output_type
(plain text), `tool_use_behavior="run_llm_again"`, no handoffs, no guardrails, no error handlers,
no `ModelRetrySettings`, `max_turns=DEFAULT_MAX_TURNS` (10). The bench's tool names are taken to be
function tools the agent has, except a blank name, which no tool has (rule tool-not-found).

Which model adapter sees the turn is decided from `finish_raw`:
* an openai-responses string (`completed`, `incomplete/...`, `failed`, `cancelled`) or an
  `end_turn` flag -> `OpenAIResponsesModel` (the SDK default: models/_openai_shared.py L11
  `_use_responses_by_default = True`);
* anything else -> `OpenAIChatCompletionsModel` (what `set_default_openai_api("chat_completions")`,
  _config.py L27-31, selects). For anthropic or gemini raw strings (which no default OpenAI model
  returns) the canonical finish stands in for the chat `finish_reason` an OpenAI-compatible
  endpoint would send. ASSUMPTION, not from the source: the LiteLLM extension differs (it has no
  `length` check, extensions/models/litellm_model.py L317-335).

Differences from openai/openai-agents-python at HEAD 7f7a44f8 (not a release): line
numbers differ in 0.24.0 (cited below), and the Chat Completions stream handler's
`finish_reason='tool_calls'` with no calls -> ModelBehaviorError (models/chatcmpl_stream_handler.py
L436-446) lives in `buffer_tool_call_stream`, used only when streaming with
`buffer_streamed_tool_calls=True` (models/openai_chatcompletions.py L66, L72, L480-481; default
False). `Runner.run` does not stream, so with defaults a `tool_calls` finish with no calls ends the
run with the text like any other turn without tools.
"""

from __future__ import annotations

import json

from bench import ALL, Cited, Continue, Decision, MutationNote, Resend, Source, State, Stop, Turn, TurnError, predicate

PIN = Source("openai/openai-agents-python", ref="v0.24.0", release="PyPI openai-agents==0.24.0", tree="src/")
OPENAI = Source(release="openai==3.57.0")
MAX_TURNS = 10  # run_config.py L45 DEFAULT_MAX_TURNS
SDK_RETRIES = 2  # openai/_constants.py L8

_RESPONSES_RAW = ("completed", "failed", "cancelled", "incomplete")
_RETRIED_KINDS = ("timeout", "connection_refused", "connection_reset", "stream_cut", "stream_error")
"""Errors without a status the client retries (the error kinds of a timeout or a transport failure)."""


def _responses(turn: Turn) -> bool:
    raw = turn.finish_raw or ""
    return turn.end_turn is not None or raw.split("/", 1)[0] in _RESPONSES_RAW


def _sdk_retries(err: TurnError) -> bool:
    """Whether the openai client retries this error (a non-streamed request)."""
    if err.status is not None:
        return err.status in (408, 409, 429) or err.status >= 500
    # no status: a timeout, a connection that failed or broke (not streamed: a cut while reading the
    # body is an httpx error inside send() -> APIConnectionError), or an error the server streams
    return err.kind in _RETRIED_KINDS


def _args_ok(arguments: str) -> bool:
    if not arguments:
        return True  # tool.py L1967: empty input is parsed as {}
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def _tools(turn: Turn, state: State, rule: str) -> Decision:
    # process_model_response looks every call up before any tool runs (turn_resolution.py
    # L3804-3848): a blank name is no tool of the agent (the bench's other names are)
    if any(not c.name for c in turn.tool_calls):
        return Stop("ModelBehaviorError", ok=False, rule="tool-not-found")
    # calls whose id already has an output in the run are skipped (tool_planning.py L444-452); the
    # same id for another call raises (L445-449); the memo keeps (name, arguments) per answered id
    if any(not c.id for c in turn.tool_calls):
        return Stop("ModelBehaviorError", ok=False, rule="empty-call-id")
    done: dict[str, tuple[str, str]] = state.memo.setdefault("done", {})
    fresh: list[int] = []
    for i, c in enumerate(turn.tool_calls):
        prev = done.get(c.id)
        if prev is not None and prev != (c.name, c.arguments):
            return Stop("ModelBehaviorError", ok=False, rule="call-id-reused")
        if prev is None:
            fresh.append(i)
    turns = state.memo.get("turns", 0) + 1
    state.memo["turns"] = turns
    if not fresh:
        if turn.content:
            return Stop("final_output", ok=True, rule="deduped-final")
        if turns >= MAX_TURNS:
            return Stop("MaxTurnsExceeded", ok=False, rule="max-turns")
        return Resend("deduped-run-again")
    for i in fresh:
        c = turn.tool_calls[i]
        done.setdefault(c.id, (c.name, c.arguments))
    run = tuple(i for i in fresh if _args_ok(turn.tool_calls[i].arguments))
    failed = tuple(i for i in fresh if i not in run)
    if turns >= MAX_TURNS:
        return Stop("MaxTurnsExceeded", ok=False, rule="max-turns", run=run, failed=failed)
    return Continue(rule, run=ALL if not failed and len(fresh) == len(turn.tool_calls) else run, failed=failed)


MUTATION_NOTES = (
    MutationNote.default_below('memo.get("sdk", 0) < SDK_RETRIES'),
    MutationNote(
        'raw.split("/", 1)[0]',
        "no raw finish string has a second slash, so maxsplit 1 and 2 give the same first part",
    ),
    MutationNote(
        "run=ALL if not failed and len(fresh) == len(turn.tool_calls) else",
        "`ALL` and the tuple of every call's index select the same calls",
    ),
    MutationNote(
        'raw == "failed" or (err is not None and raw != "completed")',
        "a Responses turn carrying an error without a status (a stream error event) reaches this test; no "
        "sequence has one",
        equivalent=False,
    ),
    MutationNote(
        'return Stop("ModelRefusalError", ok=False, rule="refusal")',
        "the Responses branch's refusal stop (the Chat branch's, later in the file, is caught): no Responses "
        "sequence carries a refusal part yet",
        equivalent=False,
        next='return Stop("final_output"',
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(PIN.at("agents/run.py", "L1597-1622", detail="AgentRunner.run"), PIN.at("agents/run_internal/turn_resolution.py", "L1176-1326"), PIN.at("agents/models/openai_chatcompletions.py", "L315-343"), PIN.at("agents/models/openai_responses.py", "L887-890")),
    max_steps=None,
    cap_note="cap 10 turns (retried requests do not count) -> MaxTurnsExceeded, ok=False",
    reasons=["final_output", "MaxTurnsExceeded", "ModelBehaviorError", "ModelRefusalError", "APIError"],
    rules={
        "final-output": Cited(PIN.at("agents/run_internal/turn_resolution.py", "L1176-1182, L1300-1312"), PIN.at("agents/run_internal/run_steps.py", "L141-156"), text='no function calls to run (`has_tools_or_approvals_to_run()` false, run_internal/run_steps.py L141-156) and no refusal: plain-text output, final_output = the last message\'s text `or ""`; finish_reason is not consulted here'),
        "tools": Cited(PIN.at("agents/run_internal/turn_resolution.py", "L1162-1175, L776-786, L1318-1326"), PIN.at("agents/tool.py", "L1963-1984, L1997-2003"), text="function calls run; with tool_use_behavior 'run_llm_again' (the default) the tool results are never final, so the step is NextStepRunAgain; arguments that are not a JSON object raise ModelBehaviorError inside the tool (tool.py L1963-1984), which the default failure_error_function turns into an error result for the model (tool.py L1997-2003): those calls are failed"),
        "max-turns": Cited(PIN.at("agents/run_config.py", "L45"), PIN.at("agents/run.py", "L1597-1622"), text="`current_turn += 1` before each model call; when it exceeds max_turns (10) MaxTurnsExceeded is built and, with no error handler, raised: the tools of the 10th turn ran, the 11th call is never made"),
        "refusal": Cited(PIN.at("agents/models/chatcmpl_converter.py", "L229-231"), PIN.at("agents/items.py", "L800-810"), PIN.at("agents/run_internal/turn_resolution.py", "L1176-1188"), text="the Chat adapter turns `message.refusal` into a refusal part of the output message (a Responses refusal part arrives as one); with no function call to run and a refusal in the last message, ModelRefusalError is raised (no error handler: out of Runner.run), whatever the finish says (found by conformance on chat-refusal-finish-stop)"),
        "chat-length-empty": Cited(PIN.at("agents/models/openai_chatcompletions.py", "L328-343"), text="finish_reason 'length' with no content, no refusal and no tool calls raises ModelBehaviorError (a truncated turn with text or tool calls is processed normally)"),
        "chat-content-filter-empty": Cited(PIN.at("agents/models/openai_chatcompletions.py", "L315-326"), PIN.at("agents/run_internal/turn_resolution.py", "L1186-1200"), text="finish_reason 'content_filter' with no content and no tool calls gets a synthesized refusal, and a refusal with nothing to run raises ModelRefusalError (no handler)"),
        "responses-terminal": Cited(PIN.at("agents/models/openai_responses.py", "L887-890"), text="a non-streamed response whose status is 'failed' or 'incomplete' (max_output_tokens or content_filter) raises ModelBehaviorError, whatever its output"),
        "sdk-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964, L1182-1218"), text="the default AsyncOpenAI client retries up to 2 times on 408/409/429/>=500, timeouts and connection errors; the runner keeps these provider retries on the first attempt (agents/run_internal/model_retry.py L516-554)"),
        "deduped-final": Cited(PIN.at("agents/run_internal/tool_planning.py", "L340-392, L444-452"), PIN.at("agents/run_internal/turn_resolution.py", "L966-996, L1182-1186, L1300-1312"), text="every call of the turn reuses the id of a call already answered in this run, with the same name and arguments: it is skipped, not run; with nothing to run and a message, the message text is the final output (found by conformance: a model stuck repeating call_1)"),
        "deduped-run-again": Cited(PIN.at("agents/run_internal/turn_resolution.py", "L1182-1186, L1318-1326"), PIN.at("agents/run_internal/run_loop.py", "L2955-2956"), PIN.at("agents/run_internal/items.py", "L721-745, L810-842"), text="every call reuses an answered id and there is no message: 'tool activity without message', NextStepRunAgain; the input items are deduplicated by call id (run_internal/items.py L721-745, L810-842), so the next request is the same as this one (a resend on the wire); the turn counts toward max_turns"),
        "tool-not-found": Cited(PIN.at("agents/run_internal/turn_resolution.py", "L3133-3160, L3804-3848"), PIN.at("agents/run_config.py", "L498"), text="process_model_response looks each function call up among the agent's function tools before anything runs; a name that is none of them (here: blank) with the default tool_not_found_behavior 'raise_error' raises ModelBehaviorError 'Tool  not found in agent ...' (no handler: out of Runner.run), so no call of the turn runs"),
        "empty-call-id": Cited(PIN.at("agents/run_internal/tool_planning.py", "L400-410"), PIN.at("agents/_tool_invocation.py", "L222-233"), text="a function call with an empty call id (Gemini's OpenAI-compatible endpoint sends '') has no valid call id: ModelBehaviorError 'Tool invocations require a non-empty string call ID before execution', raised before any tool runs (found by conformance)"),
        "call-id-reused": Cited(PIN.at("agents/run_internal/tool_planning.py", "L384-391, L445-449"), text="a call reuses the id of an answered call with other name or arguments: ModelBehaviorError, raised (the SDK compares a semantic fingerprint; the port compares name and raw arguments)"),
        "raise": Cited(PIN.at("agents/run_internal/model_retry.py", "L574-686, L403-404"), text="with no ModelRetrySettings the runner's retry budget is 0 (`attempt > max_retries` -> no retry) and the provider's exception is re-raised out of Runner.run (the conversation_locked compatibility retry, L621-639, needs a 400 with code 'conversation_locked', which the bench does not model)"),
    },
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    raw = turn.finish_raw or ""
    err = turn.error
    responses = _responses(turn)
    if err is not None and not (responses and err.status is None):
        if _sdk_retries(err) and memo.get("sdk", 0) < SDK_RETRIES:
            memo["sdk"] = memo.get("sdk", 0) + 1
            return Resend("sdk-retry")
        memo["sdk"] = 0
        return Stop("APIError", ok=False, rule="raise")
    memo["sdk"] = 0
    if responses:
        # a failed/incomplete Response object arrives as a 200 and is checked by the model adapter
        if raw.startswith("incomplete") or raw == "failed" or (err is not None and raw != "completed"):
            return Stop("ModelBehaviorError", ok=False, rule="responses-terminal")
        if turn.tool_calls:
            return _tools(turn, state, "tools")
        if turn.refusal:
            return Stop("ModelRefusalError", ok=False, rule="refusal")
        return Stop("final_output", ok=True, rule="final-output")
    # Chat Completions adapter: the raw finish_reason of an openai-chat turn (L328-343 compare the string the
    # endpoint sent, so a compatible provider's "model_context_window_exceeded" is not 'length'), else the
    # canonical one
    chat = state.dialect == "openai-chat" or raw in ("stop", "length", "tool_calls", "content_filter", "function_call")
    finish = raw if chat else turn.finish
    if not turn.tool_calls and not turn.content:
        if finish == "length":
            return Stop("ModelBehaviorError", ok=False, rule="chat-length-empty")
        if finish == "content_filter":
            return Stop("ModelRefusalError", ok=False, rule="chat-content-filter-empty")
    if turn.tool_calls:
        return _tools(turn, state, "tools")
    if turn.refusal:
        return Stop("ModelRefusalError", ok=False, rule="refusal")
    return Stop("final_output", ok=True, rule="final-output")
