"""Whether a tool result says its call ran or failed, and how that was known.

A loop's next request carries a result for each call it answered. The server judges each result
by the first of these that applies, and says which one did (the cell shows it per call):

* ``executed``: the program ran the bench's tools (:mod:`bench.serve.tools`). The result carries
  an execution's token, or an execution of the turn's step has the call's name and exact
  arguments (for results in user text: the execution's whole content): the execution's own
  outcome decides. When the program used the tool endpoint in
  this run but no execution answers the call, the call never reached the tool (the loop refused
  it, e.g. arguments its validation rejected): failed.
* ``flag``: the wire's error flag on the result (Anthropic ``is_error``, a Gemini response with
  ``error``), when the client sent one.
* ``marker``: ``error_marker`` in the text makes it failed; with an ``ok_marker`` a result without
  it is failed and one with it ran (the driver's or the program's own tools put them there).
* ``wording``: the fallback guess (:func:`says_failed`): a result whose text starts with "error"
  (any case), or opens with a refusal in the words a framework or library uses for a call it
  would not run (:data:`REFUSALS`), failed. A guess: the verdicts that rest on it say so
  (:func:`bench.engine.judge.judge`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Literal, TypeAlias

from bench.engine.model import Turn
from bench.serve.tools import Execution, execution_by_token, executions_by_token, parsed_arguments

Known: TypeAlias = Literal["executed", "flag", "marker", "wording"]
KNOWN: tuple[Known, ...] = ("executed", "flag", "marker", "wording")


def starts_with_error(text: str) -> bool:
    """The wording rule: a result's text starting with 'error' (after quotes and brackets)."""
    t = text.lstrip(" \t\r\n{[\"'")
    return t[:5].lower() == "error"


REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b\d+ validation errors? for \S", re.IGNORECASE),
     "pydantic's ValidationError as str() writes it, '1 validation error for Args' then a line per error "
     "(pydantic/pydantic-core v2.41.5, src/errors/validation_exception.rs L96-107, ValidationError.display): "
     "what a Python loop or tool that validates arguments with pydantic sends back"),
    (re.compile(r"^\W*encountered error: ", re.IGNORECASE),
     "LlamaIndex's result for a tool that raised, 'Encountered error: ' + str(e), a pydantic validation error "
     "among them (run-llama/llama_index 07a9358d, llama-index-core/llama_index/core/tools/calling.py L46-54, "
     "call_tool)"),
    (re.compile(r"\binvalid input for tool\b", re.IGNORECASE),
     "the Vercel AI SDK's InvalidToolInputError, 'Invalid input for tool <name>: <cause>' (vercel/ai ai@7.0.77, "
     "packages/ai/src/error/invalid-tool-input-error.ts L17), the error result of a call whose input fails "
     "its schema"),
    (re.compile(r"\binvalid arguments for tool\b", re.IGNORECASE),
     "the MCP TypeScript SDK's server, 'Input validation error: Invalid arguments for tool <name>: ...' "
     "(modelcontextprotocol/typescript-sdk 1.30.0, src/server/mcp.ts L278), a tool call whose arguments "
     "fail the tool's input schema"),
)
"""Refusal wordings (pattern, where it comes from) the fallback reads as a call that failed, each
searched in the first :data:`WORDING_HEAD` characters of a result."""

WORDING_HEAD = 300
"""Characters at the start of a result the refusal wordings are looked for in."""


def says_failed(text: str) -> bool:
    """The wording fallback: a result starting with 'error' (:func:`starts_with_error`), or one that
    opens with a refusal of :data:`REFUSALS`."""
    head = text[:WORDING_HEAD]
    return starts_with_error(text) or any(p.search(head) for p, _ in REFUSALS)


