"""Fixtures for the importer tests: the capture copies under tests/importers/data/."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.importers import ImportResult, import_capture

DATA = Path(__file__).resolve().parent / "data"


def capture(rel: str) -> ImportResult:
    """Import one capture copy (path relative to tests/importers/data)."""
    return import_capture(DATA / rel, "auto", rel)


@pytest.fixture
def data() -> Path:
    return DATA
