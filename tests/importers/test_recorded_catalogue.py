"""sequences/recorded/: provenance complete, licences noticed, and every sequence is what its
capture imports to (checked against the test copies of the captures, never the steering repo's shared folder)."""

from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

from bench.catalogue.load import load_catalogue
from bench.engine.model import Sequence
from bench.importers import git_blob_sha, import_capture
from tests.helpers import ROOT
from tests.importers.conftest import DATA

RECORDED = ROOT / "sequences" / "recorded"
CATALOGUE = load_catalogue(RECORDED)
EXCERPTS = {"test_pause_turn_web_search_vcr.yaml": "test_pause_turn_web_search_vcr.excerpt.yaml"}
CONSTRUCTED = {"anthropic-refusal.json", "anthropic-refusal.chunks.txt", "spliced-message-start.chunks.txt"}
LICENCES = {"pydantic/pydantic-ai": "MIT", "crewAIInc/crewAI": "MIT", "simonw/llm": "Apache-2.0",
            "vercel/ai": "Apache-2.0", "traceloop/openllmetry": "Apache-2.0", "openai/openai-python": "Apache-2.0",
            "Arize-ai/openinference": "Apache-2.0"}


def _fields(seq: Sequence) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in seq.source.splitlines()[1:]:
        key, sep, value = line.partition(": ")
        if sep and key not in out:
            out[key] = value
    return out


def _excerpt_name(name: str) -> str:
    """The test copy's name when it is an excerpt of the upstream file (`x.yaml` -> `x.excerpt.yaml`)."""
    return EXCERPTS.get(name, f"{Path(name).stem}.excerpt{Path(name).suffix}")


def _copy(seq: Sequence) -> Path:
    name = Path(_fields(seq)["path"]).name
    hits = [h for n in (name, _excerpt_name(name)) for h in DATA.glob(f"*/{glob.escape(n)}")]
    assert len(hits) == 1, f"{seq.id}: no test copy of {name}"
    return hits[0]


def test_the_recorded_catalogue_loads_cleanly() -> None:
    assert CATALOGUE.problems == []
    assert len(CATALOGUE.sequences) == 37


@pytest.mark.parametrize("seq", CATALOGUE.sequences, ids=lambda s: s.id)
def test_provenance_requirements_and_kind(seq: Sequence) -> None:
    f = _fields(seq)
    for key in ("repo", "commit", "path", "blob", "licence", "origin"):
        assert f.get(key), f"{seq.id}: source has no {key}"
    assert re.fullmatch(r"[0-9a-f]{40}", f["commit"]) and re.fullmatch(r"[0-9a-f]{40}", f["blob"])
    assert f["licence"].startswith(LICENCES[f["repo"]])
    assert not seq.require.is_empty(), f"{seq.id}: no require block"
    constructed = Path(f["path"]).name in CONSTRUCTED
    assert seq.kind == ("constructed" if constructed else "recorded")
    assert f["origin"].startswith("Constructed" if constructed else "Recorded")


@pytest.mark.parametrize("seq", CATALOGUE.sequences, ids=lambda s: s.id)
def test_sequence_is_what_its_capture_imports_to(seq: Sequence) -> None:
    copy = _copy(seq)
    f = _fields(seq)
    if copy.name != _excerpt_name(Path(f["path"]).name):
        assert git_blob_sha(copy) == f["blob"], f"{copy} is not the upstream blob"
    elif copy.name not in EXCERPTS.values():  # converted from the excerpt itself: the origin says which part
        assert "excerpt" in f["origin"], f"{seq.id}: its capture is an excerpt; origin must say so"
    runs = import_capture(copy).runs()
    m = re.search(r"-run(\d+)$", seq.id)
    run = runs[int(m.group(1)) - 1] if m else runs[0]
    if m is None:
        assert len(runs) == 1
    assert seq.dialect == run[0].dialect
    assert seq.turns == tuple(t.turn for t in run)
    limits = {t.max_tokens for t in run}  # the request's max_tokens, when every request of the run sent one
    assert seq.max_tokens == (limits.pop() if len(limits) == 1 else None)


def test_notice_names_every_sequence_and_carries_the_licence_texts() -> None:
    notice = (RECORDED / "NOTICE.md").read_text(encoding="utf-8")
    for seq in CATALOGUE.sequences:
        assert f"`{seq.id}`" in notice
    assert notice.count("Permission is hereby granted, free of charge") == 2  # both MIT notices
    assert "Copyright (c) Pydantic Services Inc. 2024 to present" in notice
    assert "Copyright (c) 2025 crewAI, Inc." in notice
    assert "Copyright 2023 Vercel, Inc." in notice
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in notice


def test_tests_and_package_never_read_the_shared_folder() -> None:
    for path in [*(ROOT / "bench" / "importers").rglob("*.py"), *Path(__file__).parent.glob("*.py")]:
        if path.name == Path(__file__).name:
            continue
        assert "/work/shared" not in path.read_text(encoding="utf-8"), path
