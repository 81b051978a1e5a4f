"""Seed 000, criterion 1: stop as soon as the reply's content is non-empty.
Ambiguity (the article is silent): its stub model never fails, so what an error in place of a
response does is not settled; `await model(messages)` would most likely throw. This port treats an
error turn as an ordinary reply with no content and no calls (it reads only the fields the article's
criterion reads), and says so here rather than inventing an exception path."""

from bench import ALL, Cap, Cited, Continue, Decision, Note, State, Stop, Turn, predicate

SEED = Note("seed 000 (the article 循环的终止判据写错，Agent 会把同一个响应跑满上限), section 1, column '按 content 判'")


@predicate(
    source=f"constructed: {SEED}",
    max_steps=8,
    cap=Cap(reason="max_steps", ok=False, rule="cap"),
    reasons=["content"],
    rules={
        "content": Cited(SEED, text="non-empty content is taken as the answer (tool calls of the turn run first)"),
        "no-content": Cited(SEED, text="null or empty content: run the turn's tool calls and ask again"),
        "cap": Cited(SEED, text="cap 8 steps; hitting it is an error ('撞上限')"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    if turn.content:
        return Stop("content", ok=True, rule="content", run=ALL)
    return Continue("no-content")
