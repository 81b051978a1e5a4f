"""The docs' examples run: the Python blocks of the tutorials and how-to guides, and the sequence and golden
files they show (tests/docs/test_tutorials.py runs the tutorials' commands).

A Python block is run unless the line before it says ``<!-- not run by the docs tests: why -->`` (a
program that needs a served sequence; those are run by tests/check). A page's blocks run in order in
one namespace, in a temporary folder holding the tutorial's ``predicates/my_loop.py``; every ``test_*``
function a block defines is then called, as pytest would."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.catalogue.load import parse_sequence
from bench.golden.expected import read_golden_file
from tests.helpers import ROOT

DOCS = ROOT / "docs"
RUN_PAGES = sorted([*(DOCS / "tutorials").glob("*.md"), *(DOCS / "how-to").glob("*.md")])
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
NOT_RUN = "<!-- not run by the docs tests:"


def blocks(page: Path, language: str) -> list[tuple[str, bool]]:
    """Each fenced block of `language` in `page`: its code, and whether the docs tests run it."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        if m.group(1) != language:
            continue
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append((m.group(2), not before.startswith(NOT_RUN)))
    return out


def tutorial_predicate() -> str:
    code = [c for c, _ in blocks(DOCS / "tutorials" / "first-predicate.md", "python")]
    assert code and "def decide" in code[0], "the first-predicate tutorial's first block is the predicate file"
    return code[0]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the tutorials have it: the shipped catalogue, the tutorial's predicate."""
    (tmp_path / "predicates").mkdir()
    (tmp_path / "predicates" / "my_loop.py").write_text(tutorial_predicate(), encoding="utf-8")
    (tmp_path / "expected").mkdir()
    (tmp_path / "sequences").symlink_to(ROOT / "sequences")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_page_that_shows_python_has_a_block_the_tests_run() -> None:
    runnable = [p.name for p in RUN_PAGES if any(run for _, run in blocks(p, "python"))]
    assert "first-predicate.md" in runnable and "fuzz.md" in runnable, runnable


FAILS_AS_THE_PAGE_SAYS = {
    "how-to/fuzz.md": {"test_my_loop_never_reports_success_on_a_truncated_turn"},
}
"""Example tests a page says fail on the tutorial's loop (what they are there to find)."""


@pytest.mark.parametrize("page", [p for p in RUN_PAGES if any(run for _, run in blocks(p, "python"))],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_the_python_blocks_of_a_page_run(page: Path, project: Path) -> None:
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for i, (code, run) in enumerate(blocks(page, "python")):
        if run:
            exec(compile(code, f"<{page.relative_to(ROOT)}, python block {i + 1}>", "exec"), namespace)
    failing = FAILS_AS_THE_PAGE_SAYS.get(str(page.relative_to(DOCS)), set())
    tests = {name: fn for name, fn in namespace.items() if name.startswith("test_") and callable(fn)}
    assert failing <= set(tests), f"{page.name} no longer defines {sorted(failing - set(tests))}"
    for name, fn in tests.items():
        if name in failing:
            with pytest.raises(AssertionError):
                fn()
        else:
            fn()


def _yaml_blocks() -> list[tuple[Path, str]]:
    pages = sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)
    return [(p, code) for p in pages for code, _ in blocks(p, "yaml")]


@pytest.mark.parametrize("page,code", [(p, c) for p, c in _yaml_blocks() if "\nturns:" in c],
                         ids=lambda v: str(v.relative_to(DOCS)) if isinstance(v, Path) else "")
def test_every_sequence_the_docs_show_is_a_valid_sequence(page: Path, code: str) -> None:
    parse_sequence(yaml.safe_load(code), "from-docs", str(page))


@pytest.mark.parametrize("page,code", [(p, c) for p, c in _yaml_blocks() if c.startswith("predicate:")],
                         ids=lambda v: str(v.relative_to(DOCS)) if isinstance(v, Path) else "")
def test_every_golden_file_the_docs_show_is_a_valid_golden_file(page: Path, code: str, tmp_path: Path) -> None:
    path = tmp_path / f"{yaml.safe_load(code)['predicate']}.yaml"
    path.write_text(code, encoding="utf-8")
    read_golden_file(path)
