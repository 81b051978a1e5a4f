"""smolagents `ToolCallingAgent`: only the `final_answer` tool ends the run; every other reply is a step, 20 of them.

Pin: huggingface/smolagents, PyPI `smolagents==1.26.0` (smolagents/agents.py, models.py, memory.py,
utils.py, tools.py), licence Apache-2.0, with the client it resolves to: `openai==3.57.0`
(Apache-2.0). Read from the installed wheel.

Configuration modelled (the defaults, said once here): `ToolCallingAgent(tools, model)` with
`max_steps=20` (agents.py L300), no planning, no `final_answer_checks`, `stream_outputs=False`
(one non-streamed `model.generate` per step, agents.py L1314-1318), called as `agent.run(task)`.
The model is `OpenAIServerModel(model_id, api_base, api_key)` (= OpenAIModel, models.py L1796)
with nothing else set: Chat Completions only, `tool_choice="required"` on every step
(models.py L509, L538-541), the openai client's 2 retries and smolagents' own rate-limit retrier
(3 attempts, models.py L38-41, L1174-1184). OpenAIServerModel has no Anthropic, Responses or Gemini
dialect (smolagents reaches those only through LiteLLMModel or InferenceClientModel, not read), so
every sequence is read as served on Chat Completions, a Gemini, Anthropic or Responses model behind
an OpenAI-compatible endpoint: ASSUMPTION, stated here (the driver serves every dialect on Chat).
Bedrock is the exception: smolagents has a Bedrock model of its own, `AmazonBedrockModel` (models.py
L1859-2067, boto3 `converse`), so a `bedrock-converse` sequence is read by it, and it cannot run a
ToolCallingAgent step: its `_prepare_completion_kwargs` (L1968-2007) keeps the OpenAI-shaped `tools`
and `tool_choice` the base class adds (L539-542) and pops only `toolConfig`, so botocore's parameter
validation rejects the call before any request (`bedrock-model-unusable`); and were a request made,
`generate` reads `response["output"]["message"]["tool_calls"]` (L2054), a key no Converse message has:
KeyError. Observed with smolagents 1.26.0 and boto3 1.44.8 against the replay server: the agent raised
AgentGenerationError ("Parameter validation failed: Unknown parameter in input: \"tools\"") with no
request made, and `generate` without tools raised KeyError 'tool_calls' on a served end_turn answer.

What the loop reads (ToolCallingAgent._step_stream, agents.py L1276-1359): the message's
`tool_calls`, and without any, its text parsed for a JSON tool call. The finish reason, the refusal
and the usage are never read for a decision. A step that raises an AgentError (a reply with no
call, a call that does not validate, final_answer beside other calls) is not the end: the error
becomes the step's observation, sent back as a user message "Error: ... Now let's retry"
(agents.py L597-600, memory.py L137-148), and the loop goes on. Only an exception from the model
call itself (after the retries) leaves `run` (AgentGenerationError, agents.py L594-596, L1324-1325).
After 20 steps without a final answer it asks once more without tools ("provide_final_answer",
agents.py L606-608, L625-637, L810-853) and returns that reply, whatever it is, as the output with
AgentMaxStepsError in memory (RunResult.state "max_steps_error", agents.py L523-524).

How the history goes back (memory.py L92-150, models.py L282-285, L332-397): the calls as assistant
text "Calling tools: [...]" (no `tool_calls` field), the results as one user message
"Observation: ..." and an error as a user message; consecutive messages of one role are merged.
The replay server reads such results by the stub marker (bench/serve/observe.py).

Usage: OpenAIModel.generate reads `response.usage.prompt_tokens` unconditionally (models.py
L1785-1793), so a completion without `usage` raises AttributeError, out of run. OpenAI sends usage
in every non-streamed completion; a sequence that recorded none says "not recorded", not "absent":
ASSUMPTION, the port reads every turn as carrying usage (and the driver adds a zero usage where the
server sends none).

Cap: max_steps 20 smolagents steps, each one model reply that did not raise (client and rate-limit
retries are inside a step); then the one final request: at most 21 replies, 189 requests with every
retry, under the bench's safety cap. The port counts the steps itself (`cap_note`).
"""

