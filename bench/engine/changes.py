"""A decision's request changes as data and as text: one form for every output that shows them.

A :class:`~bench.engine.model.RequestChanges` says what a loop changes in its next request beyond adding
messages (a higher ``max_tokens``, a fallback model, a compacted context, a forced tool choice).
Golden files, JSON lines, conformance records and the page write it as a mapping of the fields
that are set, in the model's field order (``{max_tokens: 8192}``); tables and labels write it as
``+max_tokens=8192`` (``+compact`` for the flag). Reading the mapping back refuses unknown keys
and wrong types with one line naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.engine.model import RequestChanges, Step

FIELDS: tuple[str, ...] = ("max_tokens", "model", "compact", "tool_choice")
"""RequestChanges' fields, in the order every output writes them."""


def changes_data(changes: RequestChanges | None) -> dict[str, Any] | None:
    """The fields that are set, in field order; None for no changes."""
    if changes is None:
        return None
    out: dict[str, Any] = {}
    if changes.max_tokens is not None:
        out["max_tokens"] = changes.max_tokens
    if changes.model is not None:
        out["model"] = changes.model
    if changes.compact:
        out["compact"] = True
    if changes.tool_choice is not None:
        out["tool_choice"] = changes.tool_choice
    return out or None


def changes_text(changes: RequestChanges | None) -> str:
    """``+max_tokens=8192 +compact``; empty for no changes."""
    data = changes_data(changes)
    if not data:
        return ""
    return " ".join("+compact" if k == "compact" else f"+{k}={v}" for k, v in data.items())


def step_text(step: Step) -> str:
    """A step as a decision path writes it: ``<action> <rule>`` and its changes, if any."""
    text = f"{step.decision.action} {step.decision.rule}"
    extra = changes_text(step.decision.changes)
    return f"{text} {extra}" if extra else text


class ChangesError(ValueError):
    """A changes mapping that is not one: the message names the field."""


def changes_from(data: object, where: str = "changes") -> RequestChanges | None:
    """A mapping as :func:`changes_data` writes it, back as RequestChanges (None or {}: none)."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise ChangesError(f"{where}: expected a mapping of {', '.join(FIELDS)}")
    for key in data:
        if key not in FIELDS:
            raise ChangesError(f"{where}.{key}: not a request change (expected one of {', '.join(FIELDS)})")
    mt, model, compact, choice = (data.get(k) for k in FIELDS)
    if mt is not None and (type(mt) is not int or mt <= 0):
        raise ChangesError(f"{where}.max_tokens: expected a positive whole number, not {mt!r:.40}")
    for key, value in (("model", model), ("tool_choice", choice)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ChangesError(f"{where}.{key}: expected a non-empty string, not {value!r:.40}")
    if compact is not None and type(compact) is not bool:
        raise ChangesError(f"{where}.compact: expected true or false, not {compact!r:.40}")
    changes = RequestChanges(max_tokens=mt, model=model, compact=bool(compact), tool_choice=choice)
    return None if changes == RequestChanges() else changes
