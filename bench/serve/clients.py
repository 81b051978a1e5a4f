"""The gateway a request's client tells where its path cannot, by its ``User-Agent``: each wire lists the
user agents it answers for another surface (:attr:`bench.wires.base.Wire.agent_surfaces`; Mistral's own
client on Chat Completions gets Mistral's framing)."""

from __future__ import annotations

from collections.abc import Iterable

from bench.wires.registry import wire as wire_named


def client_surface(wire: str, headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The surface a request on `wire` is answered for by what its client says of itself (its raw ASGI
    `headers`), empty for the wire's own API."""
    known = wire_named(wire)
    if not known.agent_surfaces:
        return ""
    for name, value in headers:
        if name == b"user-agent":
            return known.agent_surface(value.decode("latin-1"))
    return ""
