"""The reference loop (bench/loops/reference.py) takes its budgets, reminders and transient errors from
the predicate that models it (predicates/reference.py), their one home: changing the port changes the loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.loops import reference
from tests.helpers import ROOT


def test_the_loop_reads_its_budgets_from_the_shipped_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "predicates" / "reference.py").read_text(encoding="utf-8")
    assert "\nMAX_RESENDS = 3\n" in text
    (tmp_path / "reference.py").write_text(text.replace("\nMAX_RESENDS = 3\n", "\nMAX_RESENDS = 7\n"),
                                           encoding="utf-8")
    monkeypatch.setattr(reference, "shipped_folder", lambda kind: tmp_path)
    assert reference._reference_port().MAX_RESENDS == 7


def test_the_loop_stops_with_the_ports_reasons_and_cap() -> None:
    port = reference._reference_port().decide
    assert tuple(port.reasons) == reference.REASONS
    assert reference.MAX_STEPS == port.max_steps == 50
