"""Vercel AI SDK `generateText` with tools and its default stop condition: one step, then return.

Pin: npm `ai@7.0.173`, `@ai-sdk/openai@4.0.118`, `@ai-sdk/anthropic@4.0.105` (Apache-2.0). The rules
live in predicates/_vercel_ai.py (shared with vercel_ai_steps); this column is
`generateText({model, tools, prompt})` with nothing else set, so `stopWhen` is `isStepCount(1)`
(ai/src/generate-text/generate-text.ts L294): the first step's tools run and the loop ends, whatever
the finish. A loop on the default never sends a second step (retries of the same request aside).
"""

from __future__ import annotations

from bench import MutationNote, shared_factory

generate_text = shared_factory(__file__, "_vercel_ai")
STEP_LIMIT = 1  # generate-text.ts L294 `stopWhen = isStepCount(1)`
CONFORMANCE_EXPLAINED: dict[str, str] = {}
"""Differences between this port and ai@7.0.173 driven by `stopbench conform vercel_ai` that come from what
the replay server can serve or see, not from the loop's decisions (reports/conformance.md)."""

MUTATION_NOTES = (
    MutationNote(
        "STEP_LIMIT = 1",
        "the limit is compared (`steps >= limit`) after the step count is incremented, so it is at least 1 "
        "and limits 0 and 1 stop at the same step",
        ("1 -> 0",),
    ),
)
"""Why mutants of this file survive the mutation check (python -m devtools.mutate): equivalent, or a
coverage gap said out loud."""

decide = generate_text(
    step_limit=STEP_LIMIT,
    stop_condition="src/generate-text/generate-text.ts L294 (default stopWhen isStepCount(1)), L971-1723",
    cap_note="stopWhen isStepCount(1) (the default): one step; retries of the same request (maxRetries 2) do not count",
    unreachable={
        "tools": "with isStepCount(1) the first step always meets the stop condition: its tools run under step-limit",
        "invalid-calls-answered": "with isStepCount(1) the first step always meets the stop condition (step-limit)",
    },
    explained=CONFORMANCE_EXPLAINED,
    mutation_notes=MUTATION_NOTES,
)
