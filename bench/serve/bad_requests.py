"""Requests a provider would refuse, refused the same way: they are the client's problem, not the bench's.

A body that is not JSON a provider accepts (``NaN`` and ``Infinity`` are not JSON; a body nested
deeper than :data:`MAX_DEPTH`), or a request whose conversation field has the wrong type
(``{"messages": 5}``), gets HTTP 400 with the provider's error body, consumes no turn and is noted
in the run; nothing the server reads later (the observation, the records, ``--observed``) can
then fail on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from bench.wires import registry

MAX_DEPTH = 64
"""How deeply a request body may nest arrays and objects (a model request's deepest part, a tool's
JSON schema, is a few levels; the parsers of the bench's readers recurse)."""

_TYPE_NAMES: dict[type, str] = {list: "an array", str: "a string"}


class BadRequest(ValueError):
    """A request body a provider would refuse with 400; the message is one line."""


def _no_constant(name: str) -> Any:
    raise BadRequest(f"the body is not valid JSON: {name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
"""One decoder for every body: ``json.loads(raw, parse_constant=...)`` builds a new one per call."""


_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
"""A translation table: every ASCII digit to ``0``, every other byte to a space."""
_LONG_NUMBER = b"0" * 19
"""A run of digits, once translated by :data:`_DIGITS`, that may be an integer orjson reads as a float
(outside 64 bits): such a body is read by json instead. A translation and a substring search cost a
fraction of a regular expression's scan of the body."""


def parse(raw: bytes) -> Any:
    """The JSON value of a request body, as ``json.loads`` reads it. Raises :class:`BadRequest` for
    invalid JSON (``NaN`` and ``Infinity`` included) and for a body nested deeper than :data:`MAX_DEPTH`.

    orjson reads it first (a request is read on every model call, and the standard library's reader is
    the largest part of the server's own cost of one: docs/reference/performance.md); whatever orjson
    does not read as json does, it refuses, and json reads it then, with json's value or json's words
    for the error: a body with another encoding or a byte-order mark, a lone surrogate, a number out of
    a double's range, ``NaN``, deep nesting. The one value orjson reads otherwise without refusing it,
    an integer outside 64 bits (a float to orjson), is never given to it: a body with a run of 19 digits
    goes to json. tests/properties/test_request_parse.py compares the two readers on generated bodies."""
    if _LONG_NUMBER not in raw.translate(_DIGITS):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            return _shallow(value, raw)
    return parse_by_json(raw)


def parse_by_json(raw: bytes) -> Any:
    """:func:`parse` with the standard library's reader alone."""
    try:
        # what json.loads does with bytes (any of the encodings JSON allows), with the decoder kept
        value = _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except RecursionError:
        raise BadRequest(f"the body is nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8") from None
    except ValueError as exc:
        if isinstance(exc, BadRequest):
            raise
        raise BadRequest(f"the body is not valid JSON: {exc}") from None
    return _shallow(value, raw)


def _shallow(value: Any, raw: bytes) -> Any:
    """`value`, read from `raw`, unless it nests deeper than :data:`MAX_DEPTH`."""
    # fewer brackets than the limit cannot nest deeper than it: most requests skip the walk
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and depth(value) > MAX_DEPTH:
        raise BadRequest(f"the body is nested deeper than {MAX_DEPTH} levels")
    return value


def depth(value: Any) -> int:
    """How deeply `value` nests arrays and objects (a scalar is 0), without recursion: one layer of
    containers at a time, stopping past :data:`MAX_DEPTH` (scalars are never queued, so a long
    conversation costs a pass over its containers)."""
    level = 0
    layer = [value] if isinstance(value, (dict, list)) else []
    while layer:
        level += 1
        if level > MAX_DEPTH:
            return level
        below = []
        for item in layer:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    below.append(child)
        layer = below
    return level


def problem(wire: str, body: dict[str, Any], read: Callable[[dict[str, Any]], object]) -> str | None:
    """Why a provider would refuse `body` on `wire` (one line), or None: its conversation field
    missing or of the wrong type, or a conversation `read` (the server's reduction of it) cannot read."""
    key, types, required = registry.wire(wire).conversation_field
    if key not in body:
        return f"{key}: a required field is missing" if required else None
    if not isinstance(body[key], types):
        wanted = " or ".join(_TYPE_NAMES[t] for t in types)
        return f"{key}: expected {wanted}, got {json.dumps(body[key])[:40]}"
    try:
        read(body)
    except Exception as exc:  # any part of the conversation of an unexpected type
        return f"{key}: a part of it cannot be read ({type(exc).__name__}: {exc})"[:200]
    return None
