"""Every committed framework record is on the current catalogue of its wires (offline: file digests only)."""

from __future__ import annotations

from pathlib import Path

from bench.scorecard.footing import stale_records

ROOT = Path(__file__).resolve().parents[2]


def test_every_committed_record_is_on_the_current_catalogue_of_its_wires() -> None:
    """A record made on other sequence files than the catalogue's today (a sequence added to its
    wires, removed, or edited) fails here, named; ``stopbench scorecard record NAME --changed``
    brings it on by running those alone."""
    stale = stale_records(ROOT / "reports" / "frameworks", ROOT / "sequences")
    assert not stale, "\n".join(stale)
