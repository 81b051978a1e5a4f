"""Seed 000, criterion 2: stop only when finish_reason is `stop`.
Ambiguity (the article is silent): its stub model never fails, so what an error in place of a
response does is not settled; `await model(messages)` would most likely throw. This port treats an
error turn as an ordinary reply with no content and no calls (it reads only the fields the article's
criterion reads), and says so here rather than inventing an exception path."""

from bench import ALL, Cap, Cited, Continue, Decision, Note, State, Stop, Turn, predicate

SEED = Note("seed 000 (the article 循环的终止判据写错，Agent 会把同一个响应跑满上限), section 1, column '按 finish_reason 判'")


@predicate(
    source=f"constructed: {SEED}",
    max_steps=8,
    cap=Cap(reason="max_steps", ok=False, rule="cap"),
    reasons=["finish_stop"],
    rules={
        "finish-stop": Cited(SEED, text="finish_reason == 'stop' ends the loop (tool calls of the turn run first)"),
        "finish-other": Cited(SEED, text="any other finish_reason: run the turn's tool calls and ask again"),
        "cap": Cited(SEED, text="cap 8 steps; hitting it is an error ('撞上限')"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    if turn.finish == "stop":
        return Stop("finish_stop", ok=True, rule="finish-stop", run=ALL)
    return Continue("finish-other")
