"""stopbench's recommended loop: read the finish and the body; every odd turn gets a bounded remedy.

Constructed by stopbench; not a port. Each rule cites the public evidence (issues, recorded
responses, provider documentation, other loops' code) or the article that motivates it. The rules, in the order they are checked:

 1. error       A turn with an error (turn.error, or an `error` finish: Responses `failed`, Gemini
                MALFORMED_FUNCTION_CALL): resend if transient (408/409/429/5xx when a status is
                given; else overload, timeout, stream cut, malformed call), at most 3 in a row;
                otherwise, or when the resends are used up, stop `model_error`. Never success.
 2. filter      content_filter (OpenAI, Anthropic refusal, Gemini SAFETY, Responses incomplete), or a
                refusal whatever the finish says (chat `message.refusal` beside finish stop):
                stop `content_filter` at once; any calls are failed, not run. Never retried as is.
 3. truncated   length with tool calls: fail every call with an error result ("re-issue it with
                complete arguments"), never run it; after 2 such reminders in a row stop `length`.
    length      length without tool calls: stop `length` (a cut text is not an answer). A `stop`
                whose usage.output_tokens reaches the request's max_tokens is a length turn too
                (a truncation the finish hides).
 4. calls       Tool calls present: run them whatever the finish says (stop, unknown, null).
                Calls whose arguments are not valid JSON are failed, not run (a hidden
                truncation). A steer that arrived meanwhile rides along as a reminder.
    repeat      A loop guard over rounds, each round its calls (names and arguments) and the
                results they gave: when the last rounds are one cycle of 1 to 5 rounds run 3
                times in a row with the same results, and the model starts it a 4th time, its
                calls are failed with a reminder; a call set of that cycle again, with nothing
                run in between, stops `repeated_tool_call`. Progress is new information: other
                arguments, or a result that differs from the cycle's (a poll that moves, a
                retry that succeeds); so finite work whose rounds bring anything new is never
                stopped, and a stuck cycle of p rounds stops within 3p + 2 requests.
 5. paused      No calls, and the provider says the turn is not over (Anthropic pause_turn,
                Responses end_turn false): send it back and ask again, at most 3 times in a row,
                then stop `unfinished_turn`.
 6. dropped     No calls but finish tool_calls, or a tool call left as text in the content:
                remind ("you said tool_calls but sent no call" / "your call came back as text"),
                at most 2 reminders in a row, then stop `dropped_tool_call`.
 7. unknown     No calls and a finish the dialect table does not know (other, tool_call, null):
                stop `unknown_finish`, not success.
 8. steer       No calls, a user message arrived while the model answered: remind with it.
 9. empty       No calls, finish stop, empty content: remind, at most 2 in a row, then stop
                `empty_response`.
10. done        No calls, finish stop, non-empty content: stop `no_tool_calls`, success.
11. cap         50 requests: stop `max_steps`, an error, not an answer.

Reminder and resend budgets count consecutive remedies: a productive turn (tool calls run)
resets them, so a long run with one hiccup per phase is not penalised.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench import ALL, Cap, Cited, Continue, Decision, MutationNote, Note, Remind, Resend, State, Stop, Turn, predicate

SEED2 = "seed 002 (the lesson 「没有工具调用就停」够不够? of the course 从0打造编码Agent, A1 循环 第 3 课)"

MAX_RESENDS = 3
MAX_REMINDERS = 2
MAX_TRUNCATED = 2
MAX_PAUSES = 3
REPEATS = 3
"""Times a cycle of rounds runs with the same results before the guard fails its next start."""
MAX_PERIOD = 5
"""The longest cycle the guard looks for, in rounds (Gemini CLI's looks for cycles of 1 to 5 calls)."""

_TRANSIENT_KINDS = ("rate_limit", "overloaded", "server_error", "timeout", "connection_refused",
                    "connection_reset", "stream_cut", "stream_error")
"""Errors worth a resend when no HTTP status says otherwise: the provider's or the network's
passing trouble, never the request's fault (overflow, invalid, auth, permission, not found,
filter) nor an exhausted quota, which a resend cannot fix."""
_TRANSIENT_RAW = {"MALFORMED_FUNCTION_CALL", "failed"}
_TEXT_CALL = re.compile(r"<tool_call>|</tool_call>|\[TOOL_CALLS\]|<function=|\"name\"\s*:\s*\"[^\"]+\"\s*,\s*\"arguments\"")

NO_CALL = "You answered with finish_reason tool_calls but sent no tool call. Send the tool call again."
TEXT_CALL = "Your tool call arrived as plain text, not as a tool call. Issue it again as a tool call."
EMPTY = "Your reply was empty. Continue the task, or give your final answer."
TRUNCATED = ("Your reply hit the output token limit, so these tool calls were not run: their arguments may "
             "be cut off. Re-issue them with complete arguments.")
REPEATED = ("You have made these tool calls three times over and got the same results each time; they were "
            "not run again. Try something else.")


def _transient(turn: Turn) -> bool:
    err = turn.error
    if err is None:
        return turn.finish_raw in _TRANSIENT_RAW and turn.finish_detail in (None, "server_error",
                                                                            "rate_limit_exceeded")
    if err.status is not None:  # an HTTP status says it all: 4xx other than 408/409/429 is the request's fault
        return err.status in (408, 409, 429) or err.status >= 500
    return err.kind in _TRANSIENT_KINDS


def _bad_json(arguments: str) -> bool:
    try:
        json.loads(arguments or "{}")
    except ValueError:
        return True
    return False


Round = tuple[tuple[tuple[str, str], ...], tuple[str | None, ...]]
"""One tool round as the guard sees it: its calls' (name, arguments), and the results they gave."""


def repeated_cycle(rounds: list[Round], calls: tuple[tuple[str, str], ...]) -> tuple[Round, ...] | None:
    """The cycle `calls` would start a 4th time, or None: the shortest p (1 to MAX_PERIOD) such that the
    last REPEATS * p `rounds` are one block of p rounds REPEATS times over, same calls and same
    results, and `calls` are the calls of that block's first round (what comes next in the cycle)."""
    for p in range(1, MAX_PERIOD + 1):
        window = rounds[-REPEATS * p:]
        if len(window) == REPEATS * p and window[0][0] == calls and all(
                window[i] == window[i % p] for i in range(p, len(window))):
            return tuple(window[:p])
    return None


def _reset(memo: dict[str, Any], *keys: str) -> None:
    for k in keys:
        memo[k] = 0


_LONGER_CYCLE = ("a cycle of 6 rounds repeated with the same results: the guard looks for cycles of 1 to 5 rounds, "
                 "as Gemini CLI's does (of calls); a longer one runs to the cap of 50, and no sequence has one")

MUTATION_NOTES = (
    MutationNote("MAX_PERIOD = 5", _LONGER_CYCLE, ("5 -> 6",), equivalent=False),
    MutationNote("for p in range(1, MAX_PERIOD + 1):", _LONGER_CYCLE, ("1 -> 2",), equivalent=False),
    MutationNote(
        'memo["reminders"] = memo.get("reminders", 0) + 1',
        "the default is read only before the first reset of the count (every tool round resets it): only a "
        "run that spends its reminders before any tool round tells it apart; none does",
        equivalent=False,
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""


@predicate(
    source="constructed: stopbench's recommended loop",
    max_steps=50,
    cap=Cap(reason="max_steps", ok=False, rule="cap"),
    reasons=["no_tool_calls", "max_steps", "length", "content_filter", "dropped_tool_call",
             "model_error", "unknown_finish", "empty_response", "repeated_tool_call", "unfinished_turn"],
    rules={
        "error-resend": Cited(Note("openai/openai-agents-python#3106, langchain-ai/langchain#39039 (a failed response reported as success); drumih/turbo-fieldfare#84; ggml-org/llama.cpp#22072; NousResearch/hermes-agent#83882 (MALFORMED_FUNCTION_CALL: 'fail or resend, not stop successfully'); badlogic/pi-mono@83378aad coding-agent/src/core/agent-session.ts L504-505, L2311-2323 (retry on a transient error, maxRetries 3); he-yufeng/CoreCoder@61fc02c0 corecoder/llm.py L193-209 (_call_with_retry, max_retries=3)"), text="CoreCoder, Pi, Codex all retry transient errors a bounded number of times (3-5): resend, at most 3 in a row"),
        "error-stop": Cited(Note("openai/openai-agents-python#3106, langchain-ai/langchain#39039 (a failed response reported as success); anomalyco/opencode packages/opencode/src/session/retry.ts@0266548a (a retryable error resent with no maximum attempt count)"), text="an unbounded retry hangs; non-transient or exhausted errors stop model_error, ok false"),
        "filter": Cited(Note("microsoft/semantic-kernel#5240, BerriAI/litellm#9303 (content_filter); Anthropic's handling-stop-reasons documentation (refusal); Google Cloud AI Platform Candidate.FinishReason (SAFETY); pydantic/pydantic-ai cassette test_google_model_safety_settings.yaml (SAFETY, empty content); OpenAI Responses IncompleteDetails (content_filter)"), text="a filtered or refused turn must stop (or fall back), not be retried as is"),
        "refusal": Cited(Note("microsoft/semantic-kernel#5240 and OpenAI Structured Outputs 'Refusals' (message.refusal, content null, finish stop)"), text="a refusal is a refused turn whatever the finish says: stop content_filter"),
        "truncated-calls": Cited(Note(f"NousResearch/hermes-agent#7680, crewAIInc/crewAI#5148, shareAI-lab/learn-claude-code#458 (a truncated call run with cut arguments); {SEED2} on Pi's agent-loop.ts:192-224 (failToolCallsFromTruncatedMessage)"), text="fail the calls of a length turn so the model re-issues them, at most 2 times in a row"),
        "truncated-stop": Cited(Note("NousResearch/hermes-agent#93156 (repeated length on a large write_file: retries cannot succeed)"), text="stop length"),
        "length": Cited(Note("seed 000 corrected loop ('if finish_reason === length throw'); pydantic/pydantic-ai cassettes test_google_model_max_tokens_thinking_model_empty_response.yaml and test_huggingface/test_max_completion_tokens.yaml; faratech/bsod-analyzer#88"), text="a cut text is not an answer"),
        "length-hidden": Cited(Note("BerriAI/litellm#25825, UKGovernmentBEIS/inspect_ai#5143"), text="a server that reports a cut at max_tokens as stop; usage.output_tokens reaching the request's max_tokens is the truncation: stop length"),
        "calls": Cited(Note("ollama/ollama#7963, #5995, open-webui/open-webui#20933, sgl-project/sglang#2877 (stop with tool calls); brekkylab/ailoy#334, envoyproxy/ai-gateway#1486 (Gemini STOP with functionCall); ml-explore/mlx-lm#782 (tool_call); simonw/llm cassette test_tools_streaming_variant_a.yaml (no finish)"), text="calls present are run whatever the finish; NousResearch/hermes-agent#7693 (unterminated JSON under a tool_calls finish): calls whose arguments are not JSON are failed, not run"),
        "calls-steer": Cited(Note(f"{SEED2}"), text="production loops put a mid-run user message into the next request (OpenCode conjunct 4, Pi steering, Codex pending input): run the calls and add it"),
        "repeat-remind": Cited(Note("mistralai/mistral-vibe#83, anomalyco/opencode#28596, OpenHands/OpenHands#1293, HKUDS/nanobot#3077, earendil-works/pi#6158 (identical calls 10+ times; detectors fire at 3 to 5); macanderson/stella#359 (the same cycle of calls); google-gemini/gemini-cli#19958 (intervene before halting); the MAST taxonomy, arXiv 2503.13657 (step repetition, 15.7% of failures)"), text="a cycle of 1-5 rounds run 3 times with the same calls and results, started a 4th time: failed with a reminder; other arguments or a result that differs are progress (fastclaw-ai/fastclaw#80, QwenLM/qwen-code#9492: polling that moves is not a loop; google-gemini/gemini-cli#8234, #5873: repetitive but finite work halted)"),
        "repeat-stop": Cited(Note("mistralai/mistral-vibe#83, anomalyco/opencode#28596, OpenHands/OpenHands#1293, HKUDS/nanobot#3077; gke-labs/gemini-for-kubernetes-development#680 (a detected loop is not a success)"), text="after the reminder, a call set of the same cycle again stops repeated_tool_call, ok false"),
        "paused": Cited(Note("Anthropic's handling-stop-reasons documentation (pause_turn: 'send the assistant content back unchanged to continue'); earendil-works/pi#7689 (Responses end_turn false: the model wants another inference)"), text="ask again, at most 3"),
        "paused-stop": Cited(Note("Anthropic's handling-stop-reasons documentation (pause_turn); pydantic/pydantic-ai cassette test_pause_turn_web_search_vcr.yaml"), text="a turn that stays paused is not an answer: stop unfinished_turn"),
        "dropped-remind": Cited(Note(f"{SEED2}"), text="the project loop reminds when finish says tool_calls and no call came (pd-v2-nothink-s1, turns 7-9); vllm-project/vllm#53255, anomalyco/opencode#5139, labring/FastGPT#7517: at most 2 in a row"),
        "text-call-remind": Cited(Note("NousResearch/hermes-agent#39099, cubist38/mlx-openai-server#83, jundot/omlx#3153 ('should send a reminder, not stop')"), text="a tool call left as text in the content is reminded, at most 2 in a row"),
        "dropped-stop": Cited(Note(f"{SEED2}"), text="'提醒 2 次无效后以 dropped_tool_call 停' (two useless reminders, then stop dropped_tool_call, ok false)"),
        "unknown": Cited(Note("ml-explore/mlx-lm#782; @ai-sdk/anthropic map-anthropic-stop-reason.ts; simonw/llm cassette test_tools_streaming_variant_a.yaml; earendil-works/pi#6226; CommandCodeAI/command-code#785; wicm84266964/Buddy2api#69; OpenRouterTeam/ai-sdk-provider#166; badlogic/pi-mono packages/ai provider mappers (the default throws 'Unhandled stop reason')"), text="a finish nobody defined is not reported as success"),
        "steer": Cited(Note(f"{SEED2} (插话) and OpenCode's fourth conjunct (lastUser.id < lastAssistant.id, anomalyco/opencode@00078e84 packages/opencode/src/session/prompt.ts, runLoop's exit test)"), text="a user message that arrived during the answer is sent before stopping"),
        "empty-remind": Cited(Note("lemonade-sdk/llamacpp-rocm#127 (empty stop: 'should trigger a resend, not the end'); Anthropic's handling-stop-reasons documentation, 'Empty responses with end_turn' (after tool results); NousResearch/hermes-agent@73e5b5db agent/conversation_loop.py, the empty-response nudge after a tool round"), text="at most 2"),
        "empty-stop": Cited(Note("lemonade-sdk/llamacpp-rocm#127; Anthropic's handling-stop-reasons documentation, 'Empty responses with end_turn'; BeehiveInnovations/pal-mcp-server#251"), text="an empty reply that stays empty is not an answer: empty_response"),
        "done": Cited(Note("seed 000 corrected loop ('if calls.length === 0 return'), with rules 1-9 first"), text="finish stop, no calls, non-empty content"),
        "cap": Cited(Note(f"{SEED2} lesson 4 and CoreCoder's '(reached maximum tool-call rounds)' returned as text (he-yufeng/CoreCoder@61fc02c0 corecoder/agent.py L99)"), text="a cap is an error, not an answer"),
    },
    mutation_notes=MUTATION_NOTES,
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    calls = turn.tool_calls

    # 1. error in place of a response
    if turn.error is not None or turn.finish == "error":
        memo["resends"] = memo.get("resends", 0) + 1
        if _transient(turn) and memo["resends"] <= MAX_RESENDS:
            return Resend("error-resend")
        return Stop("model_error", ok=False, rule="error-stop", failed=ALL)
    _reset(memo, "resends")

    # 2. filtered or refused
    if turn.finish == "content_filter":
        return Stop("content_filter", ok=False, rule="filter", failed=ALL)
    if turn.refusal is not None:
        return Stop("content_filter", ok=False, rule="refusal", failed=ALL)

    # 3. truncated (or cut at the request's max_tokens under another finish)
    usage, limit = turn.usage, state.max_tokens
    hidden = turn.finish == "stop" and limit is not None and usage is not None and usage.output_tokens >= limit
    if turn.finish == "length" or hidden:
        if not calls:
            return Stop("length", ok=False, rule="length-hidden" if hidden else "length")
        memo["truncated"] = memo.get("truncated", 0) + 1
        if memo["truncated"] > MAX_TRUNCATED:
            return Stop("length", ok=False, rule="truncated-stop", failed=ALL)
        return Remind("truncated-calls", TRUNCATED, failed=ALL)
    _reset(memo, "truncated")

    # 4. tool calls present: run them, whatever the finish says
    if calls:
        signature = tuple((c.name, c.arguments) for c in calls)
        rounds: list[Round] = memo.setdefault("rounds", [])
        warned = memo.get("warned")  # the call sets of the cycle a reminder named, nothing run since
        if warned is not None and signature in warned:
            return Stop("repeated_tool_call", ok=False, rule="repeat-stop", failed=ALL)
        cycle = repeated_cycle(rounds, signature)
        if cycle is not None:
            memo["warned"] = {calls_of for calls_of, _ in cycle}
            return Remind("repeat-remind", REPEATED, failed=ALL)
        memo["warned"] = None
        _reset(memo, "reminders", "pauses")
        bad = tuple(i for i, c in enumerate(calls) if _bad_json(c.arguments))
        good = tuple(i for i in range(len(calls)) if i not in bad)
        rounds.append((signature, tuple(c.result for c in calls)))  # what this round's run gives back
        del rounds[:-REPEATS * MAX_PERIOD]
        if turn.steer:
            return Remind("calls-steer", turn.steer, run=good, failed=bad)
        return Continue("calls", run=good, failed=bad)
    memo.update(rounds=[], warned=None)

    # 5. the provider says the turn is not over
    if turn.finish_raw == "pause_turn" or turn.end_turn is False:
        memo["pauses"] = memo.get("pauses", 0) + 1
        if memo["pauses"] > MAX_PAUSES:
            return Stop("unfinished_turn", ok=False, rule="paused-stop")
        return Continue("paused")
    _reset(memo, "pauses")

    # 6. a call that went missing: announced by the finish, or left as text
    dropped = turn.finish == "tool_calls"
    as_text = bool(turn.content) and bool(_TEXT_CALL.search(turn.content or ""))
    if dropped or as_text:
        memo["reminders"] = memo.get("reminders", 0) + 1
        if memo["reminders"] > MAX_REMINDERS:
            return Stop("dropped_tool_call", ok=False, rule="dropped-stop")
        if dropped:
            return Remind("dropped-remind", NO_CALL)
        return Remind("text-call-remind", TEXT_CALL)

    # 7. a finish nobody defined
    if turn.finish == "unknown":
        return Stop("unknown_finish", ok=False, rule="unknown")

    # 8. a user message arrived while the model answered
    if turn.steer:
        _reset(memo, "reminders")
        return Remind("steer", turn.steer)

    # 9. empty stop
    if not (turn.content or "").strip():
        memo["reminders"] = memo.get("reminders", 0) + 1
        if memo["reminders"] > MAX_REMINDERS:
            return Stop("empty_response", ok=False, rule="empty-stop")
        return Remind("empty-remind", EMPTY)

    # 10. a real answer
    return Stop("no_tool_calls", ok=True, rule="done")
