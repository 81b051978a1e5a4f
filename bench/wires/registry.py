"""The wires the bench speaks, found by name: each dialect of :data:`bench.engine.model.Dialect` is the
sub-package of :mod:`bench.wires` of the same name (``-`` as ``_``), holding its :class:`~bench.wires.base.Wire`
as ``WIRE``; a wire of another package is registered by an entry point of the group :data:`GROUP`
(``name = "package.module:WIRE"``, the entry point named as its wire).

Adding a wire is adding its sub-package (and its tests) and its name to the ``Dialect`` literal, which
the type checker reads, or installing a package that registers it; nothing else names the wires one by one.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from typing import get_args

from bench.engine.model import Dialect
from bench.wires.base import Wire

GROUP = "stopbench.wires"
"""The entry-point group a package registers its wires under."""


@cache
def names() -> tuple[Dialect, ...]:
    """Every wire's name, the ``Dialect`` literal's then the registered ones by name, without loading any
    wire (an entry point is named as its wire)."""
    registered = sorted(p.name for p in entry_points(group=GROUP))
    for name in registered:
        if name in get_args(Dialect):
            raise TypeError(f"entry point {GROUP}:{name} takes the name of a wire of the bench")
    return (*get_args(Dialect), *registered)


@cache
def wire(name: str) -> Wire:
    """The wire called `name`, its package loaded on this first request; KeyError for a name no wire has."""
    if name in get_args(Dialect):
        module = f"bench.wires.{name.replace('-', '_')}"
        return _checked(importlib.import_module(module).WIRE, name, f"{module}.WIRE")
    for point in entry_points(group=GROUP, name=name):
        return _checked(point.load(), name, f"entry point {GROUP}:{name} ({point.value})")
    raise KeyError(name)


@cache
def wires() -> tuple[Wire, ...]:
    """Every wire, in the order of :func:`names` (each package loaded), checked to agree on the client
    variables they set."""
    found = [wire(name) for name in names()]
    _check_env(found)
    return tuple(found)


def _checked(wire: object, name: str, where: str) -> Wire:
    if not isinstance(wire, Wire) or wire.name != name:
        raise TypeError(f"{where} is not the Wire of {name!r}")
    return wire


def _check_env(found: list[Wire]) -> None:
    """Two wires may set one client variable only to the same value (a program gets them all)."""
    seen: dict[str, tuple[str, str]] = {}
    for w in found:
        for var, value in w.client_env.items():
            other = seen.setdefault(var, (w.name, value))
            if other[1] != value:
                raise TypeError(f"{w.name} sets {var}={value!r} but {other[0]} sets {other[1]!r}")


def forget() -> None:
    """Drop what the registry has found, so the next question reads the ``Dialect`` literal and the entry
    points again (a test that registers a wire of its own)."""
    for found in (names, wire, wires):
        found.cache_clear()
