"""The code, the ports, the tests and the docs cite only what a reader can check: the repository's own files
or public sources, never a file of the workspace outside it (its shared notes, seeds and edge-case table);
the golden files' headers and notes too (the catalogue's recorded sequences name the capture they were copied
from, a provenance record, and are not read here)."""

from __future__ import annotations

import re

from tests.helpers import ROOT

OUTSIDE = re.compile(r"shared/(docs|seeds|cassettes)|edge-cases\.md|\bloops\.md|\{EDGE\}")
FOLDERS = ("bench", "predicates", "expected", "tests", "devtools", "docs", "ci")


def test_nothing_cites_a_file_the_repository_does_not_hold() -> None:
    files = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*")
             if p.suffix in (".py", ".md", ".yaml", ".js", ".html") and p.is_file()
             and p.name != "test_no_outside_citations.py"]
    files += [ROOT / "README.md", ROOT / "Makefile"]
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
             for p in files for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == []
