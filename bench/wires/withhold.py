"""A turn's tool calls are served only to a request that lets the model call a tool.

A model offered no tools cannot call one: a real provider answers such a request in text (AutoGen's
final reflection request is one: the history, no tools). So when a request carries no tools and the
turn answering it has calls, the server serves the turn's text alone, with the wire's normal end in
place of a tool-call finish (any other finish, e.g. a cut-off, stays; a call with a blank name,
which names no tool, is served as it is), and marks the step
(:data:`WITHHELD`) so the cell and the table can show that the client was not served the turn as
written.

A request whose tool choice is ``none`` (Chat and Responses ``tool_choice: "none"``, Anthropic
``{"type": "none"}``, Gemini ``functionCallingConfig.mode: NONE``) is answered the same way, as each
provider documents it: OpenAI, "none means the model will not call any tool and instead generates a
message" (https://platform.openai.com/docs/api-reference/chat/create, ``tool_choice``; the same words
for Responses, https://platform.openai.com/docs/api-reference/responses/create); Anthropic, "none
prevents Claude from using any tools" (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use,
"Forcing tool use"); Gemini, "NONE: Model will not predict any function calls. Model behavior is same
as when not passing any function declarations" (https://ai.google.dev/api/caching#Mode). No call is
served then, not even one with a blank name, and a turn left without text says so in a short text
(:data:`NONE_TEXT`: a message is what those APIs send); the step is marked :data:`BENT_NONE`.
Bedrock Converse has no such choice (its ``toolChoice`` is ``auto``, ``any`` or ``tool``).

A request that forces a call (``required``, Anthropic and Bedrock ``any``, Gemini ``ANY``, or a named
tool) answered by a turn without that call is served as written: the script's next turns follow its
calls, and a call the bench made up (which tool, which arguments) would be a turn no recording has.
The step is marked (:func:`unmet`) so the cell says the answer is one that API would not give.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.engine.model import Dialect, Turn
from bench.wires import dialects
from bench.wires.base import offers_tools

WITHHELD = "tool calls withheld: the request offered no tools"
"""The note on a step whose turn's calls were not served because the request offered no tools."""

BENT_NONE = "script bent by tool_choice none: tool calls withheld"
"""The note on a step whose turn's calls were not served because the request's tool choice is ``none``."""

NONE_TEXT = "No tool was called: the request's tool choice is none."
"""The text served under tool choice ``none`` for a turn that has calls and no text."""

_FREE = "auto"
"""The tool choice that forces nothing (also a request without one)."""


def unmet(choice: str) -> str:
    """The note on a step served a turn without the call that tool choice `choice` forces."""
    return f"tool_choice {choice} not honoured: the scripted turn makes no such call and is served as written"


def without_calls(turn: Turn, body: dict[str, Any], dialect: Dialect,
                  offered: bool | None = None, choice: str = "auto") -> tuple[Turn, str]:
    """The turn as served to `body` and the step's note: the turn itself and no note when the
    request offers tools, its tool choice (`choice`, in the words of
    :func:`bench.wires.base.tool_choice`) allows calls and the turn makes the call it forces;
    else as the module says.

    A call with a blank name names no tool: it is a glitch of the stream (an accumulator keyed on
    the index; a recorded OpenRouter stream repeats a call's id and name in its deltas, simonw/llm
    tests/cassettes/test_tools_streaming/test_tools_streaming_variant_a.yaml), not the model's
    choice of a tool, and is served as recorded to a request that offers no tools (a program whose
    tools come from such a sequence is offered none).
    `offered`: whether the request offers tools as its wire says it
    (:meth:`bench.wires.base.Wire.offers_tools`); None: as :func:`offers_tools` reads `body`.
    """
    named = any(c.name for c in turn.tool_calls)
    if not (offers_tools(body) if offered is None else offered):
        return (as_noted(turn, WITHHELD, dialect), WITHHELD) if named else (turn, "")
    if choice == "none":
        return (as_noted(turn, BENT_NONE, dialect), BENT_NONE) if turn.tool_calls else (turn, "")
    if choice == "required":
        return (turn, "") if named else (turn, unmet(choice))
    if choice == _FREE or choice[:1] in ("{", "[", '"') or any(c.name == choice for c in turn.tool_calls):
        return turn, ""  # (a choice the bench does not read, kept as its JSON: not judged)
    return turn, unmet(choice)


def as_noted(turn: Turn, note: str, dialect: Dialect) -> Turn:
    """`turn` as served to a step noted `note` (its notes joined by ``; ``): without its calls when
    they were withheld (:data:`WITHHELD`: those that name a tool; :data:`BENT_NONE`: all of them, the
    text :data:`NONE_TEXT` when it has none), a tool-call finish then replaced by the normal end of
    `dialect` when no call is left; else as it is."""
    notes = note.split("; ")
    if BENT_NONE in notes:
        left: tuple[Any, ...] = ()
        turn = turn if turn.content else replace(turn, content=NONE_TEXT)
    elif WITHHELD in notes:
        left = tuple(c for c in turn.tool_calls if not c.name)
    else:
        return turn
    if left or turn.finish != "tool_calls":
        return replace(turn, tool_calls=left)
    return replace(turn, tool_calls=(), finish="stop", finish_raw=dialects.default_raw(dialect, "stop"))
