"""CoreCoder's Agent.chat: no tool calls returns the text; 50 tool rounds return a fixed string.

Pin: he-yufeng/CoreCoder v0.4.0, read from the PyPI wheel `corecoder==0.4.0`
(corecoder-0.4.0-py3-none-any.whl: corecoder/agent.py, corecoder/llm.py), licence MIT.
The transport retries under it are those of the `openai` client CoreCoder builds with defaults
(llm.py L93, `OpenAI(api_key=..., base_url=...)`): read in openai==3.57.0 (PyPI wheel,
Apache-2.0), openai/_constants.py L8 `DEFAULT_MAX_RETRIES = 2`, openai/_base_client.py
L922-964 `_should_retry` (408, 409, 429, >=500) and L1182-1218 (timeouts and connection errors
are retried). CoreCoder pins only `openai>=1.0`; that retry policy is the same across 1.x-3.x as
far as I know, but only 3.57.0 was read.

What the port models (one step = one HTTP request):

* `finish`/`finish_raw` are never read: llm.py L110-191 accumulates text and tool-call deltas and
  ignores `finish_reason` entirely, so every decision is made from `tool_calls` (and `error`).
* Tool calls of a turn: each call is run, except that cut (non-empty, unparsable) arguments and
  JSON that is not an object are answered with an error string instead (failed): llm.py L177-180
  turns unparsable JSON into `{}`, and agent.py L108-111 returns "Error: bad arguments ..." when
  `bind(**arguments)` fails. AMBIGUOUS: whether `{}` binds depends on the tool's signature, which
  the port cannot see; it infers it from what the model sent (see `_args_ok`): empty arguments or
  a literal `{}` -> a tool without required parameters -> run; cut JSON -> the model meant
  arguments -> failed (every CoreCoder built-in tool has a required parameter). A call with an
  empty name gets "Error: unknown tool" (agent.py L103-105) and is counted as failed.
* Errors in place of a response (`turn.error`): classified by `status` and, when there is none, by
  words in `type` (see `_kind`). A request-time error is first retried by the openai client (2
  retries on 408/409/429/5xx/timeout/connection), then by `_call_with_retry` (llm.py L193-209:
  3 attempts for RateLimitError, APITimeoutError, APIConnectionError and 5xx), and a 400
  (BadRequestError) makes `chat` try once more without `stream_options` (llm.py L130-134), with a
  fresh `_call_with_retry`. An error while iterating the stream (llm.py L141, outside any retry)
  propagates at once. Retries do not count as rounds (the round loop is agent.py L54).
* The 50-round cap is counted in `state.memo` (rounds, not requests), so `max_steps` is left unset:
  the bench's step cap would also count the retries, which CoreCoder does not.
"""

from __future__ import annotations

import json

from bench import ALL, Cited, Continue, Decision, MutationNote, Resend, Source, State, Stop, Turn, TurnError, predicate

PIN = Source("he-yufeng/CoreCoder", ref="v0.4.0", release="PyPI corecoder==0.4.0")
OPENAI = Source(release="openai==3.57.0")
MAX_ROUNDS = 50  # agent.py L28 `max_rounds: int = 50`
SDK_RETRIES = 2  # openai/_constants.py L8
CALL_ATTEMPTS = 3  # llm.py L193 `max_retries: int = 3`

CONFORMANCE_EXPLAINED = {
    "chat-network-flaky-after-tools": (
        "The server cannot make a client time out. Turn 2 is a timeout raised by the client itself "
        "(openai's APITimeoutError): the port has the client retry it (openai/_base_client.py "
        "L1182-1218). The server answers a turn whose error has no status and names no broken "
        "connection with the output streamed and then an in-stream error event (bench/serve/render.py "
        "error_mode L80-99), which the SDK raises while CoreCoder iterates the stream (openai/_streaming.py "
        "L79-90, llm.py L141), outside every retry: a stream_error stop at step 2. A real timeout would "
        "need the server to stay silent past the client's timeout, 600 s by default "
        "(openai/_constants.py L7; llm.py L93 sets none). openai_agents and hermes, on the same sequence, "
        "agree with their ports."),
}
"""Differences between this port and corecoder 0.4.0 run by `stopbench conform corecoder` that come
from what the replay server can serve or see, not from the loop's decisions (reports/conformance.md)."""

