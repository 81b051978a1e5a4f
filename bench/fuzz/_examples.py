"""The examples the properties are searched on: generated sequences, plus turns to append."""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from bench.engine.model import Dialect
from bench.fuzz import strategies as bs
from bench.fuzz._properties import Example
from bench.wires.dialects import DIALECTS


@cache
def examples(dialect: Dialect | None = None) -> st.SearchStrategy[Example]:
    """A sequence (short and hostile most of the time, sometimes very long) and one to three turns
    of the same dialect to append after the loop's stop. The long branch may shrink to one turn."""
    return _examples(dialect)


_EXTRA = {d: st.lists(bs.turns(d), min_size=1, max_size=3) for d in DIALECTS}


@st.composite
def _examples(draw: st.DrawFn, dialect: Dialect | None) -> Example:
    seq = draw(st.one_of(bs.sequences(dialect), bs.long_sequences(dialect, min_turns=1)))
    extra = draw(_EXTRA[seq.dialect])
    return seq, tuple(extra)
