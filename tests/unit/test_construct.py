"""The fast constructor builds the same objects as the dataclass's own constructor."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bench.engine.construct import fast_constructor
from bench.engine.model import Cell, Continue, Requirement, Sequence, Step, Turn


def test_it_builds_what_the_dataclass_builds_with_defaults_filled_in() -> None:
    decision = Continue("calls")
    assert fast_constructor(Step)(2, 1, decision, ("a",)) == Step(2, 1, decision, ("a",))
    assert fast_constructor(Cell)(sequence="s", predicate="p", outcome="running", steps=()) == Cell(
        sequence="s", predicate="p", outcome="running", steps=())
    turns = (Turn("stop"),)
    made = fast_constructor(Sequence)("s", "t", "constructed", "anthropic", "x", turns, tags=("a",))
    assert made == Sequence("s", "t", "constructed", "anthropic", "x", turns, tags=("a",))
    assert type(made.require) is Requirement


def test_a_default_factory_gives_each_object_its_own_value() -> None:
    @dataclass(frozen=True, slots=True)
    class Box:
        items: list[int] = field(default_factory=list)

    make = fast_constructor(Box)
    assert make() == Box() and make().items is not make().items


def test_a_class_with_post_init_is_refused() -> None:
    @dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="__post_init__"):
        fast_constructor(Checked)
