"""The wires the bench speaks, found by name: each dialect of :data:`bench.engine.model.Dialect` is the
sub-package of :mod:`bench.wires` of the same name (``-`` as ``_``), holding its :class:`~bench.wires.base.Wire`
as ``WIRE``.

Adding a wire is adding its sub-package (and its tests) and its name to the ``Dialect`` literal, which
every sequence file is checked against; nothing else names the wires one by one.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import get_args

from bench.engine.model import Dialect
from bench.wires.base import Wire


@cache
def wires() -> tuple[Wire, ...]:
    """Every wire, in the order of the ``Dialect`` literal."""
    found = []
    for name in get_args(Dialect):
        wire = importlib.import_module(f"bench.wires.{name.replace('-', '_')}").WIRE
        if not isinstance(wire, Wire) or wire.name != name:
            raise TypeError(f"bench.wires.{name.replace('-', '_')}.WIRE is not the Wire of {name!r}")
        found.append(wire)
    return tuple(found)


def names() -> tuple[Dialect, ...]:
    """Every wire's name, in the order of the ``Dialect`` literal."""
    return tuple(w.name for w in wires())


def wire(name: str) -> Wire:
    """The wire called `name`; KeyError for a name no wire has."""
    for w in wires():
        if w.name == name:
            return w
    raise KeyError(name)
