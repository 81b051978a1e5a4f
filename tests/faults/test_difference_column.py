"""The difference column names the loop that breaks a requirement even when both took the same path
(a retry sooner than Retry-After is the same path as one after it)."""

from __future__ import annotations

from bench.check.report import difference
from bench.engine.model import Cell, Step, Stop, Violation


def test_the_same_path_with_a_violation_on_one_side_is_a_difference() -> None:
    steps = (Step(1, 0, Stop("answered", True, "observed")),)
    patient = Cell("s", "patient@live", "stopped", steps, "answered", True)
    hasty = Cell("s", "hasty@live", "stopped", steps, "answered", True,
                 violations=(Violation("retry_after", 2, "asked again 0.01 s after ..."),))
    assert difference([patient, hasty]) == "⚠ only hasty@live"
    assert difference([patient, patient]) == ""
