"""A fast constructor for frozen dataclasses, for code that makes one object per decision.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, by name; the
constructor made here sets each slot through its descriptor instead, which halves the cost. The
replay makes one :class:`~bench.engine.model.Step` per decision with it: plain ``Step(...)``
costs about 6 % of replay throughput (``python -m devtools.perf --only replay``), and its
:class:`~bench.engine.model.Cell` once per replay. The corpus reader makes its sequences with it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, TypeVar

__all__ = ["fast_constructor"]

T = TypeVar("T")


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A function that takes the parameters and defaults of ``cls(...)`` and returns an equal
    object. Generated as source and compiled once per class, as dataclasses generates its own
    ``__init__``. A class with ``__post_init__`` is refused: the constructor would skip it."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__: the fast constructor would skip it")
    ns: dict[str, Any] = {"new": object.__new__, "cls": cls, "MISSING": MISSING}
    params, body = [], []
    for i, f in enumerate(fields(cls)):  # type: ignore[arg-type]
        ns[f"set{i}"] = getattr(cls, f.name).__set__
        if f.default is not MISSING:
            ns[f"default{i}"] = f.default
            params.append(f"{f.name}=default{i}")
        elif f.default_factory is not MISSING:  # a fresh default per object, as the dataclass makes it
            ns[f"factory{i}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            body.append(f"    if {f.name} is MISSING: {f.name} = factory{i}()")
        else:
            params.append(f.name)
        body.append(f"    set{i}(obj, {f.name})")
    exec(f"def make({', '.join(params)}):\n    obj = new(cls)\n" + "\n".join(body) + "\n    return obj\n", ns)
    make: Callable[..., T] = ns["make"]
    return make
