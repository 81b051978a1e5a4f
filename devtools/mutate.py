"""The mutation check: proof that the golden gate notices a changed rule in a port.

For each port (every predicate whose source is not "constructed", plus the reference loop) this
makes small AST-level changes to its file, one at a time, in a temporary folder: a numeric constant
plus or minus one, a comparison flipped (``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``), a
condition negated (``if``, ``while``, a conditional expression, a comprehension filter), and a
returned decision swapped (a stop's ``ok`` inverted; continue, resend and remind exchanged). Each
mutant replays the shipped catalogue and is compared with the shipped golden files
(:func:`bench.golden.expected.compare`): it is *caught* when at least one reviewed cell no longer matches.
A shared rules module (``predicates/_vercel_ai.py``: see :mod:`bench.engine.discovery`) is mutated like a
port, and each of its mutants is judged against every column that loads it. A mutant that survives
is either equivalent or a rule the catalogue does not pin down (a coverage gap); :data:`NOTES` says
which, line by line, and why.

``python -m devtools.mutate`` (``make mutate``) prints, per port, mutants caught out of made, each
survivor as ``file:line``, its change and the line, and the time taken. It exits 1 when a mutant
survives that :data:`NOTES` does not explain, so CI can run it, and 2 (one line each) when a sequence or
golden file is unusable or there is no predicate file.
"""

from __future__ import annotations

import argparse
import ast
import copy
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bench.catalogue.load import load_catalogue
from bench.engine.contain import DEFAULT_DECISION_TIMEOUT, decision_time_limit
from bench.engine.discovery import SHARED_PREFIX, load_file, shared_users
from bench.engine.model import Sequence
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.errors import UnusableInput
from bench.golden.expected import Golden, compare, load_golden

Kind = Literal["constant", "comparison", "negation", "decision"]
KINDS: tuple[Kind, ...] = ("constant", "comparison", "negation", "decision")

REFERENCE = "reference"
"""The reference loop is ours (source "constructed") but its golden cells guard its rules too."""

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}
_OP_TEXT: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}
_DECISIONS = ("Continue", "Resend", "Remind", "Stop")

@dataclass(frozen=True, slots=True)
class Note:
    """Why mutants of one source line survive: `equivalent` (no replay can tell the mutant from
    the port) or a coverage gap (a replay could, but no sequence does; `why` says why none is added).

    `line` is a piece of the source line, `changes` the changes it explains as :func:`mutants`
    prints them (empty: every change on that line), `next` a piece of the line after it (to tell
    identical lines apart). Keyed by text, not line number, so that edits
    elsewhere in a file do not invalidate the list.
    """

    port: str
    line: str
    why: str
    changes: tuple[str, ...] = ()
    equivalent: bool = True
    next: str = ""

    def explains(self, mutant: Mutant) -> bool:
        return (mutant.port == self.port and self.line in mutant.line_text
                and (not self.changes or mutant.change in self.changes) and self.next in mutant.next_text)


_499 = ("only HTTP status 499 tells the mutant apart; no provider API returns 499 (nginx's "
        "client-closed-request code), so no sequence carries it")
_BEFORE_STOP = "a reset just before the loop stops: nothing reads the memo after a stop"
_DEFAULT_BELOW = ("the default is read only before the key is first set, and -1, 0 and 1 all pass "
                  "the first test (< 2)")
_RESET_AFTER_SUCCESS = ("a counter reset after a good response: only a second burst of the same "
                        "failure later in one run, reaching the budget, tells it apart; no sequence has one")

_NO_529 = ("no sequence sends an overloaded error to this port (HTTP 529, or the kind overloaded without a "
           "status; chat-transient-errors-after-tools' overloaded answer is a 409): Claude Code's overloaded path "
           "(uAt, maxOverloaded 3) never runs. A sequence would be worth it only with every column's cell checked")
_NO_STREAM_CUT = ("no sequence sends a stream_cut (a stream that ends cleanly with no stop reason and no error "
                  "event) to this port: qPs's truncation budget (one streamed retry, then j1e) never runs")

