"""LangChain v1 `create_agent` (LangGraph underneath): run the parsed tool calls, stop on a message without any.

Pin: langchain-ai/langchain, PyPI `langchain==1.5.0` (langchain/agents/factory.py), with
`langchain-openai==1.7.4` (langchain_openai/chat_models/base.py), `langchain-anthropic==1.7.10`
(langchain_anthropic/chat_models.py), and what they resolve to: `langgraph==1.2.24`
(langgraph/pregel/main.py, langgraph/pregel/_loop.py), `langgraph-prebuilt==1.1.3`
(langgraph/prebuilt/tool_node.py), `langchain-core==1.8.3`
(langchain_core/output_parsers/openai_tools.py), `openai==3.57.0`, `anthropic==2.14.0`. Licences
MIT (LangChain, LangGraph), Apache-2.0 (openai, anthropic). All read from the installed wheels.

Configuration modelled (the defaults, said once here): `create_agent(model, tools)` with no
middleware, no `response_format`, no checkpointer, no interrupts, called as
`agent.invoke({"messages": [...]})` (not streamed: the chat model's `invoke`, a non-streamed
request); the model is `ChatOpenAI(model, base_url, api_key)` (Chat Completions; with
`use_responses_api=True` for openai-responses turns) or `ChatAnthropic(model, base_url, api_key)`,
nothing else set, so the provider client's own retries apply. Gemini turns are read as a
Gemini model behind an OpenAI-compatible endpoint on `ChatOpenAI` (ChatGoogleGenerativeAI is
another package, not read): ASSUMPTION, stated here. Bedrock turns are read by `ChatBedrockConverse`
(PyPI `langchain-aws==1.9.1`, langchain_aws/chat_models/bedrock_converse.py, MIT; read from the wheel),
its Bedrock chat model: `converse` (non-streamed, L1453-1458) with a boto3 client whose botocore Config
sets no retries unless `max_retries` is given (L641-644, L1076-1093), so botocore 1.44.8's standard
retry mode applies (`bedrock-retry`); a toolUse block's `input` object becomes the tool call's args
(`_extract_tool_calls` L3814-3823), as on Anthropic; `stopReason` goes to response_metadata only
(`_parse_response` L2827-2858, `_extract_response_metadata` L2677-2683), never read by the agent.

What the loop reads: only the model's message. The router after the model node
(factory.py L1991-2042) sends the AIMessage's parsed `tool_calls` to the ToolNode and ends the
run when there are none; no finish reason, `stop_reason`, refusal or empty text is consulted
anywhere on that path (ChatOpenAI keeps `finish_reason` in generation_info only, base.py
L2125-2136; ChatAnthropic keeps `stop_reason` in llm_output, chat_models.py L2557-2573). So a
`length` turn with calls runs the calls that parse, `pause_turn` and dropped calls end the run
as a success, and a refusal is the final message.

Cap: create_agent compiles the graph with `recursion_limit` 9,999 super-steps (factory.py
L1900-1902; LangGraph's own default is 10,007, _internal/_config.py L42-44). The model node and
the tool node each take one super-step, so the 5,000th model call is the last (its tools would
be super-step 10,000: `self.step > self.stop`, _loop.py L666, L1923): GraphRecursionError
(pregel/main.py L3118-3127), raised out of invoke. Measured with a fake model at limits 5, 6, 7
(3, 3, 4 model calls: ceil(limit / 2)). The bench's safety cap (200 requests) comes first.
"""

from __future__ import annotations

import json

from bench import (
    ALL,
    Cap,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Note,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    predicate,
)

