"""learn-claude-code s01 (Anthropic): loop while stop_reason == "tool_use", else return; no cap.

Pin: shareAI-lab/learn-claude-code @ 0f691a092cb7dfcb9b51db5e72d99866f6d8588d,
agents/s01_agent_loop.py (3,747 characters; line numbers counted on a local copy of that stored
file), licence MIT (repository LICENSE).
Transport retries: the loop builds `Anthropic(...)` with defaults (L38-44); read in
anthropic==2.14.0 (PyPI wheel, MIT): anthropic/_constants.py L11 `DEFAULT_MAX_RETRIES = 2`,
anthropic/_base_client.py L1274-1345 (the retry loop), L939-972 `_should_retry` (408, 409, 429, >=500) and L974-997, L1458-1470
(timeouts and connection errors are retried). The repository's requirements do not pin a version;
only 2.14.0 was read.

What the port models (one step = one HTTP request):

* The only test is L83 `if response.stop_reason != "tool_use": return`, made on the Anthropic field,
  never on the content. For an Anthropic raw string the port tests `finish_raw == "tool_use"`.
  A sequence of another dialect carries raw strings this loop could never receive; there the port
  stands in the stop_reason the Messages API would have sent (ASSUMPTION, not from the source):
  openai-chat (or no/unknown raw string): `tool_use` exactly when the canonical finish is
  `tool_calls` (so `stop` with calls stays `end_turn` with calls); gemini and openai-responses,
  whose finish vocabularies have no tool value: `tool_use` when the finish is `stop` and the turn
  carries calls (a `length` or `content_filter` turn stands for `max_tokens`/`refusal`).
* On `tool_use`, every `tool_use` block is run with `block.input["command"]` (L86-94): the bench's
  tool calls stand in for s01's one tool, bash. The loop has no error-result path (run_bash returns
  its own error strings as output), so all calls count as run. AMBIGUOUS: a block whose input lacks
  "command" would raise KeyError at L89; the Messages API delivers `input` already parsed, so the
  bench's raw argument strings are not checked here.
* `tool_use` with no tool_use blocks: L94 appends a user message whose content is `[]`. The bench
  sees only a Continue with nothing run; the next real request would most likely be rejected by the
  API (an empty user content list, a 400), which the bench cannot observe.
* No cap (`while True`, L75) and no try/except: an error propagates out of agent_loop and out of the
  REPL (`__main__` guards only `input()`), after the SDK's own 2 retries where they apply. The call is
  not streamed, so a body cut mid-read is a connection error to the SDK and is retried too.
"""

from __future__ import annotations

from bench import (
    ALL,
    TABLES,
    Cited,
    Continue,
    Decision,
    MutationNote,
    Resend,
    Source,
    State,
    Stop,
    Turn,
    TurnError,
    predicate,
)

PIN = Source("shareAI-lab/learn-claude-code", ref="0f691a092cb7dfcb9b51db5e72d99866f6d8588d")
FILE = PIN.file("agents/s01_agent_loop.py")
ANTHROPIC = Source(release="anthropic==2.14.0")
SDK_RETRIES = 2  # anthropic/_constants.py L11

_RETRIED_KINDS = ("timeout", "connection_refused", "connection_reset", "stream_cut", "stream_error")
"""Errors without a status the client retries (the error kinds of a timeout or a transport failure)."""