class ResultJudge:
    """Judges the results of one step's follow-up request (see the module docstring).

    `executions` are the run's executions, `step` the number of the model request the turn
    answered (an execution recorded with ``answered == step`` ran during that turn's round).
    Each execution answers at most one call.
    """

    def __init__(self, turn: Turn, *, step: int | None = None, executions: Sequence[Execution] = (),
                 ok_marker: str | None = None, error_marker: str | None = None,
                 wording: Callable[[str], bool] = says_failed, bench_tools: bool = False) -> None:
        self.turn = turn
        self.bench_tools = bench_tools or bool(executions)
        """The program takes the bench's tools: it ran one in this run, or (`bench_tools`) it listed
        them (``GET /_stopbench/tools``, which the MCP servers ask at every ``tools/list``). Then a
        result no execution answers is a call that never reached a tool: failed, known ``executed``
        (a run whose every call was refused has no execution at all: Mastra's "Tool "" not found"
        for blank-named calls read as run by wording)."""
        self.ok_marker = ok_marker
        self.error_marker = error_marker
        self.wording = wording
        self.all = list(executions)
        self.here = [e for e in self.all if step is not None and e.answered == step]
        self.claimed: set[int] = set()
        self.answered: set[int] = set()
        """Calls answered by :meth:`in_text` (results in text of another kind)."""

    def in_text(self, text: str, done: Collection[int] = ()) -> list[tuple[int, Execution]]:
        """The calls of the turn (by index) that a text of another kind than a tool result answers
        (a client that sends results as user text, as smolagents does), each with its execution,
        claimed: by execution tokens, then by the whole content of an execution of this round (a
        scripted ``result:`` carries no token). An execution answers the first call with its name
        not in `done` nor answered so, the one with its exact arguments first."""
        out: list[tuple[int, Execution]] = []
        open_ = [e for e in self.all if e.n not in self.claimed]
        by_token = executions_by_token(text, open_)
        by_content = [e for e in self.here if e.n not in self.claimed and e not in by_token
                      and e.content.strip() and e.content.strip() in text]
        for e in [*by_token, *by_content]:
            open_calls = [k for k, c in enumerate(self.turn.tool_calls)
                          if c.name == e.name and k not in done and k not in self.answered]
            exact = [k for k in open_calls if parsed_arguments(self.turn.tool_calls[k]) == e.arguments]
            chosen = exact or open_calls
            if chosen:
                self.claimed.add(e.n)
                self.answered.add(chosen[0])
                out.append((chosen[0], e))
        return out

    def refused_in_text(self, text: str, done: Collection[int] = ()) -> list[int]:
        """The calls of the turn (by index) that a text of another kind than a tool result says the
        loop refused, in its own words: the program ran the bench's tools in this run, the text
        names the call's tool in quotes (``'bash'``, ``"bash"``, ```bash```) or its id, and no
        execution of this round has the call's name (smolagents: "Error executing tool 'bash' with
        arguments ...: ValueError ..."). Those calls failed, as a tool result without an execution
        does (the module docstring); words that name no open call stay a reminder."""
        if not self.bench_tools:
            return []
        ran = {e.name for e in self.here}
        out: list[int] = []
        for k, call in enumerate(self.turn.tool_calls):
            if k in done or k in self.answered or not call.name or call.name in ran:
                continue
            named = any(f"{q}{call.name}{q}" in text for q in ("'", '"', "`"))
            if named or (call.id and call.id in text):
                self.answered.add(k)
                out.append(k)
        return out

    def __call__(self, k: int, text: str, flag: bool | None) -> tuple[bool, Known]:
        """(failed, how it was known) for a result answering call `k` of the turn."""
        if self.bench_tools:
            found = execution_by_token(text, [e for e in self.all if e.n not in self.claimed])
            if found is None and k < len(self.turn.tool_calls):
                call = self.turn.tool_calls[k]
                args = parsed_arguments(call)
                found = next((e for e in self.here if e.n not in self.claimed and e.name == call.name
                              and args is not None and e.arguments == args), None)
            if found is not None:
                self.claimed.add(found.n)
                return found.is_error, "executed"
            return True, "executed"
        if flag is not None:
            return flag, "flag"
        if self.error_marker and self.error_marker in text:
            return True, "marker"
        if self.ok_marker:
            return self.ok_marker not in text, "marker"
        if self.error_marker:
            return False, "marker"
        return self.wording(text), "wording"


def ran_in_round(turn: Turn, step: int, executions: Sequence[Execution]) -> dict[int, Execution]:
    """The calls of `turn` (by index) that ran on the tool endpoint during its round, read from the
    executions alone: for a round no request followed (the loop ran the calls, then stopped
    without asking the model again: the Vercel AI SDK and Mastra run a step's calls before
    checking their step limit), or one whose request cannot be followed. An execution recorded
    with ``answered == step`` answers the call with its name and exact arguments, else the first
    still open call of its name (a framework may add defaulted arguments); each execution answers
    at most one call."""
    here = [e for e in executions if e.answered == step]
    found: dict[int, Execution] = {}
    claimed: set[int] = set()
    for exact in (True, False):
        for k, call in enumerate(turn.tool_calls):
            if k in found:
                continue
            args = parsed_arguments(call)
            e = next((e for e in here if e.n not in claimed and e.name == call.name
                      and (not exact or (args is not None and e.arguments == args))), None)
            if e is not None:
                found[k] = e
                claimed.add(e.n)
    return found
