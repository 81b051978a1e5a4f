"""One sequence of a production corpus, with where it was recorded: what every corpus source yields.

The catalogue's :class:`~bench.engine.model.Sequence` says what the model answered; a production trace also
says which provider and which model answered, and the corpus report counts edge cases per provider
and model. Every source the corpus reader streams (its own JSON lines and Parquet, and each
production importer, :mod:`bench.corpus.sources`) yields :class:`Traced` records one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.engine.model import Sequence

__all__ = ["Traced"]


@dataclass(frozen=True, slots=True)
class Traced:
    """A sequence and the provider and model that produced it ("" when the recording does not say)."""

    sequence: Sequence
    provider: str = ""
    model: str = ""