from __future__ import annotations

import json
import keyword
from typing import Any

from bench import (
    ALL,
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
    predicate,
)

PIN = Source(release="PyPI smolagents==1.26.0")
OPENAI = Source(release="openai==3.57.0")
MAX_STEPS = 20  # agents.py L300 max_steps: int = 20
CLIENT_RETRIES = 2  # openai/_constants.py L8 DEFAULT_MAX_RETRIES
RATE_LIMIT_ATTEMPTS = 3  # models.py L39 RETRY_MAX_ATTEMPTS
_RETRY_STATUS = (408, 409, 429)  # openai/_base_client.py L922-964 _should_retry (and >= 500)
FINAL_ANSWER = "final_answer"  # agents.py L402; default_tools.py L83-90: inputs {"answer": any}
RETRY_NOTE = "Error: ... Now let's retry: take care not to repeat previous errors!"
"""The step's error as the user message the next request carries (memory.py L137-148), abridged."""
FINAL_REQUEST = "Based on the above, please provide an answer to the following user task: ..."
"""provide_final_answer's last user message (prompts/toolcalling_agent.yaml final_answer.post_messages)."""

CONFORMANCE_EXPLAINED: dict[str, str] = {}
"""Differences between this port and smolagents 1.26.0 run by `stopbench conform smolagents` that come
from how the bench drives it, not from the loop's decisions (reports/conformance.md)."""


def _client_retries(err: TurnError) -> bool:
    """Whether the openai client retries this error (a non-streamed request)."""
    if err.status is None:
        # served as a broken body (a connection error) or as HTTP 500 (bench/serve/render.py): both retried
        return True
    return err.status in _RETRY_STATUS or err.status >= 500


def _rate_limited(err: TurnError) -> bool:
    """Whether smolagents' retrier tries the model call again (models.py L1194-1202).

    It reads the words of `str(exception)`: "429", "rate limit", "too many requests", "rate_limit".
    The openai error's text is "Error code: <status> - <body>" and the body's type is the recorded
    code or the kind (bench/serve/render.py error_body), so the port reads what those words answer
    to: status 429 or kind rate_limit. AMBIGUOUS: a provider message with those words on another
    status would be retried too; the port does not read messages.
    """
    return err.status == 429 or err.kind == "rate_limit"


def _valid_name(name: str) -> bool:
    """Whether a smolagents tool can have this name (utils.py L447-448 is_valid_name): the driver
    registers every other name of the sequence, so an invalid one is an unknown tool."""
    return name.isidentifier() and not keyword.iskeyword(name)