PIN = Source(release="PyPI langchain==1.5.0")
OAI = Source(release="PyPI langchain-openai==1.7.4")
ANT = Source(release="PyPI langchain-anthropic==1.7.10")
AWS = Source(release="PyPI langchain-aws==1.9.1")
BOTOCORE = Source(release="PyPI botocore==1.44.8")
CORE = Source(release="PyPI langchain-core==1.8.3")
LG = Source(release="PyPI langgraph==1.2.24")
PRE = Source(release="PyPI langgraph-prebuilt==1.1.3")
OPENAI = Source(release="openai==3.57.0")
ANTHROPIC = Source(release="anthropic==2.14.0")
MODEL_CALLS = 5000  # ceil(9_999 / 2): factory.py L1902, _loop.py L666, L1923
CLIENT_RETRIES = 2  # openai/_constants.py L8 DEFAULT_MAX_RETRIES; anthropic/_constants.py DEFAULT_MAX_RETRIES
_RETRY_STATUS = (408, 409, 429)  # openai/_base_client.py _should_retry; anthropic/_base_client.py the same
# botocore standard mode, retries/standard.py L469 (transient statuses), L510-526 and L549 (throttling), 3 attempts (L36)
_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)

CONFORMANCE_EXPLAINED = {
    "chat-tool-call-blank-name-x3": (
        "Every call of this sequence has a blank name, so the driver registers no stub tool at all "
        "(bench/serve/tools.py tool_specs skips blank names), and create_agent without tools builds no "
        "ToolNode and no model->tools edge (factory.py L1141-1150, L1747): the graph ends after the first "
        "model call (observed: one request, final ''). With a tool registered, as in any real agent, the "
        "original does what the port says: driven by hand against the same sequence with one stub tool "
        "`search`, it answered each blank call 'Error:  is not a valid tool, try one of [search].' "
        "(tool_node.py L122-125) three times and ended on the fourth turn's text."),
}
"""Differences between this port and langchain 1.5.0 run by `stopbench conform langchain` that come from
how the bench drives it, not from the loop's decisions (reports/conformance.md)."""

def _wire(state: State) -> str:
    """Which chat model reads the turn: the one the sequence's API is served to (the driver's wiring).

    openai-responses -> ChatOpenAI(use_responses_api=True); anthropic -> ChatAnthropic; bedrock-converse
    -> ChatBedrockConverse; openai-chat and gemini -> ChatOpenAI on Chat Completions (the assumption
    stated in the module docstring).
    """
    if state.dialect in ("openai-responses", "anthropic", "bedrock-converse"):
        return state.dialect
    return "openai-chat"


def _client_retries(err: TurnError, wire: str) -> bool:
    """Whether the provider client retries this error (a non-streamed request)."""
    if err.status is None:
        # served as a broken body (a connection error) or as HTTP 500 (bench/serve/render.py): both retried
        return True
    if wire == "bedrock-converse":
        return err.status in _BOTOCORE_RETRY_STATUS
    return err.status in _RETRY_STATUS or err.status >= 500


def _parse(arguments: str, wire: str) -> str:
    """What the chat model makes of one call's arguments: 'call', 'empty', 'invalid' or 'raise'.

    'empty' is a call whose arguments become {}: it runs, and binds only a tool without required
    parameters. AMBIGUOUS, the port cannot see the tool's schema: like the other ports it takes
    empty arguments as a tool without parameters ('call') and {} from anything else as a tool that
    has some (failed), the convention of bench/serve/tools.py tool_specs.
    Chat (core openai_tools.py L58-78, base.py L241-249): empty -> {}; unparsable -> an
    InvalidToolCall; parsed -> `args = value or {}`, and a truthy value that is not an object fails
    AIMessage validation (tool_calls[i].args must be a dict): a pydantic ValidationError out of the
    model call. Responses (base.py L5286-5307): `json.loads(arguments, strict=False)` with no empty
    special case, so "" is invalid. Anthropic (chat_models.py L2581-2587): tool_use input is an
    object on the wire; arguments that are not one are served as {} (bench/serve/render.py
    tool_input). Bedrock (langchain-aws bedrock_converse.py L3814-3823): toolUse `input` is an
    object too, served the same way.
    """
    if not arguments.strip() and wire != "openai-responses":
        return "call"
    try:
        value = json.loads(arguments, strict=False)
    except ValueError:
        return "empty" if wire in _OBJECT_INPUT else "invalid"
    if isinstance(value, dict):
        return "call"
    if wire in _OBJECT_INPUT or (wire == "openai-chat" and not value):
        return "empty"
    return "raise"


