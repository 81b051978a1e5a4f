"""Seed 000's corrected loop: length and content_filter are errors first; no tool calls returns.
Ambiguity (the article is silent): its stub model never fails, so what an error in place of a
response does is not settled; `await model(messages)` would most likely throw. This port treats an
error turn as an ordinary reply with no content and no calls (it reads only the fields the article's
criterion reads), and says so here rather than inventing an exception path."""

from bench import Cap, Cited, Continue, Decision, Note, State, Stop, Turn, predicate

SEED = Note("seed 000 (the article 循环的终止判据写错，Agent 会把同一个响应跑满上限), the corrected loop ('正确的组合')")


@predicate(
    source=f"constructed: {SEED}",
    max_steps=8,
    cap=Cap(reason="max_steps", ok=False, rule="cap"),
    reasons=["length", "content_filter", "no_tool_calls"],
    rules={
        "length": Cited(SEED, text="`if (res.finish_reason === 'length') throw` before anything else"),
        "content-filter": Cited(SEED, text="`if (res.finish_reason === 'content_filter') throw`"),
        "no-calls": Cited(SEED, text="`if (calls.length === 0) return res.content ?? ''`"),
        "calls": Cited(SEED, text="run every call, push its result, loop"),
        "cap": Cited(SEED, text="after MAX_STEPS = 8 the loop throws ('跑满 8 步仍然没有收尾')"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    if turn.finish == "length":
        return Stop("length", ok=False, rule="length")
    if turn.finish == "content_filter":
        return Stop("content_filter", ok=False, rule="content-filter")
    if not turn.tool_calls:
        return Stop("no_tool_calls", ok=True, rule="no-calls")
    return Continue("calls")
