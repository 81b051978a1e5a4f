"""An HTTP error status as each wire's provider sends it: the error type or code, the words, the
retry headers. The body itself is the wire's own error renderer's (``Wire.render`` of an error turn,
as for an error a sequence records); the wire's :attr:`~bench.wires.base.Wire.status_errors` (each
citing its provider's documentation) only choose what that error says, and the wire's
:meth:`~bench.wires.base.Wire.retry_hint` adds the retry hint a recipe asks for where the provider
says it in the body (Google's ``RetryInfo``) besides the ``retry-after`` header the bench always sends then.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.engine.model import ErrorKind, Turn, TurnError
from bench.serve.respond import Plan, json_plan
from bench.wires.base import Context
from bench.wires.base import StatusError as Shape
from bench.wires.capture import error_kind
from bench.wires.registry import wire as wire_of
from bench.wires.registry import wires

__all__ = ["SHAPES", "Shape", "shape", "status_plan"]

SHAPES: Mapping[str, Mapping[int, Shape]] = {w.name: w.status_errors for w in wires() if w.status_errors}
"""Wire -> status -> the provider's error for it (:attr:`bench.wires.base.Wire.status_errors`)."""


def shape(wire: str, status: int) -> Shape:
    """The provider's error for `status` on `wire`; a status the wire does not list gets generic words
    (in the wire's own error body)."""
    return wire_of(wire).status_errors.get(status) or Shape(None, f"HTTP {status} (injected by a stopbench fault)")


def status_plan(wire: str, status: int, retry_after: int | None, message: str | None) -> tuple[Plan, ErrorKind]:
    """The answer carrying HTTP `status` on `wire`, rendered by the wire's own error renderer, with
    ``retry-after`` when `retry_after` is given; and the error's kind."""
    got = shape(wire, status)
    kind = error_kind(status, got.code)
    err = TurnError(kind, message if message is not None else got.message, status=status, code=got.code)
    served = wire_of(wire)
    out = served.render(Turn("error", error=err), Context("", "", None), False)
    body: Any = out.body
    headers = dict(out.headers)
    headers.update(got.headers)
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
        body = served.retry_hint(body, retry_after)
    return json_plan(body, out.status, headers), kind