NOTES: tuple[Note, ...] = (
    # every port with an HTTP status test
    *(Note(port, line, _499, ("500 -> 499",), equivalent=False) for port, line in (
        ("codex", "err.status >= 500:"),
        ("corecoder", "return s in (408, 409, 429) or s >= 500"), ("corecoder", "status == 429 or status >= 500"),
        ("learn_claude_code_s01", "err.status >= 500"), ("learn_claude_code_s01_openai", "err.status >= 500"),
        ("openai_agents", "err.status >= 500"), ("opencode", "status in (408, 409, 429) or status >= 500"),
        ("reference", "err.status >= 500"), ("hermes", "status is None or status == 400 or status >= 500"),
        ("hermes", "(400 <= status < 500 and status not in (402, 408, 429))"))),
    Note("hermes", "(400 <= status < 500 and status not in (402, 408, 429))", "there is no HTTP status 399",
         ("400 -> 399",)),
    # corecoder
    Note("corecoder", "status = err.status or 0",
         "only an error without a status gets the fallback, and 0, 1 and -1 fail every later status "
         "test alike (== 400, == 429, >= 500)"),
    Note("corecoder", "s = err.status or 0",
         "only an error without a status gets the fallback, and 0, 1 and -1 fail `in (408, 409, 429)` "
         "and `>= 500` alike"),
    Note("corecoder", 'memo.get("sdk", 0) < SDK_RETRIES', _DEFAULT_BELOW),
    Note("corecoder", 'memo.get("attempt", 0) < CALL_ATTEMPTS - 1', _DEFAULT_BELOW),
    Note("corecoder", "memo.update(phase=1, attempt=0)",
         "any non-zero phase means the fallback was used: only `phase == 0` is tested", ("1 -> 2",)),
    Note("corecoder", "memo.update(phase=1, attempt=0)",
         "the call retries left after the 400 fallback: only a retryable error right after a 400 tells "
         "it apart; no sequence has one", ("0 -> 1", "0 -> -1"), equivalent=False),
    Note("corecoder", "memo.update(sdk=0, attempt=0, phase=0)", _BEFORE_STOP, next="return Stop("),
    Note("corecoder", "memo.update(sdk=0, attempt=0, phase=0)", _RESET_AFTER_SUCCESS, equivalent=False,
         next="if not turn.tool_calls:"),
    # learn-claude-code, openai-agents: the SDK retry counter
    *(Note(port, 'memo["sdk"] = 0', _BEFORE_STOP, next="return Stop(")
      for port in ("learn_claude_code_s01", "learn_claude_code_s01_openai", "openai_agents")),
    *(Note(port, 'memo.get("sdk", 0) < SDK_RETRIES', _DEFAULT_BELOW)
      for port in ("learn_claude_code_s01", "learn_claude_code_s01_openai", "openai_agents")),
    Note("openai_agents", 'raw.split("/", 1)[0]',
         "no raw finish string has a second slash, so maxsplit 1 and 2 give the same first part"),
    Note("openai_agents", "run=ALL if not failed and len(fresh) == len(turn.tool_calls) else",
         "`ALL` and the tuple of every call's index select the same calls"),
    Note("openai_agents", 'raw == "failed" or (err is not None and raw != "completed")',
         "a Responses turn carrying an error without a status (a stream error event) reaches this "
         "test; no sequence has one", equivalent=False),
    # opencode
    Note("opencode", 'return "tool-calls" if has_calls else "other"',
         "a Responses incomplete reason other than max_output_tokens and content_filter; no sequence "
         "has one", equivalent=False),
    Note("opencode", 'return status == 413 or kind == "context_overflow"',
         "no sequence answers HTTP 413", equivalent=False),
    Note("opencode", "return status in (408, 409, 429) or status >= 500 or kind in RETRYABLE_KINDS",
         "the catalogue's 408, 409 and 429 errors are of kinds OpenCode's retryable messages name "
         "(timeout, overloaded, rate_limit), so the status list is redundant for them",
         ("408 -> 409", "408 -> 407", "409 -> 410", "409 -> 408", "429 -> 430", "429 -> 428"), equivalent=False),
    Note("opencode", 'is_retryable("server_error", 500), "responses-failed"',
         "501 is as retryable as 500 (>= 500)"),
    # pi
    Note("pi", 'return Remind("truncated-calls", steer, failed=ALL)',
         "a length turn with calls that also carries a steer; no sequence has one", equivalent=False),
    # reference
    Note("reference", 'memo["reminders"] = memo.get("reminders", 0) + 1',
         "the default is read only before the first reset of the count (every tool round resets it): "
         "only a run that spends its reminders before any tool round tells it apart; none does",
         equivalent=False),
    # opencode's retry counter
    Note("opencode", 'memo["retries"] = 0', _BEFORE_STOP, next="return Stop("),
    Note("opencode", 'memo["retries"] = 0', "the retry count reset by a context overflow: only retryable "
         "errors after a compaction tell it apart; no sequence has them", equivalent=False,
         next='memo["compacting"] = True'),
    Note("opencode", 'memo["retries"] = 0', _RESET_AFTER_SUCCESS, equivalent=False),
    # hermes
    *(Note("hermes", line, _BEFORE_STOP, next="return Stop(") for line in (
        'm["codex_inc"] = 0', 'm["inv_json"] = 0', 'm["inv_tool"] = 0')),
    *(Note("hermes", line, _BEFORE_STOP, next=nxt) for line, nxt in (
        ('m["empty"] = 0', "return Stop("), ('m["ack"] = 0', 'm["length"] = 0'),
        ('m["length"] = 0', "label = "))),
    *(Note("hermes", line, "api_mode() is consulted only when State.dialect is not one of the four "
           "dialects, and the catalogue's sequences always name one")
      for line in ("if raw is None:", "if raw in _ANTHROPIC_RAWS:", "if raw in _GEMINI_RAWS:",
                   'if raw in _RESPONSES_STATUS or raw.startswith("incomplete"):')),
    Note("hermes", "len(text) > 1200", "no intent-ack candidate text is near 1,200 characters",
         equivalent=False),
    Note("hermes", "retry=0,", "the outer iteration sets retry to 0 before it is read"),
    Note("hermes", 'm["summary"] = 2', "only `summary == 1` is tested; any other non-zero value means "
         "the summary retry was made", ("2 -> 3",)),
    Note("hermes", 'last5 = (m["last5"] + list(roles))[-5:]',
         "a tool message exactly five messages back; no sequence places one there", equivalent=False),
    *(Note("hermes", line, _RESET_AFTER_SUCCESS, equivalent=False) for line in (
        'm["stream"] = 0', 'm["scratch"] = 0', 'm["trunc_tools"] = 0', 'm["retry"] = 0  # the outer loop')),
    *(Note("hermes", line, _RESET_AFTER_SUCCESS, equivalent=False) for line in (
        'm["codex_inc"] = 0', 'm["inv_tool"] = 0', 'm["inv_json"] = 0', 'm["prefill"] = 0', 'm["empty"] = 0')),
    Note("hermes", "if not all_hk:", "a housekeeping-only tool turn with text, then a substantive tool turn, "
         "then an empty reply; no sequence has that order", equivalent=False),
    Note("hermes", 'if m["prefill_tail"]:', "a thinking prefill followed by a tool turn and then an empty "
         "reply; no sequence has that order", equivalent=False),
    Note("hermes", 'if (not structured or m["prefill"] >= 2) and m["empty"] < 3:',
         "with reasoning and fewer than 2 prefills the prefill branch above returns first, so `>= 1` "
         "and `>= 2` agree wherever this line is reached", ("2 -> 1",)),
    Note("hermes", "if status == 413 or (overflow and (status is None or status == 400 or status >= 500)):",
         "no sequence answers HTTP 413 or an overflow message with a 5xx status", equivalent=False),
    Note("hermes", "(400 <= status < 500 and status not in (402, 408, 429))",
         "no sequence answers 401, 402 or 403", ("402 -> 403", "402 -> 401"), equivalent=False),
    Note("hermes", 'status in (500, 502) and err.kind == "invalid_request"',
         "no 5xx answer is a request-validation error (the unknown-parameter bodies some proxies send)",
         equivalent=False),
    Note("hermes", "DEFAULT_CONTEXT = 256_000", "no overflow error reports a window within a token of "
         "256,000", equivalent=False),
    Note("hermes", "limit = None if status == 413 else", "no HTTP 413 body reports a context window",
         equivalent=False),
    *(Note("hermes", line, "when an overflow comes after 6 to 9 messages: Hermes would then summarise with "
           "a request to its auxiliary model, which the port does not model and the replay server would "
           "answer with a turn, so no such sequence is added", equivalent=False) for line in (
        "COMPRESS_MIN_MESSAGES = 3 + 3 + 1", "messages=1,", 'elif m["messages"] <= COMPRESS_MIN_MESSAGES:')),
    *(Note("hermes", line, "the codex-incomplete path without text is declared unreachable (see the "
           "predicate); with reasoning text the interim message has just been appended, so the last "
           "message is an assistant message whatever this line asks") for line in (
        'if m["last5"][-1] == "assistant":',
        'return Resend("codex-incomplete-resend")')),
    *(Note("hermes", line, "the max_tokens boost is computed against the custom provider's default of 65,536, "
           "the cap of every request Hermes sends here, so it never changes max_tokens: a constant moved by "
           "one still gives the request's own cap (the formula itself is pinned by tests/ports/test_hermes.py)")
      for line in ("REQUESTED_MAX_TOKENS = 65536", "BOOST_CAP = 32768")),
    Note("hermes", 'changes=COMPACTED if m["messages"] > COMPRESS_MIN_MESSAGES', "an overflow after exactly 7 "
         "messages: Hermes would then summarise with a request to its auxiliary model, which the port does not "
         "model and the replay server would answer with a turn, so no such sequence is added", equivalent=False),
    Note("hermes", 'return Remind("codex-incomplete-continue", CODEX_INCOMPLETE_NUDGE)',
         "an incomplete Codex reply with reasoning and no visible text; no sequence has one (every "
         "incomplete Codex reply without calls in the catalogue cuts visible text)", equivalent=False),
    # hermes on the Gemini wire (this session's port fix, driven 0.19.0)
    *(Note("hermes", line, "no Gemini sequence goes on after a length continuation (gemini-max-tokens-empty and "
           "rec-gemini-max-tokens-no-parts end on the boosted request), so the request after a boost, back at the "
           "native client's 65,535, and a second boost appear in no cell; pinned by tests/ports/test_hermes.py "
           "(the boost goes 8192, 16384, then 65535)", equivalent=False) for line in (
        "GEMINI_WIRE_MAX_TOKENS = 65535", 'if (m["mode"] != "gemini_native" or m["boost"] or decision.action == "stop"',
        'm["sent_max"] = min(BOOST_BASE * 2 ** retries, BOOST_CAP)')),
    Note("hermes", "floor = requested or 0", "with no requested cap (the Gemini wire) the floor is below every boost "
         "(4096 * 2**n >= 8192), so 0, 1 and -1 give the same max_tokens; with a cap the `or` never reaches it"),
    Note("codex", "if err.status in (400, 401):", "no sequence answers HTTP 401 (or 402): the 401 in this test is "
         "pinned by tests/ports/test_codex.py (400 and 401 fatal, other statuses a stream retry)",
         ("401 -> 402", "401 -> 400"), equivalent=False),
    # langchain and pydantic_ai (issue 12)
    *(Note(port, "err.status >= 500", _499, ("500 -> 499",), equivalent=False)
      for port in ("langchain", "pydantic_ai")),
    Note("langchain", "MODEL_CALLS = 5000", "the cap (5,000 model calls) lies past the bench's safety cap of 200 "
         "requests, so no catalogue replay reaches it; tests/ports/test_langchain.py pins it with a longer safety cap",
         equivalent=False),
    Note("langchain", 'memo["retries"] = 0', _BEFORE_STOP, next='return Stop("api_error"'),
    Note("langchain", 'memo.get("retries", 0) < CLIENT_RETRIES', _DEFAULT_BELOW),
    Note("langchain", 'if wire == "anthropic" or (wire == "openai-chat" and not value):', "only Chat arguments that "
         "are JSON null, [], 0 or false (made {} by `value or {}`) tell the second test apart; no sequence sends them",
         ("== -> !=",), equivalent=False),
    *(Note(port, line, "an error on a Response whose status is failed: the server renders a failed Response "
           "from finish_raw alone, and no sequence gives such a turn an error as well", ("== -> !=",),
           equivalent=False)
      for port, line in (("langchain", 'if err is not None and not (wire == "openai-responses"'),
                         ("pydantic_ai", 'if err is not None and not (state.dialect == "openai-responses"'))),
    Note("pydantic_ai", 'memo["sdk"] = 0', _BEFORE_STOP, next='return Stop("ModelAPIError"'),
    Note("pydantic_ai", 'memo.get("sdk", 0) < CLIENT_RETRIES', _DEFAULT_BELOW),
    Note("pydantic_ai", 'if retries.get(c.name, 0) >= TOOL_RETRIES:', "a name with no count yet: 0 and -1 both "
         "fail `>= 1`", ("0 -> -1",)),
    Note("pydantic_ai", "kept[n] = retries.get(n, 0) + 1", "a failed name's count only meets `>= TOOL_RETRIES` "
         "(1): 1 and 2 both do, so the +1 and the default (0 or 1) cannot be told apart", ("1 -> 2", "0 -> 1")),
    Note("pydantic_ai", "", "a tool that fails, then succeeds, then fails again (the mutant is in a dict "
         "comprehension, reported without its line); no catalogue sequence has one; tests/ports/test_pydantic_ai.py "
         "pins it", ("`n not in ok_names` negated",), equivalent=False),
    Note("pydantic_ai", "None if not failed else tuple(run)", "only a 50th request whose calls partly fail "
         "tells it apart; no sequence reaches the request limit with a failing call", equivalent=False),
    Note("pydantic_ai", 'memo["paused"] = 0', _RESET_AFTER_SUCCESS, equivalent=False),
    Note("pydantic_ai", 'memo["requests"] -= 1', "a continuation's request is only uncounted near the request "
         "limit of 50; no sequence pauses and then reaches it", equivalent=False),
    Note("pydantic_ai", 'finish = "content_filter" if turn.refusal is not None and state.dialect == "anthropic"',
         "the catalogue's Anthropic refusals already carry the canonical finish content_filter; only a refusal "
         "recorded with another finish tells the line apart", ("== -> !=",), equivalent=False),
    Note("pydantic_ai", "last = turn.tool_calls[-1]", "the first and the last call differ only in a length-cut turn "
         "with several calls that exhausts a tool's budget; no sequence has one", ("1 -> 0",), equivalent=False),
    # claude_code, reviewed line by line (2.1.328 port after its compaction and stream-retry rules)
    *(Note("claude_code", line, _NO_529, changes, equivalent=False) for line, changes in (
        ("MAX_OVERLOADED = 3  # T_e=3", ()), ("if status == 529:", ()),
        ('over: int = memo.get("overloaded", 0) + 1', ()), ("if over < MAX_OVERLOADED and retries < MAX_RETRIES:", ()),
        ('return Resend("overloaded-retry")', ()),
        ('return {"overloaded": 529, "rate_limit": 429, "server_error": 500}.get', ("529 -> 528", "529 -> 530")))),
    Note("claude_code", "memo[\"retries\"] = retries + 1", _NO_529, next='return Resend("overloaded-retry")',
         equivalent=False),
    Note("claude_code", 'return Stop("api_error", ok=False, rule="api-error")', _NO_529, ("Stop: ok inverted",),
         next="how = _delivery(turn, err)", equivalent=False),
    Note("claude_code", 'return {"overloaded": 529, "rate_limit": 429, "server_error": 500}.get',
         "a status-less error is never served as an HTTP status (bench/wires/delivery.py error_mode), so the code "
         "a status-less rate_limit or server_error is given only meets the `== 529` test, which 428, 430, 499 "
         "and 501 fail alike", ("429 -> 428", "429 -> 430", "500 -> 499", "500 -> 501")),
    Note("claude_code", 'retries = memo.get("retries", 0)', "the default is read only when the first response of "
         "a run fails in the stream with nothing received, and it counts only towards the budget of 10, which "
         "no such run reaches: a coverage gap", equivalent=False),
    Note("claude_code", 'memo["retries"] = min(retries + 1, MAX_RETRIES)', "the count after a retry without "
         "streaming decides only when the budget of 10 is reached after it: chat-connection-dropped-repeat gets "
         "there first (min(.., 10) caps 11 and 12 alike) and chat-network-flaky-after-tools has one more failure "
         "only", equivalent=False),
    *(Note("claude_code", line, _NO_STREAM_CUT, equivalent=False) for line in (
        'if not memo.get("truncations") and retries < MAX_RETRIES:', 'memo["truncations"] = 1')),
    Note("claude_code", 'memo["retries"] = retries + 1', _NO_STREAM_CUT + "; nor an in-stream server error after "
         "thinking only", next='return Resend("stream-retry")', equivalent=False),
    Note("claude_code", 'return Resend("stream-retry")', _NO_STREAM_CUT, ("Resend -> Continue (no calls run)",),
         next="return _without_streaming(memo, \"stream-retry\")", equivalent=False),
    Note("claude_code", 'server = err.kind in ("server_error", "timeout") or (err.status is not None and err.sta',
         "the status test of an in-stream error: the catalogue's in-stream errors to this port are status-less "
         "(a timeout) or a 400 (rec-openrouter-length-then-stream-error), and `server` decides only after output "
         "or thinking: no in-stream 5xx after output reaches it", equivalent=False),
    Note("claude_code", 'if (turn.content or "").strip() or turn.tool_calls:  # progress "output"',
         "no in-stream error after text or tool calls reaches this port (rec-openrouter-length-then-stream-error "
         "has thinking only, which a bad request fails on either branch), and with nothing received the kept "
         "partial reply meets the empty-reply rule, the same retry without streaming", equivalent=False),
    Note("claude_code", 'return None if server else Stop("api_error", ok=False, rule="stream-error-stop")',
         "no in-stream error after text or tool calls reaches this port", equivalent=False),
    *(Note("claude_code", line, "no in-stream server error after thinking only reaches this port (the one after "
           "thinking, rec-openrouter-length-then-stream-error, is a bad request, which fails at once)",
           equivalent=False) for line in (
        'spent = memo.get("thinking_retries", 0)', "if server and spent < 2 and retries < MAX_RETRIES:",
        'memo["thinking_retries"] = spent + 1')),
    Note("claude_code", 'return Resend("stream-retry")', "no in-stream server error after thinking only",
         ("Resend -> Continue (no calls run)",), next='return Stop("api_error", ok=False, rule="stream-error-stop")',
         equivalent=False),
    Note("claude_code", 'return Stop("success", ok=False, rule="compact-failed")', "a second overflow after a "
         "compaction: chat-context-overflow-compacted ends after its compacted request, and the other overflows "
         "never compact", ("Stop: ok inverted",), next='memo["compacting"] = "summary"', equivalent=False),
    *(Note("claude_code", line, "the key is set when the compaction starts, before any read: the default is "
           "never read") for line in ('groups: int = memo.get("groups", 1)',
                                      'if groups < 2 or memo.get("compact_truncations", 0) >= COMPACT_RETRIES:',
                                      'memo["compact_truncations"] = memo.get("compact_truncations", 0) + 1')),
    Note("claude_code", 'memo["groups"] = groups - min(max(1, groups // 5), groups - 1)',
         "`groups - 1` never binds: for two groups or more a fifth (at least 1) is below it", ("1 -> 0",)),
    Note("claude_code", 'memo["groups"] = groups - min(max(1, groups // 5), groups - 1)',
         "the fifth only sets how many groups are left, which decides only for a conversation that runs out "
         "before Gee=3 truncations with 3 to 9 groups: the catalogue's overflows come after 1 tool round (out "
         "after one truncation whatever the fraction) or 46 (never out)", ("1 -> 2", "5 -> 4", "5 -> 6"),
         equivalent=False),
    Note("claude_code", 'memo["retries"] = 0', "the retry count after a compaction: no sequence fails again "
         "after a compacted request", next="return Remind(\"compacted\"", equivalent=False),
    Note("claude_code", "retryable = status is not None and (status in (408, 409, 429) or statu", _499,
         ("500 -> 499",), equivalent=False),
    Note("claude_code", 'memo["retries"] = retries + 1', "the retry without streaming of another status counts "
         "towards the budget of 10 only if retryable failures follow it; no sequence has one after a 4xx",
         next="# observed: these retries carry no max_tokens change", equivalent=False),
    Note("claude_code", 'return Resend("not-found-retry" if status == 404 else "no-stream-retry',
         "only the rule's name changes, and only for a 403, 404 or 405: the catalogue sends no 404, 403 or 405 "
         "to this port (a 404 would be an unknown model, which a driven run never sees)", equivalent=False),
    Note("claude_code", "memo[counter] = 0  # the counts of qPs/zPs are per request", _RESET_AFTER_SUCCESS,
         equivalent=False),
    Note("claude_code", 'memo["retries"] = 1', "the count after a reply with no block and no stop reason "
         "decides only if ten failures follow it (rec-gemini-prompt-blocked-no-candidates ends after one)",
         equivalent=False),
    Note("claude_code", 'memo["output_limit"] = 0', "a reset of the output-limit budget at a tool round: only "
         "three cut replies, a tool round, then a fourth cut tell it apart; no sequence has them", equivalent=False),
    Note("claude_code", 'silent: int = 0 if turn.content and turn.content.strip() else memo.get',
         "a text round restarts the silent count: only a run with text rounds and then four or more silent "
         "ones before its answer tells 0 from 1; none", ("0 -> 1",), equivalent=False),
    Note("claude_code", 'silent: int = 0 if turn.content and turn.content.strip() else memo.get',
         "counting by 2 modulo 5 reaches 5 at the same rounds as counting by 1 (2, 4, 1, 3, 5)", ("1 -> 2",)),
    Note("claude_code", 'if silent == SILENT_TURNS and memo.get("silent_sent", 0) < SILENT_MAX:',
         "the check's default is read only before the key is set, and -1, 0 and 1 all pass `< 3`; the count "
         "itself is set from its own default on the next line"),
    # gemini_cli, reviewed line by line (0.61.0 port)
    Note("gemini_cli", '_KIND_CODE = {"rate_limit": 429, "quota": 429', "a status-less in-stream rate_limit or "
         "quota error: 428 and 430 are not retryable where 429 is; no sequence sends one to this port",
         ("429 -> 428", "429 -> 430"), equivalent=False),
    *(Note("gemini_cli", line, "the code of a status-less in-stream error is only tested by _retryable, and each "
           "change keeps it in its class (5xx and 499 retryable; 4xx other than 429 not)") for line in (
        '_KIND_CODE = {"rate_limit": 429, "quota": 429', '"context_overflow": 400, "invalid_request": 400',
        '"not_found": 404, "content_filter": 400, "stream_error": 500')),
    Note("gemini_cli", 'return mode, err.status if err.status is not None else _KIND_CODE.',
         "every error kind served in the stream is in _KIND_CODE (the three others return earlier as cut or "
         "end): the default is never read"),
    Note("gemini_cli", "return code is not None and (code in (429, 499) or 500 <= code < 600)", _499,
         ("499 -> 498", "499 -> 500"), equivalent=False),
    Note("gemini_cli", "return code is not None and (code in (429, 499) or 500 <= code < 600)",
         "499 is retryable by the tuple already", ("500 -> 499",)),
    Note("gemini_cli", "return code is not None and (code in (429, 499) or 500 <= code < 600)",
         "there is no HTTP status 600 or above", ("< -> <=", "600 -> 601")),
    Note("gemini_cli", "return code is not None and (code in (429, 499) or 500 <= code < 600)",
         "only a status 599 tells it apart; no provider API sends 599", ("600 -> 599",), equivalent=False),
    Note("gemini_cli", "for k in range(1, 6):", "a repeated cycle of 5 (or 6) different calls, 25 (30) calls "
         "long: the catalogue's repeats are cycles of one call", equivalent=False),
    Note("gemini_cli", "memo.update(attempt=0, http=0, nudged=False, function_response=functio",
         "the budgets restart at each tool round: only a tool round followed by four invalid streams, or by "
         "ten failed HTTP attempts, tells it apart; the catalogue's long failures start the run", equivalent=False),
    Note("gemini_cli", "if code == 404 or not _retryable(code) or http + 1 >= HTTP_ATTEMPTS:",
         "404 is not retryable, so `not _retryable(code)` stops it anyway (and 403, 405 too)",
         ("404 -> 403", "404 -> 405")),
    Note("gemini_cli", 'memo["http"] = 0', "the HTTP budget after an in-stream error: only HTTP failures "
         "reaching 10 after one tell it apart; none", next='if not _retryable(code) or attempt + 1', equivalent=False),
    Note("gemini_cli", "if not _retryable(code) or attempt + 1 >= MID_STREAM_ATTEMPTS:", "the mid-stream budget "
         "of 4: no sequence sends four retryable in-stream errors in a row (chat-network-flaky-after-tools sends "
         "one, then a cut)", equivalent=False),
    Note("gemini_cli", "memo.update(attempt=attempt + 1, nudged=False)", "the mid-stream budget of 4: no "
         "sequence sends four retryable in-stream errors in a row", equivalent=False),
    Note("gemini_cli", 'memo["http"] = 0', _RESET_AFTER_SUCCESS, next="finish = None if err is not None",
         equivalent=False),
    Note("gemini_cli", 'if memo.get("loops", 0) >= 1:', "-1 and 0 both fail `>= 1`", ("0 -> -1",)),
    Note("gemini_cli", 'memo["loops"] = 1', "only `>= 1` reads it, which 2 passes too", ("1 -> 2",)),
    # precise ones
    Note("hermes", "1024 <= limit <= 10_000_000", "no sequence reports a context window at either bound of "
         "Hermes' plausibility range (1,024 and 10,000,000 tokens): the recorded windows are 128,000 and 200,000",
         equivalent=False),
    Note("learn_claude_code_s01", "_EMPTY_USER.format(turn=6, step=8)", "text of a CONFORMANCE_EXPLAINED "
         "entry, read by the conformance report only: no replay reads it"),
    Note("openai_agents", 'return Stop("ModelRefusalError", ok=False, rule="refusal")', "the Responses branch's "
         "refusal stop (the Chat branch's, later in the file, is caught): no Responses sequence carries a refusal "
         "part yet", equivalent=False, next="return Stop(\"final_output\""),
    Note("opencode", "status in (408, 409, 429) or status >= 500 or kind in RETRYABLE_KINDS", "every 5xx error "
         "in the catalogue also has a retryable kind (server_error, overloaded), so the status test never "
         "decides alone", ("<= -> <", ">= -> >", "500 -> 501"), equivalent=False),
    # vercel_ai and vercel_ai_steps: the shared rules (predicates/_vercel_ai.py), judged on both columns
    Note("vercel_ai", "STEP_LIMIT = 1", "the limit is compared (`steps >= limit`) after the step count is "
         "incremented, so it is at least 1 and limits 0 and 1 stop at the same step", ("1 -> 0",)),
    Note("_vercel_ai", "INITIAL_DELAY_MS = 2000", "the retry back-off's first delay, said for the record: no "
         "rule reads it (the replay has no clock)"),
    Note("_vercel_ai", "return err.status in _RETRY_STATUS or err.status >= 500", _499, ("500 -> 499",),
         equivalent=False),
    Note("_vercel_ai", 'return "tool-calls" if has_calls else "other"', "a Responses incomplete reason other "
         "than max_output_tokens and content_filter; no sequence has one", equivalent=False),
    Note("_vercel_ai", 'memo["attempts"] = 0', _BEFORE_STOP, next="return Stop("),
    # smolagents (issue 12)
    Note("smolagents", "return err.status in _RETRY_STATUS or err.status >= 500", _499, ("500 -> 499",),
         equivalent=False),
    Note("smolagents", 'memo.get("client", 0) < CLIENT_RETRIES', _DEFAULT_BELOW),
    *(Note("smolagents", line, "smolagents' rate-limit retrier (3 attempts, each with the client's own 2 retries): "
           "only a rate limit that outlasts the client's retries tells these apart, and every 429 of the catalogue "
           "is answered within them (chat-error-rate-limit, chat-transient-errors-after-tools); "
           "tests/ports/test_smolagents.py pins the 9 requests of a persistent 429", equivalent=False)
      for line in ("RATE_LIMIT_ATTEMPTS = 3", 'memo.get("attempt", 1) < RATE_LIMIT_ATTEMPTS',
                   'memo["attempt"] = memo.get("attempt", 1) + 1', 'memo["client"], memo["attempt"] = 0, 1')),
    Note("smolagents", 'memo["client"] = 0', "the client counter reset before the rate-limit retrier's next "
         "attempt (or the stop): only a rate limit that outlasts the client's retries and then meets another "
         "error reads it; no sequence has one", equivalent=False),
    Note("smolagents", 'return err.status == 429 or err.kind == "rate_limit"', "every 429 of the catalogue has "
         "kind rate_limit, so the status test never decides alone", equivalent=False),
    Note("smolagents", 'return Stop("max_steps_error", ok=False, rule="max-steps-answer")', "an error answering "
         "the request after the 20th step (provide_final_answer catches it): no sequence errs at request 21",
         ("Stop: ok inverted",), equivalent=False, next="return Stop(\"api_error\""),
    *(Note("smolagents", line, "final_answer, smolagents' own tool: no sequence calls it (the rule is declared "
           "unreachable; tests/ports/test_smolagents.py pins it)", equivalent=False)
      for line in ('return not isinstance(value, dict) or set(value) == {"answer"}', "if len(turn.tool_calls) > 1:",
                   'return Stop("final_answer", ok=True, rule="final-answer"')),
    Note("smolagents", 'return Remind("tool-error", message=RETRY_NOTE)', "a final_answer beside other calls: no "
         "sequence calls final_answer", ("Remind -> Resend",), equivalent=False, next='return Stop("final_answer"'),
    Note("smolagents", 'return Remind("tool-error", message=RETRY_NOTE)', "a tool call written as JSON in text "
         "that does not validate: the one sequence with such text (chat-tool-call-as-text) names a tool with "
         "arguments", ("Remind -> Resend",), equivalent=False, next="if name == FINAL_ANSWER:"),
    Note("smolagents", 'data = json.loads(content[content.find("{"): content.rfind("}") + 1], strict=False)',
         "a text whose last character is not its last '}' tells the slice's end apart; the one text tool call of "
         "the catalogue ends with it", ("1 -> 2",), equivalent=False),
    Note("smolagents", 'return Continue("tools", run=ALL if len(run) == len(turn.tool_calls) else run)',
         "calls sharing an id in one turn (one of them dropped): no sequence has two in one turn "
         "(chat-repeat-same-call repeats an id across turns); tests/ports/test_smolagents.py pins it",
         equivalent=False),
)
"""Surviving mutants that are explained: equivalent, or a coverage gap said out loud."""


