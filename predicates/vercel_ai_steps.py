"""Vercel AI SDK `generateText` with tools and `stopWhen: isStepCount(5)` as its docs show: up to five steps.

Pin: npm `ai@7.0.173`, `@ai-sdk/openai@4.0.118`, `@ai-sdk/anthropic@4.0.105` (Apache-2.0). The rules
live in predicates/_vercel_ai.py (shared with vercel_ai); this column is
`generateText({model, tools, prompt, stopWhen: isStepCount(5)})`, the docs' tool-calling example
(ai/docs/03-ai-sdk-core/15-tools-and-tool-calling.mdx L42, L453; `stepCountIs(5)` in older docs, the
same function, src/generate-text/index.ts L74). It differs from the default where the model asks for
tools: the results go back to the model, for up to five steps; the fifth step's tools run and the
run returns with that step's finish (no error, no flag: an application sees `tool-calls`).
"""

from __future__ import annotations

from bench import shared_factory

generate_text = shared_factory(__file__, "_vercel_ai")
STEP_LIMIT = 5  # ai/docs/03-ai-sdk-core/15-tools-and-tool-calling.mdx L42, L453 `stopWhen: isStepCount(5)`
_EMPTY_ID = (
    "The call has an empty id (Gemini's OpenAI-compatible endpoint sends ''; a legacy function_call has none); the Chat provider gives such a call "
    "an id of its own (@ai-sdk/openai src/chat/openai-chat-language-model.ts L492 `toolCall.id || generateId()`) and "
    "the tool result goes back under that id. The tool ran (its result carries the ok marker), but the server "
    "matches results to the calls it sent by id and finds none (observed detail: 'result for unknown call id'), so "
    "it records the step as a continue with no call run; the port's continue runs it. The decision is the same.")
CONFORMANCE_EXPLAINED: dict[str, str] = {
    "rec-gemini-compat-empty-tool-id": _EMPTY_ID,
    "rec-gemini-partial-args-stop": _EMPTY_ID,
    "rec-mixed-agents-tool-calls-run1": _EMPTY_ID,
    "rec-openai-legacy-function-call": _EMPTY_ID,
}
"""Differences between this port and ai@7.0.173 driven by `stopbench conform vercel_ai_steps` that come from what
the replay server can serve or see, not from the loop's decisions (reports/conformance.md)."""


decide = generate_text(
    step_limit=STEP_LIMIT,
    stop_condition="src/generate-text/generate-text.ts L1011-1014 (stopWhen isStepCount(5), docs 15-tools-and-tool-calling.mdx L42), L971-1723",
    cap_note="stopWhen isStepCount(5): the fifth step ends the run (its tools run), reason its finish, ok=True; retries of the same request (maxRetries 2) do not count",
    explained=CONFORMANCE_EXPLAINED,
)