_OBJECT_INPUT = ("anthropic", "bedrock-converse")
"""The wires whose JSON carries a tool call's input as an object ({} for arguments that are not one)."""

MUTATION_NOTES = (
    MutationNote(
        "_BOTOCORE_RETRY_STATUS = (429, 500, 502, 503, 504)",
        "502 and 504: Bedrock names no exception with either status (service-2.json: InternalServerException 500, ServiceUnavailableException 503), only a proxy in front of it sends them, and no sequence does; tests/ports/test_bedrock_paths.py pins both",
        ("502 -> 503", "502 -> 501", "504 -> 505", "504 -> 503"),
        equivalent=False,
    ),
    MutationNote(
        "MODEL_CALLS = 5000",
        "the cap (5,000 model calls) lies past the bench's safety cap of 200 requests, so no catalogue replay "
        "reaches it; tests/ports/test_langchain.py pins it with a longer safety cap",
        equivalent=False,
    ),
    MutationNote.default_below('memo.get("retries", 0) < CLIENT_RETRIES'),
    MutationNote(
        'if wire in _OBJECT_INPUT or (wire == "openai-chat" and not value):',
        "only Chat arguments that are JSON null, [], 0 or false (made {} by `value or {}`) tell the second "
        "test apart; no sequence sends them",
        ("== -> !=",),
        equivalent=False,
    ),
    MutationNote(
        'if err is not None and not (wire == "openai-responses"',
        "an error on a Response whose status is failed: the server renders a failed Response from finish_raw "
        "alone, and no sequence gives such a turn an error as well",
        ("== -> !=",),
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(PIN.at("langchain/agents/factory.py", "L1523-1552, L1991-2042, L679-710", detail="create_agent"), OAI.at("langchain_openai/chat_models/base.py", "L1944-2016, L2066-2161"), ANT.at("langchain_anthropic/chat_models.py", "L2530-2621"), AWS.at("langchain_aws/chat_models/bedrock_converse.py", "L1388-1470, L2827-2858"), Note(str(LG)), PRE.at("langgraph/prebuilt/tool_node.py")),
    max_steps=MODEL_CALLS,
    cap=Cap(reason="GraphRecursionError", ok=False, rule="recursion-limit"),
    cap_note="recursion_limit 9,999 super-steps set by create_agent = 5,000 model calls -> GraphRecursionError, ok=False",
    reasons=["final", "GraphRecursionError", "api_error", "exception"],
    rules={
        "tools": Cited(PIN.at("langchain/agents/factory.py", "L1991-2032"), text="the AIMessage has parsed tool_calls not yet answered: each is sent to the ToolNode (one Send per call) and the graph goes back to the model; PyPI langgraph-prebuilt==1.1.3 langgraph/prebuilt/tool_node.py:L1316-1330, L405-413 - a name that is no tool (here: blank) answers 'Error: ... is not a valid tool', arguments the tool's schema rejects answer the ToolInvocationError text: those calls are failed; calls whose JSON did not parse are InvalidToolCalls, never run, and answered by the model node's repair before the next request (factory.py L679-710, L1525): failed"),
        "final": Cited(PIN.at("langchain/agents/factory.py", "L2017-2019"), text="the AIMessage has no parsed tool_calls: the run ends (`end_destination`) and invoke returns the messages; finish_reason / stop_reason / refusal are not read (PyPI langchain-openai==1.7.4 base.py:L2125-2136; PyPI langchain-anthropic==1.7.10 chat_models.py:L2557-2573); InvalidToolCalls of this message are never answered (the repair runs only in the next model node)"),
        "client-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964, L1182-1218"), ANTHROPIC.at("anthropic/_constants.py"), ANTHROPIC.at("anthropic/_base_client.py", detail="_should_retry"), text="the client ChatOpenAI / ChatAnthropic build with defaults retries up to 2 times on 408/409/429/>=500 and connection errors (PyPI langchain-openai==1.7.4 base.py:L913, L1474-1475 passes max_retries only when set; PyPI langchain-anthropic==1.7.10 chat_models.py:L1417 max_retries=2); create_agent adds no retry of its own (no RetryPolicy on the model node)"),
        "bedrock-retry": Cited(BOTOCORE.at("botocore/retries/standard.py", "L36, L469, L510-526, L549-565"), BOTOCORE.at("botocore/configprovider.py", "L157"), AWS.at("langchain_aws/chat_models/bedrock_converse.py", "L641-644, L1076-1093"), text="ChatBedrockConverse's boto3 client sets no retries of its own (max_retries None), so botocore's default standard mode retries a throttling (429) or transient (500/502/503/504, connection) error up to 2 times; a 408 ModelTimeoutException, a 424 or a 400 is raised at once"),
        "raise": Cited(OAI.at("langchain_openai/chat_models/base.py", "L1997-2001, L684-746"), ANT.at("langchain_anthropic/chat_models.py", "L2610-2615"), AWS.at("langchain_aws/chat_models/bedrock_converse.py", "L1456-1457, L2425-2450"), text="the provider's error (after the client's retries) is re-raised as a LangChain error class (on Bedrock: `_handle_bedrock_error`, the ClientError or a context-overflow error); nothing in the graph catches it: out of invoke"),
        "args-not-object": Cited(CORE.at("langchain_core/output_parsers/openai_tools.py", "L58-78"), text="parsed arguments become `function_args or {}`; a truthy JSON value that is not an object (a string, a list) makes the AIMessage fail validation (tool_calls.N.args must be a dict): a pydantic ValidationError out of the model call, not retried (it is raised after the HTTP response)"),
        "responses-error": Cited(OAI.at("langchain_openai/chat_models/base.py", "L5195-5203"), text="a Response with `error` set (status failed) raises ValueError(response.error) after the client returned it: no retry, out of invoke"),
        "recursion-limit": Cited(PIN.at("langchain/agents/factory.py", "L1900-1902"), LG.at("langgraph/pregel/_loop.py", "L666, L1923"), LG.at("langgraph/pregel/main.py", "L3118-3127"), text="the 5,000th model call is the last super-step the limit allows when it asks for tools: GraphRecursionError, raised"),
    },
    unreachable={"recursion-limit": "5,000 model calls: past the bench's safety cap of 200 requests"},
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    wire = _wire(state)
    err = turn.error
    if err is not None and not (wire == "openai-responses" and (turn.finish_raw or "") == "failed"):
        if _client_retries(err, wire) and memo.get("retries", 0) < CLIENT_RETRIES:
            memo["retries"] = memo.get("retries", 0) + 1
            return Resend("bedrock-retry" if wire == "bedrock-converse" else "client-retry")
        memo["retries"] = 0
        return Stop("api_error", ok=False, rule="raise")
    memo["retries"] = 0
    if wire == "openai-responses" and (turn.finish_raw or "") == "failed":
        return Stop("exception", ok=False, rule="responses-error")
    kinds = [_parse(c.arguments, wire) for c in turn.tool_calls]
    if "raise" in kinds:
        return Stop("exception", ok=False, rule="args-not-object")
    calls = [i for i, k in enumerate(kinds) if k != "invalid"]
    if not calls:
        return Stop("final", ok=True, rule="final")
    run = tuple(i for i in calls if kinds[i] == "call" and turn.tool_calls[i].name)
    failed = tuple(i for i in range(len(kinds)) if i not in run)
    return Continue("tools", run=ALL if not failed else run, failed=failed)
