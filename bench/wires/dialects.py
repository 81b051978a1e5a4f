"""Per-dialect tables from a provider's raw finish string to the bench's canonical finish.

Each wire states its own table (``table`` of its :class:`~bench.wires.base.Wire`, in
``bench/wires/<wire>/__init__.py``), each entry citing the provider documentation that defines the
raw value; :data:`TABLES` gathers them (``bench.TABLES``, what predicates read). A raw string that is
not in its dialect's table (a server's invention such as ``tool_call``, or a missing value) maps to
``unknown``: the bench never guesses what a non-standard string meant. Loops with a mapping of their
own (Pi's provider mappers, OpenCode through the AI SDK) read ``finish_raw`` and apply theirs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, TypeAlias

from bench.engine.model import Dialect, Finish
from bench.wires.base import Entry
from bench.wires.registry import names, wire, wires

__all__ = ["DIALECTS", "TABLES", "Entry", "Known", "canonical", "default_raw", "unspecified"]

DIALECTS: tuple[Dialect, ...] = names()


class _Tables(Mapping[Dialect, Mapping[str, Entry]]):
    """Each wire's finish table by dialect, a wire's package loaded when its table is first asked for."""

    def __getitem__(self, dialect: Dialect) -> Mapping[str, Entry]:
        if dialect not in DIALECTS:
            raise KeyError(dialect)
        return wire(dialect).table

    def __iter__(self) -> Iterator[Dialect]:
        return iter(DIALECTS)

    def __len__(self) -> int:
        return len(DIALECTS)


TABLES: Mapping[Dialect, Mapping[str, Entry]] = _Tables()

if TYPE_CHECKING:
    Known: TypeAlias = Dialect
else:
    Known = Literal[DIALECTS]
"""A dialect as a field type: the name of a wire the registry has (:data:`DIALECTS`: the ``Dialect``
literal's and those registered by other packages), for the sequence formats' validators."""


@cache
def unspecified() -> Mapping[Dialect, str]:
    """The string of a dialect whose documented meaning is that the reason is unknown (Gemini's OTHER,
    'unknown reason'). The other dialects have none: their strings that map to ``unknown`` in
    :data:`TABLES` mean something specific (Anthropic's pause_turn: resume the turn), so an unknown
    finish is served to them as its raw string (:meth:`bench.wires.base.Wire.finish_for`)."""
    return MappingProxyType({w.name: w.unspecified for w in wires() if w.unspecified is not None})


def canonical(dialect: Dialect, raw: str | None) -> Finish:
    """The canonical finish of a raw string in a dialect; anything not in the table is ``unknown``."""
    if raw is None:
        return "unknown"
    entry = TABLES[dialect].get(raw)
    return entry.finish if entry is not None else "unknown"


def default_raw(dialect: Dialect, finish: Finish) -> str | None:
    """The first raw string of a dialect that maps to `finish`, or None if none does."""
    return wire(dialect).default_raw(finish)