def _parse_if_needed(arguments: str) -> Any:
    """models.py L193-200 parse_json_if_needed: the JSON value, or the string itself when it does not parse."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _validates(name: str, value: Any, empty: bool) -> bool:
    """Whether one call gets past execute_tool_call's checks (agents.py L1453-1481, tools.py L1361-1412).

    `value` is the parsed arguments; `tool_call.arguments or {}` (agents.py L1385) makes a falsy one {}.
    An unknown tool raises AgentToolExecutionError; validate_tool_arguments raises on a dict key the
    tool does not have, a missing required key or a wrong type. final_answer has one input, answer
    (type any). For the sequence's tools the port cannot see the schema: AMBIGUOUS, like the other
    ports it takes empty arguments and a JSON object (even {}) as matching the tool's parameters,
    and {} made from any other falsy value (null, [], 0, "") as a tool with a required parameter
    (fails); anything else (cut-off JSON left as a string, a list, a number) binds the tool's first
    input, as validate_tool_arguments' single-value branch does for a tool with one or more inputs
    (tools.py L1409-1412: it runs with that value).
    """
    if not _valid_name(name):
        return False
    if name == FINAL_ANSWER:
        value = value or {}
        return not isinstance(value, dict) or set(value) == {"answer"}
    return empty or isinstance(value, dict) or bool(value)


def _text_call(content: str | None) -> tuple[str, Any] | None:
    """The tool call smolagents reads from text when a reply has no tool_calls (models.py L583-594,
    L400-415, utils.py L166-186), as (name, parsed arguments), or None when it raises.

    No text (None) fails an assert; otherwise the span from the first "{" to the last "}" must be
    JSON with a "name" key; "arguments" (absent: None) is parsed again when it is a string."""
    if content is None or "}" not in content:
        return None
    try:
        data = json.loads(content[content.find("{"): content.rfind("}") + 1], strict=False)
    except ValueError:
        return None
    if not isinstance(data, dict) or "name" not in data:
        return None
    args = data.get("arguments")
    return str(data["name"]), _parse_if_needed(args) if isinstance(args, str) else args


def _step(turn: Turn) -> Decision:
    """One step's outcome after a reply that did not raise (ToolCallingAgent._step_stream)."""
    if not turn.tool_calls:
        parsed = _text_call(turn.content)
        if parsed is None:
            return Remind("no-tool-call", message=RETRY_NOTE)
        name, value = parsed
        if not _validates(name, value, value is None):
            return Remind("tool-error", message=RETRY_NOTE)
        if name == FINAL_ANSWER:
            return Stop("final_answer", ok=True, rule="final-answer")
        return Continue("text-call", run=ALL)
    kept: dict[str, int] = {}
    for n, c in enumerate(turn.tool_calls):
        kept[c.id] = n  # agents.py L1374-1380: one call per id, the last one given
    ok = all(_validates(turn.tool_calls[n].name, _parse_if_needed(turn.tool_calls[n].arguments),
                        not turn.tool_calls[n].arguments) for n in kept.values())
    if not ok:
        return Remind("tool-error", message=RETRY_NOTE)
    if any(turn.tool_calls[n].name == FINAL_ANSWER for n in kept.values()):
        if len(turn.tool_calls) > 1:
            return Remind("tool-error", message=RETRY_NOTE)
        return Stop("final_answer", ok=True, rule="final-answer", run=ALL)
    run = tuple(sorted(kept.values()))
    return Continue("tools", run=ALL if len(run) == len(turn.tool_calls) else run)