_EMPTY_USER = (
    "Not visible to the server. Turn {turn} is tool_use with no tool_use block: s01 appends the assistant "
    "content and a user message whose content is [] (L85-94), and asks again: the port's continue with nothing "
    "run (tool-use-no-blocks). The server reduces an Anthropic request to its items, and an empty content list "
    "gives none (bench/wires/anthropic/read.py, conversation), so the next request's echo follows the previous assistant "
    "message directly and is merged with it; an echo that adds neither calls nor text 'cannot be told from a "
    "resend there, and counts as one' (observe.py's docstring). Driven once on the pinned file "
    "(stopbench conform, the learn_claude_code_s01 driver): the requests at step {step} on carry nothing new, "
    "observed as resends, one request per turn as the port says."
)
_NO_TOOL_STOP = (
    "A translation, not a decision: a {dialect} turn whose finish is {raw} carries calls, and the Messages API "
    "has no such turn. The port stands in stop_reason tool_use for it (ASSUMPTION in this file's docstring: "
    "the model called tools); the replay server sends the canonical finish's Anthropic string, end_turn "
    "(bench/serve/render.py finish_for: dialects.default_raw('anthropic', 'stop')), and on end_turn s01 "
    "returns without running the calls (L83-84), as the port does for an Anthropic end_turn. Driven once on "
    "the pinned file (stopbench conform, the learn_claude_code_s01 driver): observed stop at step 1."
)
CONFORMANCE_EXPLAINED = {
    "chat-dropped-calls-x3": _EMPTY_USER.format(turn=6, step=8),
    "chat-dropped-calls-x3-remind-recovers": _EMPTY_USER.format(turn=6, step=8),
    **{sid: _NO_TOOL_STOP.format(dialect="Gemini", raw="STOP") for sid in (
        "gemini-function-call-stop", "gemini-stop-empty-after-call", "gemini-too-many-tool-calls",
        "rec-gemini-partial-args-stop", "rec-mixed-agents-tool-calls-run1")},
    **{sid: _NO_TOOL_STOP.format(dialect="Responses", raw="completed") for sid in (
        "rec-responses-function-call-stream", "responses-function-call-rounds", "responses-tool-args-python-dict")},
}
"""Differences between this port and the original driven against the replay server (stopbench conform,
conformance/drivers/learn_claude_code_driver.py), each with why the server shows it."""

def _tool_use(turn: Turn) -> bool:
    """Whether the Messages API's stop_reason for this turn is (or would be) "tool_use"."""
    raw = turn.finish_raw
    if raw is not None and raw in TABLES["anthropic"]:
        return raw == "tool_use"
    if turn.end_turn is not None or (raw is not None and (raw in TABLES["gemini"] or raw in TABLES["openai-responses"])):
        return turn.finish == "stop" and bool(turn.tool_calls)
    return turn.finish == "tool_calls"


def _sdk_retries(err: TurnError) -> bool:
    """Whether the Anthropic client retries this error (non-streamed request)."""
    if err.status is not None:
        return err.status in (408, 409, 429) or err.status >= 500
    # no status: a timeout, a connection that failed or broke (not streamed: a cut while reading the
    # body is an httpx error inside send() -> APIConnectionError), or an error the server streams
    return err.kind in _RETRIED_KINDS


MUTATION_NOTES = (
    MutationNote.default_below('memo.get("sdk", 0) < SDK_RETRIES'),
    MutationNote(
        "_EMPTY_USER.format(turn=6, step=8)",
        "text of a CONFORMANCE_EXPLAINED entry, read by the conformance report only: no replay reads it",
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source=Cited(FILE.at("L74-94", detail="agent_loop")),
    max_steps=None,
    reasons=["return", "api_error"],
    rules={
        "return": Cited(FILE.at("L80-84"), text='the assistant content is appended, then `if response.stop_reason != "tool_use": return` (end_turn, max_tokens, stop_sequence, refusal, pause_turn, anything else; tool_use blocks of such a turn are never run)'),
        "tool-use": Cited(FILE.at("L85-94"), text='stop_reason is tool_use: run every tool_use block with bash (`block.input["command"]`), append one user message with the list of tool_result blocks, loop (`while True`, L75: no cap)'),
        "tool-use-no-blocks": Cited(FILE.at("L85-94"), text='stop_reason is tool_use but the content has no tool_use block: `results` stays [] and `{"role": "user", "content": []}` is appended; the loop asks again (the real API would most likely answer that request with a 400, which the bench cannot see)'),
        "sdk-retry": Cited(ANTHROPIC.at("anthropic/_constants.py", "L11"), ANTHROPIC.at("anthropic/_base_client.py", "L1274-1345, L939-997, L1458-1470"), text="the default client (s01 L38-44) retries a request up to 2 times on 408/409/429/>=500, timeouts and connection errors"),
        "raise": Cited(FILE.at("L74-79, L97-106"), text="no try/except around client.messages.create and none around agent_loop(history) in __main__ (only input() is guarded): the exception ends the program"),
    },
    explained=CONFORMANCE_EXPLAINED,
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
    if not _tool_use(turn):
        return Stop("return", ok=True, rule="return")
    if not turn.tool_calls:
        return Continue("tool-use-no-blocks", run=())
    return Continue("tool-use", run=ALL)