@dataclass(frozen=True, slots=True)
class Mutant:
    """One change to one port file: where, what kind, and the mutated source.

    `columns` are the columns whose golden cells judge it: empty for a column's own file (the
    column `port`), the columns that load it for a shared rules module."""

    port: str
    path: Path
    line: int
    kind: Kind
    change: str
    line_text: str
    source: str
    next_text: str = ""
    columns: tuple[str, ...] = ()

    def judged_by(self) -> tuple[str, ...]:
        return self.columns or (self.port,)

    def where(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}:{self.line}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A mutant's result: caught (and by which cell, or because it hung) or survived."""

    mutant: Mutant
    caught: bool
    detail: str


# ---------------------------------------------------------------- making mutants


@dataclass(frozen=True, slots=True)
class _Site:
    index: int          # position of the node in ast.walk order
    kind: Kind
    variant: int        # which of the node's mutations (a constant has +1 and -1)


def _sites(tree: ast.AST) -> list[_Site]:
    out: list[_Site] = []
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            out += [_Site(i, "constant", 0), _Site(i, "constant", 1)]
        elif isinstance(node, ast.Compare):
            out += [_Site(i, "comparison", j) for j, op in enumerate(node.ops) if type(op) in _FLIP]
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            out.append(_Site(i, "negation", 0))
        elif isinstance(node, ast.comprehension):
            out += [_Site(i, "negation", j) for j in range(len(node.ifs))]
        elif isinstance(node, ast.Return) and _decision_call(node.value) is not None:
            out.append(_Site(i, "decision", 0))
    return out


