"""Seed 001's loop: three stop gates (natural, forced at MAX_ITERS = 10, exceptional) in the article's order.

Source: seed 001, a Chinese article, section 18 of a series,
"循环终止条件：模型什么时候'想好了'". Constructed from the article, not any project's code: the article's
own code is a skeleton (`call_model` is a comment), so every rule below cites the sentence or code line
of the article it encodes, by section heading. Quotes are the article's words.

The gates ("停机三闸", section 三种终止条件全景):

* natural: "模型这轮没带tool_calls，说明它'想好了'，直接输出答案收工";
* forced: "循环次数达到上限max_iters，即使模型还想调工具，也必须停（兜底）", with `MAX_ITERS=10`
  (section 强制终止, max_iters_demo.py): a stop that is not success ("强制终止循环");
* exceptional: "执行中抛错（工具失败、网络断了、参数校验不过），按错误的性质决定是重试（第 19 节）还是直接停机".

The decision order (section 自然终止, "我在实际项目里的判断顺序是"): 1. tool calls -> continue ("工具优先");
2. no tool calls and a normal finish -> done, content is the answer; 3. no tool calls and `length` ->
"输出可能不完整，走异常/降级（第 19 节讲）". The code in section finish_reason says the same with
`if has_tool_calls: ... elif finish_reason=="length": ... else: # 模型想好了`.

Where the article defers to a later chapter, and what this port assumes (each one said, not found):

1. Which errors are retried, how often, and how (section 19, "哪些错该重试、哪些错必须停" and
   "指数退避重试", announced in 下节预告). ASSUMED: the errors retried are exactly those the preview
   names as ones a robust agent swallows, "网络抖动、API 限流、超时": the kinds `connection_refused`,
   `connection_reset`, `stream_cut` (network), `rate_limit` (限流) and `timeout`; at most
   RETRIES = 3 resends in a row (the article gives no number); every other kind stops at once, not
   success. A `context_overflow` in particular is not retried: it is the article's own crash ("程序才因为
   context 超长被 API 拒绝而崩溃", section 案例), and a resend of the same context is refused again.
   A retry is a resend inside one round: it does not count towards MAX_ITERS (the demo's `iters` counts
   rounds of the `while True`, and a backoff retry wraps the model call inside one round).
2. What "degrade" does after a `length` reply without calls (section 19). The article commits only to
   "或至少不能直接当答案" (at least not taken as the answer); "通常要提示模型" (usually prompt the model)
   names no message and no budget. ASSUMED: stop, not success (reason `truncated`), the minimum the
   article commits to; no reminder is invented.
3. Argument validation ("参数校验不过", listed under the exceptional gate; retry-or-stop deferred to 19).
   ASSUMED: a call whose arguments are not valid JSON is answered with an error result (failed) and the
   loop goes on, so the model is the one that retries; the other calls of the turn run ("工具优先").
4. The circuit breaker on context length, tokens and time ("第 20 节讲熔断") is not part of this
   loop; it is left out, so only MAX_ITERS bounds the rounds.

"Normal" finish (step 2) is not defined by the article; its code's `else` branch takes every finish
that is not `length` as done, `content_filter` and unknown strings included, and so does this port
(an empty reply too: "取 content 为答案" does not test the content). A `tool_calls` finish without
calls has no calls: it is done as well. The gates read the canonical finish and the turn's calls,
which is what the article's code reads (`finish_reason`, `bool(msg.tool_calls)`).
"""

from __future__ import annotations

import json

from bench import ALL, Cited, Continue, Decision, Note, Resend, State, Stop, Turn, predicate

SEED = Note("seed 001 (the article 循环终止条件：模型什么时候\"想好了\", 第 18 节 of a series)")
MAX_ITERS = 10  # section 强制终止：max_iters 兜底, max_iters_demo.py: `MAX_ITERS=10# 硬上限：最多转 10 圈`
RETRIES = 3  # ASSUMED (section 19 not in the article): resends of a retried error in a row
RETRIED_KINDS = frozenset({"connection_refused", "connection_reset", "stream_cut", "rate_limit", "timeout"})
"""ASSUMED from 下节预告 "网络抖动、API 限流、超时": the error kinds this loop retries."""