_STREAM_KINDS = ("connection_reset", "stream_cut", "stream_error")
"""Errors met while llm.py L141 iterates the stream, after create() returned: outside every retry."""


def _kind(err: TurnError) -> str:
    """`stream`, `status` (an HTTP status at request time), `timeout`, `connection` or `other`,
    read from the error's kind and status only.

    A stream kind wins over a status: an error chunk inside a 200 stream may carry a code
    (OpenRouter's `{"error": {"code": 400}}` after the finish, edge case H7), and the SDK raises it
    while CoreCoder iterates the stream, outside every retry. A body cut after the headers
    (``connection_reset``: httpx's "incomplete chunked read", raised while L141 iterates) is a
    stream error too; a failure to connect at all (``connection_refused``) and a client timeout are
    raised by create() and retried there (openai/_base_client.py L1182-1218).
    """
    if err.kind in _STREAM_KINDS:
        return "stream"
    if err.status is not None:
        return "status"
    if err.kind == "timeout":
        return "timeout"
    if err.kind == "connection_refused":
        return "connection"
    return "other"


def _sdk_retries(err: TurnError, kind: str) -> bool:
    if kind == "status":
        s = err.status or 0
        return s in (408, 409, 429) or s >= 500
    return kind in ("timeout", "connection")


def _args_ok(arguments: str) -> bool:
    """Whether `_exec_tool` would get past `bind(**arguments)` (agent.py L108-111).

    Unparsable arguments become `{}` (llm.py L177-180), exactly like a literal `{}`; whether `{}`
    binds depends on the tool's signature, which the port cannot see. Its inference: an empty
    argument string (`""`, `null` in the stream) means a tool without parameters, so `{}` binds and
    the tool runs; non-empty unparsable text (cut JSON) means the model meant arguments, so `{}`
    misses a required parameter and the call fails. A JSON value that is not an object fails
    `bind(**value)` with TypeError (caught at L110: failed).
    """
    if not arguments.strip():
        return True
    try:
        value = json.loads(arguments)
    except ValueError:
        return False
    return isinstance(value, dict)


