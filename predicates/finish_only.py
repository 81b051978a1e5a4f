"""Seed 002's naive predicate: trust only the finish reason (tool_calls: run the calls; else done).

Constructed, not any project's code: seed 002 (the lesson 「没有工具调用就停」够不够? of the course 从0打造编码Agent), the
first row of its eight-loop table, "一个只信 finish_reason 的朴素谓词（构造的，不是任何一家的代码）".
The article describes it only by that sentence and by two of its cells: on "报 stop，消息里却有工具调用"
it "把调用扔掉了" (drops the calls: a non-tool_calls finish stops without running them), and on
"服务端丢掉了工具调用" it is not among the four loops that stop (a tool_calls finish with no calls
asks again). It reads the canonical `finish` (the dialect table's mapping), nothing else.

Ambiguities, resolved here and noted in the report: the article gives it no cap (`max_steps` is
None, so a model stuck on `tool_calls` ends as the bench's `capped`), and does not say whether it
runs the calls of a non-tool_calls turn; "drops the calls" says it does not.
"""

from bench import ALL, Cited, Continue, Decision, Note, State, Stop, Turn, predicate

SEED = Note("seed 002 (the lesson 「没有工具调用就停」够不够? of the course 从0打造编码Agent), '只信 finish_reason 的朴素谓词'")


@predicate(
    source=f"constructed: {SEED}",
    max_steps=None,
    reasons=["finished"],
    rules={
        "tool-calls": Cited(SEED, text="finish_reason == tool_calls: run the turn's calls (even none) and ask again"),
        "finished": Cited(SEED, text="any other finish_reason: done; calls in the message are dropped ('只信 finish_reason 的朴素谓词把调用扔掉了')"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    if turn.finish == "tool_calls":
        return Continue("tool-calls", run=ALL)
    return Stop("finished", ok=True, rule="finished")
