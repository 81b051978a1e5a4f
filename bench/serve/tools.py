"""The sequence's tools served to the program, and every execution of them recorded.

A framework that runs the bench's tools (through ``GET/POST {url}/_stopbench/tools[/{name}]``, or
the MCP server that forwards to it) lets the observation *know* which calls ran, with their exact
arguments, instead of guessing from a result's wording. An execution is recorded in the current
run with the number of model requests answered when it ran, so it belongs to the turn the last
of those requests was answered with.

A successful execution answers ``STOPBENCH-OK <name> #<n>`` (`n`: the execution's number in the
run, from 1): the token lets a result in the next request be tied to its execution even when a
framework rewrites the arguments. A call whose sequence scripts its result (``result:``) answers
that text instead (a scripted result has no error flag: it is a successful run). A tool the
sequence does not have answers 404 ``unknown tool <name>`` and is recorded as a failed execution.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bench.engine.model import Sequence, ToolCall, Turn

OK_PREFIX = "STOPBENCH-OK"
"""The start of a successful execution's content."""

_TOKEN = re.compile(re.escape(OK_PREFIX) + r" (\S*) #(\d+)")


@dataclass(frozen=True, slots=True)
class Execution:
    """One POST to the tool endpoint: which tool, with what arguments, after how many model requests."""

    n: int
    name: str
    arguments: Any
    answered: int
    content: str
    is_error: bool

    def as_json(self) -> dict[str, Any]:
        return {"n": self.n, "name": self.name, "arguments": self.arguments, "answered": self.answered,
                "content": self.content, "is_error": self.is_error}


def ok_content(name: str, n: int) -> str:
    """What a successful execution answers: the marker, the tool's name and the execution's token."""
    return f"{OK_PREFIX} {name} #{n}"


def parsed_arguments(call: ToolCall) -> Any:
    """A call's arguments as JSON (an empty string is no arguments, ``{}``); None when not JSON."""
    text = call.arguments.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return None


def scripted_call(turn: Turn | None, name: str, arguments: Any) -> ToolCall | None:
    """The call of `turn` an execution of `name` with `arguments` answers: the one with the same
    name and arguments, else the first of that name (None: the turn has no call of that name)."""
    if turn is None:
        return None
    named = [c for c in turn.tool_calls if c.name == name]
    same = [c for c in named if parsed_arguments(c) == arguments]
    found = same or named
    return found[0] if found else None


def execution_by_token(text: str, executions: list[Execution]) -> Execution | None:
    """The execution whose token (``STOPBENCH-OK <name> #<n>``) a tool result's text carries."""
    found = executions_by_token(text, executions)
    return found[0] if found else None


def executions_by_token(text: str, executions: list[Execution]) -> list[Execution]:
    """Every execution whose token the text carries, in the order of the text, each once."""
    by_n = {e.n: e for e in executions}
    out: list[Execution] = []
    for m in _TOKEN.finditer(text):
        e = by_n.get(int(m.group(2)))
        if e is not None and e.name == m.group(1) and e not in out:
            out.append(e)
    return out


def tool_specs(sequence: Sequence) -> list[dict[str, Any]]:
    """The stub tools a driver registers: one per tool name the sequence calls.

    A stub requires the keys that every JSON-object argument of its calls has, so well-formed
    calls bind and arguments a loop replaces with {} do not (as with real tools, which all have a
    required parameter); empty arguments count as an empty object (a tool without parameters, as
    predicates/corecoder.py infers); a tool whose calls never carry a JSON object requires one
    parameter, `arg`.
    """
    keys: dict[str, set[str] | None] = {}
    for turn in sequence.turns:
        for call in turn.tool_calls:
            if not call.name:
                continue
            try:
                # empty arguments (never sent) stand for a tool without parameters
                value = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                value = None
            have = keys.setdefault(call.name, None)
            if isinstance(value, dict):
                keys[call.name] = set(value) if have is None else have & set(value)
    return [{"name": name, "required": sorted(req) if req is not None else ["arg"]} for name, req in keys.items()]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _property(value: Any) -> dict[str, Any]:
    """A property's schema after its value: its JSON type, and for an array its elements' (the first
    element's type; any, ``{}``, for an empty one): the OpenAI API refuses an array without ``items``."""
    schema: dict[str, Any] = {"type": _json_type(value)}
    if isinstance(value, list):
        schema["items"] = {"type": _json_type(value[0])} if value else {}
    return schema


def tool_schemas(sequence: Sequence) -> list[dict[str, Any]]:
    """The tools a sequence calls, as ``{"name", "description", "parameters"}`` with a JSON schema.

    Required keys are the conformance stubs' (:func:`tool_specs`: the keys
    every well-formed call of the tool carries, or one ``arg`` when no call carries a JSON
    object); every other key seen in some call is an optional property. A property's type is the
    JSON type of its first value in the sequence (an array's ``items`` too: :func:`_property`).
    """
    types: dict[str, dict[str, dict[str, Any]]] = {}
    for turn in sequence.turns:
        for call in turn.tool_calls:
            if not call.name:
                continue
            props = types.setdefault(call.name, {})
            try:
                value = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                continue
            if isinstance(value, dict):
                for key, v in value.items():
                    props.setdefault(str(key), _property(v))
    out: list[dict[str, Any]] = []
    for spec in tool_specs(sequence):
        name, required = spec["name"], list(spec["required"])
        props = dict(types.get(name, {}))
        for key in required:
            props.setdefault(key, {"type": "string"})
        out.append({"name": name, "description": f"the {name} tool (stopbench: run it as your loop would)",
                    "parameters": {"type": "object", "properties": dict(sorted(props.items())),
                                   "required": required}})
    return out
