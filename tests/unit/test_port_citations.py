"""Every rule of every shipped port says where it comes from as data: places in a pinned source
(:class:`bench.Cite`) or, where the citation is prose by nature, an explicit :class:`bench.Note`.
The page links the places (tests/page/test_page_data.py); this pins that none is left as bare text."""

from __future__ import annotations

from pathlib import Path

from bench import Cite, Note
from bench.engine.discovery import Broken, discover
from tests.helpers import ROOT


def uncited(predicates_dir: Path) -> dict[str, list[str]]:
    """Each port's rules declared without citations as data (a string, or no citation at all)."""
    out = {}
    for p in discover(predicates_dir):
        assert not isinstance(p, Broken), f"{p.name}: {p.error}"
        citations = getattr(p, "citations", {})
        missing = sorted(rid for rid in p.rules if not citations.get(rid))
        if missing:
            out[p.name] = missing
    return out


def test_every_rule_of_every_shipped_port_cites_its_source_as_data_or_an_explicit_note() -> None:
    assert uncited(ROOT / "predicates") == {}


def test_every_citation_is_a_place_or_a_note_and_its_text_is_derived_from_it() -> None:
    for p in discover(ROOT / "predicates"):
        assert not isinstance(p, Broken)
        for rid, citations in p.citations.items():
            assert all(isinstance(c, Cite | Note) for c in citations), f"{p.name}/{rid}"
            for c in citations:
                assert str(c) in p.rules[rid] or (isinstance(c, Cite) and c.place() in p.rules[rid]), \
                    f"{p.name}/{rid}: {c} is not in its text"