def _valid_json(arguments: str) -> bool:
    try:
        json.loads(arguments or "{}")
    except ValueError:
        return False
    return True


@predicate(
    source=f"constructed: {SEED}",
    max_steps=None,
    cap_note=f"MAX_ITERS = {MAX_ITERS} rounds, counted by the port: a retry (resend) is not a round",
    reasons=["no_tool_calls", "truncated", "max_iters", "api_error"],
    rules={
        "calls": Cited(SEED, text="section 自然终止 order item 1: '有 tool_calls → 继续循环（工具优先）'; code in section finish_reason: `if has_tool_calls: # 模型明确要调工具 —— 继续循环` (before finish_reason is read: the calls of a `length` turn run too); a call whose arguments are not valid JSON is answered with an error ('参数校验不过', section 三种终止条件全景; ASSUMED, retry-or-stop is deferred to 第 19 节)"),
        "natural": Cited(SEED, text="section 自然终止 item 2: '没有 tool_calls 且 finish_reason 正常 → 自然结束，取 content 为答案'; code: `else: # 模型想好了，输出最终答案，循环结束` (every finish but length, content_filter included)"),
        "length": Cited(SEED, text='section 自然终止 item 3: \'没有 tool_calls 但 finish_reason == length → 输出可能不完整，走异常/降级（第 19 节讲）\'; code: `elif finish_reason=="length": # 输出被截断，通常要提示模型，或至少不能直接当答案`; the degrade path is deferred to 第 19 节: ASSUMED stop, not success'),
        "max-iters": Cited(SEED, text="section 强制终止：max_iters 兜底, max_iters_demo.py: `MAX_ITERS=10`, `iters+=1; if iters>MAX_ITERS: print('[停机] 达到 max_iters=..., 强制终止循环'); break`: the 10th round's calls run, then the loop ends without an answer ('即使模型还想调工具，也必须停')"),
        "error-retry": Cited(SEED, text="section 三种终止条件全景: '异常终止：执行中抛错（...网络断了...），按错误的性质决定是重试（第 19 节）还是直接停机'; 下节预告: '网络抖动、API 限流、超时……指数退避重试'. ASSUMED (第 19 节 is not in the article): kinds connection_refused, connection_reset, rate_limit, stream_cut, timeout resent, at most 3 times in a row"),
        "error-stop": Cited(SEED, text="section 三种终止条件全景 '...还是直接停机'; section 案例: '程序才因为 context 超长被 API 拒绝而崩溃': any other error kind (context_overflow among them), or a retried kind after 3 resends, stops the loop, not success"),
    },
)
def decide(turn: Turn, state: State) -> Decision:
    memo = state.memo
    # exceptional gate: no response to read; the model call itself raised
    if turn.error is not None or turn.finish == "error":
        kind = turn.error.kind if turn.error is not None else None
        if kind in RETRIED_KINDS and memo.get("retries", 0) < RETRIES:
            memo["retries"] = memo.get("retries", 0) + 1
            return Resend("error-retry")
        return Stop("api_error", ok=False, rule="error-stop")
    memo["retries"] = 0
    memo["rounds"] = rounds = memo.get("rounds", 0) + 1
    if turn.tool_calls:  # 工具优先
        bad = tuple(i for i, call in enumerate(turn.tool_calls) if not _valid_json(call.arguments))
        run = ALL if not bad else tuple(i for i in range(len(turn.tool_calls)) if i not in bad)
        if rounds >= MAX_ITERS:  # the next `iters += 1` passes MAX_ITERS: forced stop after these calls
            return Stop("max_iters", ok=False, rule="max-iters", run=run, failed=bad)
        return Continue("calls", run=run, failed=bad)
    if turn.finish == "length":
        return Stop("truncated", ok=False, rule="length")
    return Stop("no_tool_calls", ok=True, rule="natural")