def _split_calls(turn: Turn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    run: list[int] = []
    failed: list[int] = []
    for i, call in enumerate(turn.tool_calls):
        (run if call.name and _args_ok(call.arguments) else failed).append(i)
    return tuple(run), tuple(failed)


def _on_error(err: TurnError, memo: dict[str, int]) -> Decision:
    kind = _kind(err)
    if kind == "stream":
        memo.update(sdk=0, attempt=0, phase=0)
        return Stop("stream_error", ok=False, rule="stream-error")
    if _sdk_retries(err, kind) and memo.get("sdk", 0) < SDK_RETRIES:
        memo["sdk"] = memo.get("sdk", 0) + 1
        return Resend("sdk-retry")
    memo["sdk"] = 0  # create() raised: the next request, if any, is a new create() call
    status = err.status or 0
    retried_here = kind in ("timeout", "connection") or status == 429 or status >= 500
    if retried_here and memo.get("attempt", 0) < CALL_ATTEMPTS - 1:
        memo["attempt"] = memo.get("attempt", 0) + 1
        return Resend("call-retry")
    if status == 400 and memo.get("phase", 0) == 0:
        memo.update(phase=1, attempt=0)
        return Resend("bad-request-fallback")
    memo.update(sdk=0, attempt=0, phase=0)
    return Stop("api_error", ok=False, rule="raise")


MUTATION_NOTES = (
    MutationNote(
        "status = err.status or 0",
        "only an error without a status gets the fallback, and 0, 1 and -1 fail every later status test alike "
        "(== 400, == 429, >= 500)",
    ),
    MutationNote(
        "s = err.status or 0",
        "only an error without a status gets the fallback, and 0, 1 and -1 fail `in (408, 409, 429)` "
        "and `>= 500` alike",
    ),
    MutationNote.default_below('memo.get("sdk", 0) < SDK_RETRIES'),
    MutationNote.default_below('memo.get("attempt", 0) < CALL_ATTEMPTS - 1'),
    MutationNote(
        "memo.update(phase=1, attempt=0)",
        "any non-zero phase means the fallback was used: only `phase == 0` is tested",
        ("1 -> 2",),
    ),
    MutationNote(
        "memo.update(phase=1, attempt=0)",
        "the call retries left after the 400 fallback: only a retryable error right after a 400 tells it "
        "apart; no sequence has one",
        ("0 -> 1", "0 -> -1"),
        equivalent=False,
    ),
    MutationNote.reset_after_success("memo.update(sdk=0, attempt=0, phase=0)", next="if not turn.tool_calls:"),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(PIN.at("corecoder/agent.py", "L49-99", detail="Agent.chat"), PIN.at("corecoder/llm.py", "L110-209", detail="LLM.chat")),
    max_steps=None,
    cap_note="cap 50 tool rounds (retried requests do not count) -> max_rounds, ok=True",
    reasons=["text", "max_rounds", "api_error", "stream_error"],
    rules={
        "no-calls": Cited(PIN.at("corecoder/agent.py", "L61-64"), PIN.at("corecoder/llm.py", "L28, L186-187, L110-191"), text="`if not resp.tool_calls:` append the message and `return resp.content` (the streamed text, '' when none: llm.py L28, L186-187); finish_reason is never read (llm.py L110-191)"),
        "calls": Cited(PIN.at("corecoder/agent.py", "L66-97"), PIN.at("corecoder/llm.py", "L177-180"), PIN.at("corecoder/agent.py", "L108-111"), text="append the assistant message, run the one call (L71-80) or all calls in a thread pool (L81-89, L118-130), append one role 'tool' result each, maybe compress, next round; arguments that are not a JSON object become {} (llm.py L177-180) and fail `bind` -> 'Error: bad arguments' (agent.py L108-111), an unknown/empty name -> 'Error: unknown tool' (L103-105): those calls are failed"),
        "max-rounds": Cited(PIN.at("corecoder/agent.py", "L28, L54, L99"), text='`for _ in range(self.max_rounds)` with max_rounds=50; the 50th tool round runs its tools, then `return "(reached maximum tool-call rounds)"`: a string return, so the caller sees success-shaped text (ok=True per source, though the task is not done)'),
        "sdk-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964, L1182-1218"), text="the default client (llm.py L93) retries a request up to 2 times on 408/409/429/>=500, timeouts and connection errors before raising"),
        "call-retry": Cited(PIN.at("corecoder/llm.py", "L193-209"), text="`_call_with_retry` (3 attempts) re-calls create() after RateLimitError, APITimeoutError, APIConnectionError or an APIError with status >= 500, sleeping 2**attempt s"),
        "bad-request-fallback": Cited(PIN.at("corecoder/llm.py", "L129-134"), text="a BadRequestError (400) from the first `_call_with_retry` makes chat() drop `stream_options` and call `_call_with_retry` again, once"),
        "raise": Cited(PIN.at("corecoder/llm.py", "L198-209, L131-134"), PIN.at("corecoder/agent.py", "L55"), PIN.at("corecoder/cli.py", "L107-111, L234-242"), text="retries exhausted or a non-retried status: the exception propagates out of Agent.chat (agent.py L55 has no try); the CLI prints it (cli.py L107-111, L234-242 catch Exception)"),
        "stream-error": Cited(PIN.at("corecoder/llm.py", "L141-171"), OPENAI.at("openai/_streaming.py", "L79-107"), text="an error raised while iterating the stream (an error event in the stream raises APIError, openai/_streaming.py) is outside `_call_with_retry` (which wraps only create(), L197) and propagates out of Agent.chat at once"),
    },
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    if turn.error is not None:
        return _on_error(turn.error, memo)
    memo.update(sdk=0, attempt=0, phase=0)
    if not turn.tool_calls:
        return Stop("text", ok=True, rule="no-calls")
    rounds = memo.get("rounds", 0) + 1
    memo["rounds"] = rounds
    run, failed = _split_calls(turn)
    if rounds >= MAX_ROUNDS:
        return Stop("max_rounds", ok=True, rule="max-rounds", run=run, failed=failed)
    if not failed:
        return Continue("calls", run=ALL)
    return Continue("calls", run=run, failed=failed)
