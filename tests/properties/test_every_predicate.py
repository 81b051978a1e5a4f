"""Properties that hold for every predicate in predicates/ (a newly dropped file is fuzzed too).

Each example is a generated sequence (every dialect, plain to hostile, sometimes very long) and
turns to append after the loop's stop; bench.fuzz says what each property means. A predicate that
raises, returns a malformed decision or an undeclared rule or reason, runs a call its turn did not
carry, or gives two cells for one sequence fails here with a shrunk, readable counterexample.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from bench.engine.discovery import Broken, Loaded, discover
from bench.fuzz import Example, examples, failures, properties
from bench.fuzz.strategies import describe

ROOT = Path(__file__).resolve().parents[2]
PREDICATES: list[Loaded] = discover(ROOT / "predicates", entry_points_too=False)
EVERY = properties("every")


def test_the_predicates_folder_is_fuzzed() -> None:
    assert PREDICATES, "no predicate discovered in predicates/: the properties below check nothing"


@pytest.mark.parametrize("pred", PREDICATES, ids=[p.name for p in PREDICATES])
def test_every_predicate_ends_never_crashes_and_decides_only_what_it_declares(pred: Loaded) -> None:
    if isinstance(pred, Broken):
        pytest.fail(f"{pred.origin} does not load: {pred.error}")

    @given(examples())
    def check(example: Example) -> None:
        broken = failures(pred, example, EVERY)
        assert not broken, (f"{pred.name} breaks " + "; ".join(f"{k}: {v}" for k, v in broken.items())
                            + "\non " + describe(example[0]) + "\nappended: "
                            + "; ".join(describe(t) for t in example[1]))

    check()
