"""Every sequence of the catalogue is driven: a driver skips a sequence only for its dialect (the driver's
`skip`, with why), never by a list of sequences set aside for all loops (issue 23's stop-reason, Bedrock and
loop-guard sequences were such a list until each pair was driven and reconciled)."""

from __future__ import annotations

from bench.catalogue.load import load_catalogue
from bench.conform.runner import DRIVERS
from tests.helpers import ROOT


def test_a_driver_skips_a_sequence_only_for_its_dialect() -> None:
    catalogue = load_catalogue(ROOT / "sequences")
    skipped = {(name, s.id): why for name, d in DRIVERS.items() for s in catalogue.sequences
               if (why := d.not_run(s)) is not None and why != d.skip.get(s.dialect)}
    assert skipped == {}


def test_every_sequence_is_driven_by_some_loop() -> None:
    catalogue = load_catalogue(ROOT / "sequences")
    undriven = [s.id for s in catalogue.sequences if all(d.not_run(s) is not None for d in DRIVERS.values())]
    assert undriven == []
