"""learn-claude-code s01, OpenAI version: loop while the message carries tool_calls, else return; no cap.

Pin: shareAI-lab/learn-claude-code @ f8671fcbb0314ba40b27c3b0514b5a7faad596a9,
agents/openai_code/s01_agent_loop_openai.py (the only stored version of that file; line numbers
counted on a local copy of it), licence MIT (repository LICENSE). The Anthropic version is pinned at
another commit (0f691a09, see learn_claude_code_s01.py): the two files were not read at one commit.
Transport retries: the file builds `OpenAI(base_url=..., api_key=...)` with defaults (L34-37); read
in openai==3.57.0 (PyPI wheel, Apache-2.0): openai/_constants.py L8 `DEFAULT_MAX_RETRIES = 2`,
openai/_base_client.py L922-964 `_should_retry` (408, 409, 429, >=500) and L1182-1218 (timeouts
and connection errors are retried). No version is pinned by the repository; only 3.57.0 was read.

What the port models (one step = one HTTP request):

* The only test is L129-131 `if not assistant_message.tool_calls: return`: the message body, never
  `finish_reason` (L122 reads `response.choices[0].message` only).
* Tool calls (L132-159): a call is run only when its name is "bash" (L134); the bench's tool names
  stand in for bash (s01 offers no other tool), except a blank name, which cannot be "bash": such a
  call gets no tool message at all (the `if` has no else), so it is dropped and the loop goes on. Arguments that are not valid JSON are answered with
  "Error parsing command arguments" (L153-159): failed. Valid JSON that is not an object makes
  `command_args.get` raise AttributeError (L138), which nothing catches: the program ends there,
  after the earlier calls of the turn. AMBIGUOUS: a JSON object without a non-empty "command" gets
  "Error: No command provided" (L140-141) in the original; the port counts every JSON object as run,
  since the bench's arguments stand in for a bash command (a literal "{}" is not checked).
* No cap (`while True`, L107), no try/except around the request (L109-119) or around
  `agent_loop(history)` in `__main__` (L173): errors end the program after the SDK's own 2 retries
  where they apply. The request is not streamed, so a body cut mid-read is a connection error to the
  SDK and is retried too.
"""

from __future__ import annotations

import json

from bench import ALL, Cited, Continue, Decision, MutationNote, Resend, Source, State, Stop, Turn, TurnError, predicate

PIN = Source("shareAI-lab/learn-claude-code", ref="f8671fcbb0314ba40b27c3b0514b5a7faad596a9")
FILE = PIN.file("agents/openai_code/s01_agent_loop_openai.py")
OPENAI = Source(release="openai==3.57.0")
SDK_RETRIES = 2  # openai/_constants.py L8

_RETRIED_KINDS = ("timeout", "connection_refused", "connection_reset", "stream_cut", "stream_error")
"""Errors without a status the client retries (the error kinds of a timeout or a transport failure)."""


def _sdk_retries(err: TurnError) -> bool:
    """Whether the openai client retries this error (non-streamed request)."""
    if err.status is not None:
        return err.status in (408, 409, 429) or err.status >= 500
    # no status: a timeout, a connection that failed or broke (not streamed: a cut while reading the
    # body is an httpx error inside send() -> APIConnectionError), or an error the server streams
    return err.kind in _RETRIED_KINDS


def _parse(arguments: str) -> str:
    """`object`, `other` (valid JSON, not an object) or `invalid`."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return "invalid"
    return "object" if isinstance(value, dict) else "other"


MUTATION_NOTES = (
    MutationNote.default_below('memo.get("sdk", 0) < SDK_RETRIES'),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(FILE.at("L106-159", detail="agent_loop")),
    max_steps=None,
    reasons=["return", "api_error", "exception"],
    rules={
        "return": Cited(FILE.at("L121-131"), text="the assistant message is appended, then `if not assistant_message.tool_calls: return` (finish_reason is never read)"),
        "calls": Cited(FILE.at("L132-159"), text="for each tool call named bash: json.loads the arguments and run the command, appending a role 'tool' result (L136-152); invalid JSON gets 'Error parsing command arguments' instead (L153-159, failed); loop (`while True`, L107: no cap)"),
        "not-bash": Cited(FILE.at("L133-134"), text='`if tool_call.function.name == "bash":` has no else: a call with another name (here: blank) gets no role \'tool\' message, neither run nor answered (dropped); the other calls of the turn are handled as in rule calls and the loop goes on (`while True`, L107)'),
        "bad-args-crash": Cited(FILE.at("L137-138, L153"), text="arguments that parse to a non-object (list, string, number, null) make `command_args.get` raise AttributeError, which `except json.JSONDecodeError` does not catch; nothing in agent_loop or __main__ (L162-173) catches it either"),
        "sdk-retry": Cited(OPENAI.at("openai/_constants.py", "L8"), OPENAI.at("openai/_base_client.py", "L922-964, L1182-1218"), text="the default client (s01 L34-37) retries a request up to 2 times on 408/409/429/>=500, timeouts and connection errors"),
        "raise": Cited(FILE.at("L109-119, L173"), text="no try/except around client.chat.completions.create or around agent_loop(history): the exception ends the program"),
    },
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    if turn.error is not None:
        if _sdk_retries(turn.error) and memo.get("sdk", 0) < SDK_RETRIES:
            memo["sdk"] = memo.get("sdk", 0) + 1
            return Resend("sdk-retry")
        memo["sdk"] = 0
        return Stop("api_error", ok=False, rule="raise")
    memo["sdk"] = 0
    if not turn.tool_calls:
        return Stop("return", ok=True, rule="return")
    run: list[int] = []
    failed: list[int] = []
    for i, call in enumerate(turn.tool_calls):
        if not call.name:
            continue  # not "bash": no result, the call is dropped (L134)
        kind = _parse(call.arguments)
        if kind == "other":
            return Stop("exception", ok=False, rule="bad-args-crash", run=tuple(run), failed=tuple(failed))
        (run if kind == "object" else failed).append(i)
    if len(run) + len(failed) < len(turn.tool_calls):
        return Continue("not-bash", run=tuple(run), failed=tuple(failed))
    if not failed:
        return Continue("calls", run=ALL)
    return Continue("calls", run=tuple(run), failed=tuple(failed))