def _decision_call(node: ast.AST | None) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DECISIONS:
        return node
    return None


def _rule_arg(call: ast.Call) -> ast.expr:
    """The rule a decision call names: the `rule=` keyword, else its first positional argument
    (Stop's rule is keyword-only in practice; Continue/Resend/Remind take it first)."""
    for kw in call.keywords:
        if kw.arg == "rule":
            return kw.value
    return call.args[0] if call.args else ast.Constant("?")


def _apply(node: ast.AST, site: _Site) -> str:
    """Mutate `node` in place for `site`; return the change as text."""
    if site.kind == "constant":
        assert isinstance(node, ast.Constant)
        old = node.value
        assert isinstance(old, (int, float))
        node.value = old + 1 if site.variant == 0 else old - 1
        return f"{old!r} -> {node.value!r}"
    if site.kind == "comparison":
        assert isinstance(node, ast.Compare)
        op = node.ops[site.variant]
        new = _FLIP[type(op)]()
        node.ops[site.variant] = new
        return f"{_OP_TEXT[type(op)]} -> {_OP_TEXT[type(new)]}"
    if site.kind == "negation":
        if isinstance(node, ast.comprehension):
            cond = node.ifs[site.variant]
            node.ifs[site.variant] = ast.UnaryOp(ast.Not(), cond)
        else:
            assert isinstance(node, (ast.If, ast.While, ast.IfExp))
            cond = node.test
            node.test = ast.UnaryOp(ast.Not(), cond)
        return f"`{_short(ast.unparse(cond))}` negated"
    assert isinstance(node, ast.Return)
    call = _decision_call(node.value)
    assert call is not None
    name = call.func.id  # type: ignore[attr-defined]
    if name == "Stop":
        for kw in call.keywords:
            if kw.arg == "ok":
                kw.value = ast.UnaryOp(ast.Not(), kw.value)
                break
        else:
            call.args[1] = ast.UnaryOp(ast.Not(), call.args[1])
        return "Stop: ok inverted"
    rule = _rule_arg(call)
    if name == "Resend":
        node.value = ast.Call(ast.Name("Continue", ast.Load()), [rule],
                              [ast.keyword("run", ast.Tuple([], ast.Load()))])
        return "Resend -> Continue (no calls run)"
    node.value = ast.Call(ast.Name("Resend", ast.Load()), [rule], [])
    return f"{name} -> Resend"


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def mutants(port: str, path: Path, columns: tuple[str, ...] = ()) -> Iterator[Mutant]:
    """Every mutant of one port file (or shared rules module, judged by `columns`), in source
    order of the walk (deterministic)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    for site in _sites(tree):
        fresh = copy.deepcopy(tree)
        node = next(n for i, n in enumerate(ast.walk(fresh)) if i == site.index)
        line = getattr(node, "lineno", 0)
        change = _apply(node, site)
        ast.fix_missing_locations(fresh)
        yield Mutant(port=port, path=path, line=line, kind=site.kind, change=change,
                     line_text=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                     source=ast.unparse(fresh),
                     next_text=lines[line].strip() if 0 < line < len(lines) else "", columns=columns)


def explain(mutant: Mutant) -> Note | None:
    """The note that explains why `mutant` survives, if any."""
    return next((n for n in NOTES if n.explains(mutant)), None)


# ---------------------------------------------------------------- checking mutants


def check(mutant: Mutant, sequences: Seq[Sequence], golden: Golden, workdir: Path,
          timeout: float = DEFAULT_DECISION_TIMEOUT) -> Verdict:
    """Load the mutant from `workdir` (beside copies of the shared rules modules and of the columns
    judging it), replay every sequence with a reviewed cell of those columns, stop at the first cell
    that no longer matches its golden cell. A decision (or the import) that takes more than
    `timeout` seconds crashes its cell (:mod:`bench.engine.contain`), which is a difference too."""
    source_dir = mutant.path.parent
    for name in [f"{c}.py" for c in mutant.judged_by()] + [p.name for p in source_dir.glob(f"{SHARED_PREFIX}*.py")]:
        if not (workdir / name).exists() and (source_dir / name).is_file():
            shutil.copy2(source_dir / name, workdir / name)
    target = workdir / mutant.path.name
    target.write_text(mutant.source, encoding="utf-8")
    # no bytecode: two mutants of one file of the same size written within a second would otherwise
    # share a cached .pyc (validated by the source's size and mtime in seconds) and the second be
    # judged as the first
    shutil.rmtree(workdir / "__pycache__", ignore_errors=True)
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    shared = [p.stem for p in workdir.glob(f"{SHARED_PREFIX}*.py")]
    names = [f"stopbench_predicates.{n}" for n in (*mutant.judged_by(), *shared)]
    saved = {n: sys.modules.pop(n, None) for n in names}
    try:
        with decision_time_limit(timeout):
            loaded: list[Predicate] = []
            for column in mutant.judged_by():
                one = load_file(workdir / f"{column}.py")
                if not isinstance(one, Predicate):
                    return Verdict(mutant, True, f"{column} does not load: {one.error}")
                loaded.append(one)
            for seq in sequences:
                for column, predicate in zip(mutant.judged_by(), loaded, strict=True):
                    exp = golden.expectation(column, seq.id)
                    if exp is None:
                        continue
                    diff = compare(replay(seq, predicate, judged=False), exp)
                    if diff is not None:
                        where = f"{column} on " if mutant.columns else ""
                        return Verdict(mutant, True, f"{where}{seq.id}: {diff.what}")
    finally:
        for n, module in saved.items():
            if module is not None:
                sys.modules[n] = module
            else:
                sys.modules.pop(n, None)
        shutil.copy2(mutant.path, target)  # the next mutant of another file loads this one unchanged
        sys.dont_write_bytecode = writes_bytecode
    return Verdict(mutant, False, "every reviewed cell still matches")


def ports(predicates_dir: Path) -> list[tuple[str, Path]]:
    """(name, file) of every port in the folder: source not "constructed", plus the reference loop."""
    out = []
    for path in sorted(predicates_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        loaded = load_file(path)
        sys.modules.pop(f"stopbench_predicates.{path.stem}", None)
        if not isinstance(loaded, Predicate):
            continue
        if path.stem == REFERENCE or not loaded.source.startswith("constructed"):
            out.append((path.stem, path))
    return out


def targets(predicates_dir: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """What the sweep mutates: (name, file, columns judging it) of every port (columns empty: the
    port itself), then of every shared rules module a port loads (its name is its file's stem)."""
    found = ports(predicates_dir)
    names = {name for name, _ in found}
    shared = [(path.stem, path, tuple(c for c in cols if c in names))
              for path, cols in shared_users(predicates_dir).items()]
    return [(name, path, ()) for name, path in found] + [t for t in shared if t[2]]


def sweep(predicates_dir: Path, sequences_dir: Path, expected_dir: Path, only: Seq[str] = (),
          select: Callable[[Mutant], bool] | None = None) -> Iterator[Verdict]:
    """Every mutant of every port and shared rules module (or of those named in `only`, and of the
    shared rules modules the named ports load), checked."""
    catalogue = load_catalogue(sequences_dir)
    golden = load_golden(expected_dir)
    with tempfile.TemporaryDirectory(prefix="stopbench-mutate-") as tmp:
        work = Path(tmp)
        for name, path, columns in targets(predicates_dir):
            if only and name not in only and not set(columns) & set(only):
                continue
            for mutant in mutants(name, path, columns):
                if select is None or select(mutant):
                    yield check(mutant, catalogue.sequences, golden, work)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", nargs="*", help="only these ports (default: every port)")
    parser.add_argument("--predicates", type=Path, default=Path("predicates"))
    parser.add_argument("--sequences", type=Path, default=Path("sequences"))
    parser.add_argument("--expected", type=Path, default=Path("expected"))
    args = parser.parse_args(argv)
    # unusable input is one line each and exit 2, before any mutant is made
    try:
        problems = [*load_catalogue(args.sequences).problems, *load_golden(args.expected).problems]
    except UnusableInput as exc:
        problems = [str(exc)]
    if not args.predicates.is_dir() or not any(args.predicates.glob("*.py")):
        problems.append(f"{args.predicates}: no predicate files")
    if problems:
        for line in problems:
            print(line, file=sys.stderr)
        return 2
    started = time.perf_counter()
    by_port: dict[str, list[Verdict]] = {}
    for verdict in sweep(args.predicates, args.sequences, args.expected, args.port):
        by_port.setdefault(verdict.mutant.port, []).append(verdict)
    unexplained = 0
    for port, verdicts in by_port.items():
        caught = sum(v.caught for v in verdicts)
        per_kind = ", ".join(f"{k} {sum(v.caught for v in verdicts if v.mutant.kind == k)}/"
                             f"{sum(v.mutant.kind == k for v in verdicts)}" for k in KINDS)
        judged = verdicts[0].mutant.columns
        shown = f"{port} (judged on {', '.join(judged)})" if judged else port
        print(f"{shown}: {caught}/{len(verdicts)} mutants caught ({per_kind})")
        for v in verdicts:
            if v.caught:
                continue
            m = v.mutant
            note = explain(m)
            unexplained += note is None
            label = "SURVIVED" if note is None else ("equivalent" if note.equivalent else "gap")
            print(f"  {label}: {m.where()} [{m.kind}] {m.change}: {_short(m.line_text, 90)}")
            if note is not None:
                print(f"      {note.why}")
    if not args.port:
        survivors = [v.mutant for vs in by_port.values() for v in vs if not v.caught]
        for note in NOTES:
            if not any(note.explains(m) for m in survivors):
                print(f"note explains no survivor any more (remove it): {note.port}: {note.line}")
    total = sum(len(v) for v in by_port.values())
    caught = sum(v.caught for vs in by_port.values() for v in vs)
    print(f"total: {caught}/{total} mutants caught, {unexplained} unexplained survivor(s), "
          f"{time.perf_counter() - started:.1f} s")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
