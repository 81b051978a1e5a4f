from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the seed 000 catalogue, predicates and golden files in a temporary working folder,
    read alone (STOPBENCH_ONLY_MINE: not added to the shipped ones, see tests/cli/test_shipped_folders.py)."""
    monkeypatch.setenv("STOPBENCH_ONLY_MINE", "1")
    (tmp_path / "sequences").mkdir()
    shutil.copytree(ROOT / "sequences" / "seed000", tmp_path / "sequences" / "seed000")
    (tmp_path / "predicates").mkdir()
    (tmp_path / "expected").mkdir()
    for name in ("seed000_content", "seed000_finish", "seed000_tool_calls", "seed000_fixed"):
        shutil.copy(ROOT / "predicates" / f"{name}.py", tmp_path / "predicates")
        shutil.copy(ROOT / "expected" / f"{name}.yaml", tmp_path / "expected")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty temporary working folder, as a user's new project is: the default folders are the
    shipped ones."""
    monkeypatch.delenv("STOPBENCH_ONLY_MINE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path