_SURVIVES_RATE_LIMIT_RETRIER = (
    "smolagents' rate-limit retrier (3 attempts, each with the client's own 2 retries): only a rate limit "
    "that outlasts the client's retries tells these apart, and every 429 of the catalogue is answered within "
    "them (chat-error-rate-limit, chat-transient-errors-after-tools); tests/ports/test_smolagents.py pins the "
    "9 requests of a persistent 429"
)
_SURVIVES_FINAL_ANSWER = (
    "final_answer, smolagents' own tool: no sequence calls it (the rule is declared unreachable; "
    "tests/ports/test_smolagents.py pins it)"
)
MUTATION_NOTES = (
    MutationNote.default_below('memo.get("client", 0) < CLIENT_RETRIES'),
    MutationNote("RATE_LIMIT_ATTEMPTS = 3", _SURVIVES_RATE_LIMIT_RETRIER, equivalent=False),
    MutationNote('memo.get("attempt", 1) < RATE_LIMIT_ATTEMPTS', _SURVIVES_RATE_LIMIT_RETRIER, equivalent=False),
    MutationNote('memo["attempt"] = memo.get("attempt", 1) + 1', _SURVIVES_RATE_LIMIT_RETRIER, equivalent=False),
    MutationNote('memo["client"], memo["attempt"] = 0, 1', _SURVIVES_RATE_LIMIT_RETRIER, equivalent=False),
    MutationNote(
        'memo["client"] = 0',
        "the client counter reset before the rate-limit retrier's next attempt (or the stop): only a rate "
        "limit that outlasts the client's retries and then meets another error reads it; no sequence has one",
        equivalent=False,
    ),
    MutationNote(
        'return err.status == 429 or err.kind == "rate_limit"',
        "every 429 of the catalogue has kind rate_limit, so the status test never decides alone",
        equivalent=False,
    ),
    MutationNote(
        'return Stop("max_steps_error", ok=False, rule="max-steps-answer")',
        "an error answering the request after the 20th step (provide_final_answer catches it): no sequence "
        "errs at request 21",
        ("Stop: ok inverted",),
        equivalent=False,
        next='return Stop("api_error"',
    ),
    MutationNote(
        'return not isinstance(value, dict) or set(value) == {"answer"}',
        _SURVIVES_FINAL_ANSWER,
        equivalent=False,
    ),
    MutationNote("if len(turn.tool_calls) > 1:", _SURVIVES_FINAL_ANSWER, equivalent=False),
    MutationNote(
        'return Stop("final_answer", ok=True, rule="final-answer"',
        _SURVIVES_FINAL_ANSWER,
        equivalent=False,
    ),
    MutationNote(
        'return Remind("tool-error", message=RETRY_NOTE)',
        "a final_answer beside other calls: no sequence calls final_answer",
        ("Remind -> Resend",),
        equivalent=False,
        next='return Stop("final_answer"',
    ),
    MutationNote(
        'return Remind("tool-error", message=RETRY_NOTE)',
        "a tool call written as JSON in text that does not validate: the one sequence with such text "
        "(chat-tool-call-as-text) names a tool with arguments",
        ("Remind -> Resend",),
        equivalent=False,
        next="if name == FINAL_ANSWER:",
    ),
    MutationNote(
        'data = json.loads(content[content.find("{"): content.rfind("}") + 1], strict=False)',
        "a text whose last character is not its last '}' tells the slice's end apart; the one text tool call "
        "of the catalogue ends with it",
        ("1 -> 2",),
        equivalent=False,
    ),
    MutationNote(
        'return Continue("tools", run=ALL if len(run) == len(turn.tool_calls) else run)',
        "calls sharing an id in one turn (one of them dropped): no sequence has two in one turn "
        "(chat-repeat-same-call repeats an id across turns); tests/ports/test_smolagents.py pins it",
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(PIN.at("smolagents/agents.py", "L540-611", detail="MultiStepAgent._run_stream"), PIN.at("smolagents/agents.py", "L1276-1359", detail="ToolCallingAgent._step_stream"), PIN.at("smolagents/agents.py", "L1361-1442", detail="process_tool_calls"), PIN.at("smolagents/agents.py", "L1453-1502", detail="execute_tool_call"), PIN.at("smolagents/models.py", "L1646-1796", detail="OpenAIModel"), PIN.at("smolagents/memory.py", "L92-150", detail="ActionStep.to_messages"), Note(str(OPENAI))),
    max_steps=None,
    cap_note="max_steps 20 steps (replies that did not raise), then one request without tools whose reply is the output -> max_steps_error, ok=False",
    reasons=["final_answer", "max_steps_error", "api_error"],
    rules={
        "tools": Cited(PIN.at("smolagents/agents.py", "L1327-1334, L1361-1442"), text="the reply's tool_calls (arguments parsed when they are JSON, models.py:L193-200) each validate and run, in parallel when there are several; the results go back as one user message 'Observation: ...' and the loop goes on (agents.py:L597-605); calls sharing an id run once, the last one (L1374-1380)"),
        "text-call": Cited(PIN.at("smolagents/models.py", "L583-594, L400-415"), PIN.at("smolagents/utils.py", "L166-186"), text="no tool_calls: the text's JSON blob with a 'name' key is read as one tool call, which runs as above"),
        "no-tool-call": Cited(PIN.at("smolagents/agents.py", "L1327-1331"), text="no tool_calls and no text (assert) or text without a JSON tool call (ValueError): AgentParsingError, caught as the step's error (L597-600) and sent back as a user message 'Error: ... Now let's retry' (memory.py:L137-148); the loop goes on: text is never the answer"),
        "tool-error": Cited(PIN.at("smolagents/agents.py", "L1453-1481, L1336-1352"), PIN.at("smolagents/tools.py", "L1361-1412"), text="a call that does not validate (unknown or blank name, a key the tool lacks, a missing required key) raises AgentToolCallError / AgentToolExecutionError, and final_answer beside other calls raises AgentExecutionError: the step's error, sent back as a user message; no result of that step is sent (memory_step.tool_calls and observations are set only after every call returned, L1436-1442); the loop goes on"),
        "final-answer": Cited(PIN.at("smolagents/agents.py", "L1336-1358, L578-592"), text="final_answer, alone and validated, is the answer: the run returns its argument (default_tools.py:L83-90)"),
        "client-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964"), text="the client OpenAIModel builds with defaults (models.py:L1697-1705) retries up to 2 times on 408/409/429/>=500 and connection errors"),
        "rate-limit-retry": Cited(PIN.at("smolagents/models.py", "L38-41, L1174-1184, L1194-1202"), PIN.at("smolagents/utils.py", "L551-600"), text="after the client gave up, the model call is tried again, 3 attempts in all (each with the client's own retries), when the error's text reads as a rate limit (status 429 or kind rate_limit, see _rate_limited), after a wait of 60 s doubled with jitter"),
        "bedrock-model-unusable": Cited(PIN.at("smolagents/models.py", "L1968-2007, L539-542, L2039, L2054"), PIN.at("smolagents/agents.py", "L1324-1325, L594-596"), text="on Bedrock (AmazonBedrockModel) the first step's model call raises: botocore rejects the `tools` and `tool_choice` parameters smolagents passes to `converse` (ParamValidationError, no request made), and a response would fail on the missing `tool_calls` key; AgentGenerationError, out of run (observed, smolagents 1.26.0 with boto3 1.44.8)"),
        "generation-error": Cited(PIN.at("smolagents/agents.py", "L1324-1325, L594-596"), text="the model call raised (after the retries): AgentGenerationError, re-raised out of run"),
        "max-steps": Cited(PIN.at("smolagents/agents.py", "L545, L606-608, L625-637, L810-853"), text="the 20th step did not end the run: provide_final_answer sends the memory again with another system prompt and a last user message, without tools (so without tool_choice), the step's results or error in it"),
        "max-steps-answer": Cited(PIN.at("smolagents/agents.py", "L625-637, L848-853"), text="the reply to that request is the output, whatever it carries (an exception after the retries becomes its text); AgentMaxStepsError is recorded: RunResult.state 'max_steps_error' (L523-524)"),
    },
    unreachable={"final-answer": "no sequence of the catalogue calls final_answer, smolagents' own tool (the "
                                 "sequences' tools are the recorded loops'); tests/ports/test_smolagents.py pins it"},
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    if state.dialect == "bedrock-converse":
        return Stop("api_error", ok=False, rule="bedrock-model-unusable")
    memo = state.memo
    final = bool(memo.get("final"))
    err = turn.error
    if err is not None:
        if _client_retries(err) and memo.get("client", 0) < CLIENT_RETRIES:
            memo["client"] = memo.get("client", 0) + 1
            return Resend("client-retry")
        memo["client"] = 0
        if _rate_limited(err) and memo.get("attempt", 1) < RATE_LIMIT_ATTEMPTS:
            memo["attempt"] = memo.get("attempt", 1) + 1
            return Resend("rate-limit-retry")
        if final:
            return Stop("max_steps_error", ok=False, rule="max-steps-answer")
        return Stop("api_error", ok=False, rule="generation-error")
    memo["client"], memo["attempt"] = 0, 1
    if final:
        return Stop("max_steps_error", ok=False, rule="max-steps-answer")
    step = memo.get("step", 1)
    memo["step"] = step + 1
    decision = _step(turn)
    if decision.action == "stop" or step < MAX_STEPS:
        return decision
    memo["final"] = True
    return Remind("max-steps", message=FINAL_REQUEST, run=decision.run, failed=decision.failed,
                  changes=RequestChanges(tool_choice="auto"))
