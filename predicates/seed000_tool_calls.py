"""Seed 000, criterion 3: stop as soon as a reply carries no tool calls.
Ambiguity (the article is silent): its stub model never fails, so what an error in place of a
response does is not settled; `await model(messages)` would most likely throw. This port treats an
error turn as an ordinary reply with no content and no calls (it reads only the fields the article's
criterion reads), and says so here rather than inventing an exception path."""

from bench import Cap, Cited, Continue, Decision, Note, State, Stop, Turn, predicate

SEED = Note("seed 000 (the article 循环的终止判据写错，Agent 会把同一个响应跑满上限), section 1, column '按 tool_calls 判'")


@predicate(
    source=f"constructed: {SEED}",
    max_steps=8,
    cap=Cap(reason="max_steps", ok=False, rule="cap"),
    reasons=["no_tool_calls"],
    rules={
        "no-calls": Cited(SEED, text="no tool calls: the content (even null) is returned as the answer"),
        "calls": Cited(SEED, text="tool calls present: run them and ask again"),
        "cap": Cited(SEED, text="cap 8 steps; hitting it is an error ('撞上限')"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    if not turn.tool_calls:
        return Stop("no_tool_calls", ok=True, rule="no-calls")
    return Continue("calls")
