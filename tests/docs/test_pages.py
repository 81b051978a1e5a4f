"""The README and the docs pages: small, linked, filled from the code and the reports, never typing a figure,
and not contradicting the code. These run without mkdocs (test_build.py runs the real build)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.docs.site import docs_page, hook
from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
GENERATED_BLOCK = re.compile(r"<!-- (scorecard|test-cost):(?:readme:)?begin.*?<!-- \1:(?:readme:)?end -->", re.S)


def prose(text: str) -> str:
    """`text` without fenced code and without the generated blocks: those `stopbench scorecard build`
    writes (checked by tests/scorecard) and the README's sentence of reports/test-cost.md (checked below)."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    return GENERATED_BLOCK.sub("", text)


def test_the_readme_is_a_front_door_under_12_kb() -> None:
    size = len(README.read_bytes())
    assert size < 12 * 1024, f"README.md is {size} bytes; move what it grew by into docs/"


def test_the_readme_gives_the_two_commands_and_the_three_lines_for_your_own_loop() -> None:
    text = README.read_text(encoding="utf-8")
    for command in ("make bench", "make test", "stopbench check -- python my_loop.py"):
        assert command in text, f"README.md no longer shows `{command}`"
    pictures = [target for target in LINK.findall(text) if target.endswith((".png", ".svg"))]
    assert pictures and all((ROOT / target).is_file() for target in pictures), pictures


def test_the_readme_says_what_make_test_took_in_the_words_of_its_report() -> None:
    from devtools.perf_tests import README_BEGIN, README_END
    text = README.read_text(encoding="utf-8")
    block = text[text.index(README_BEGIN) + len(README_BEGIN):text.index(README_END)].strip()
    report = (ROOT / "reports/test-cost.md").read_text(encoding="utf-8").splitlines()
    assert block and block == report[2], (
        f"README.md's make test sentence is not reports/test-cost.md's ({report[2]!r}): run make test-cost")


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file_the_repository_holds(path: Path) -> None:
    broken = []
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        file = target.partition("#")[0]
        if not (path.parent / file).resolve().exists():
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)} links to files that do not exist: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_page_expands_as_the_build_does(page: Path) -> None:
    """Every include names a file and a heading that exist, every generator runs: the markers the hook
    fills. (mkdocs is not needed for this: a missing heading is caught even where the build is skipped.)"""
    text = docs_page(str(page.relative_to(DOCS)))
    assert "<!-- include:" not in text and "<!-- generate:" not in text


TYPED_FIGURES = {
    "a count out of a total": r"\b\d[\d,]* of \d[\d,]*\b",
    "a count of the catalogue or the results": r"\b\d[\d,]* (sequences|cells|mutants|runs|violations)\b",
    "a measured time": r"\b\d+(\.\d+)? ?(s|ms|seconds|minutes) (wall|of CPU|CPU)\b",
    "a measured size": r"\b\d+(\.\d+)? ?(KB|MB|GB)\b",
    "a measurement's conditions": r"load average (of |about )?\d|at this commit|last session",
}
"""What a figure typed by hand looks like in this project's prose (each pattern is one that drifted in the
README before the site): such a figure belongs in a generated report, included at build time."""


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_types_a_figure_a_report_holds(path: Path) -> None:
    text = prose(path.read_text(encoding="utf-8"))
    found = [(what, m.group(0)) for what, pattern in TYPED_FIGURES.items() for m in re.finditer(pattern, text)]
    assert not found, f"{path.relative_to(ROOT)} types figures by hand (include them from a report): {found}"


STALE = {
    r"no Gemini endpoint|without a Gemini endpoint": "the replay server has a Gemini endpoint",
    r"cannot see the dialect|does not see the dialect": "a predicate reads the sequence's dialect: State.dialect",
}
YOURS = {"predicates/my_loop.py", "expected/my_loop.yaml", "sequences/mine/chat-tool-calls-no-call.yaml",
         "sequences/x.yaml"}
"""Files the tutorials have you write, and the file of an example error message; a folder
(``reports/live/``) may also be one a command makes, and a name in capitals (``NAME.yaml``) is a
placeholder."""
DOTTED = re.compile(r"\bbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
FOLDERS = r"(?:bench|predicates|sequences|expected|reports|tests|examples|conformance|devtools|docs)"
PATH = re.compile(rf"`({FOLDERS}/[A-Za-z0-9_./<>*-]*)`"
                  rf"|(?<![\w/.-])({FOLDERS}/[A-Za-z0-9_/.-]*\.(?:py|md|json|mjs|yaml))\b")


def _resolves(dotted: str) -> bool:
    """Whether `dotted` (``bench.engine.replay.following``) names a module of the package, or an attribute
    of the longest module it starts with."""
    import importlib

    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:n])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            obj: object = importlib.import_module(".".join(parts[:n]))
            for attr in parts[n:]:
                if not hasattr(obj, attr):
                    return False
                obj = getattr(obj, attr)
            return True
    return False


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_and_file_a_page_names_exists(path: Path) -> None:
    text = prose(path.read_text(encoding="utf-8"))
    modules = sorted({m.rstrip(".") for m in DOTTED.findall(text)} - {"bench.py"})
    gone = [m for m in modules if not _resolves(m)]
    named = {(quoted or bare).rstrip(".") for quoted, bare in PATH.findall(text)}
    files = sorted({f for f in named if not re.search(r"[<>*]|/$|[A-Z]{2,}", f)} - YOURS)
    missing = [f for f in files if not (ROOT / f).exists()]
    assert not gone and not missing, f"{path.relative_to(ROOT)} names what the repository lacks: {gone + missing}"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_says_what_the_code_contradicts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [(m.group(0), why) for pattern, why in STALE.items() for m in re.finditer(pattern, text)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"


def test_the_state_a_predicate_reads_has_the_dialect_the_docs_promise() -> None:
    from bench import State

    assert "dialect" in State.__dataclass_fields__
    assert "state.dialect" in (DOCS / "tutorials" / "first-predicate.md").read_text(encoding="utf-8")


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_dependencies_page_names_every_package_pyproject_installs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = _names(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        wanted |= _names(extra)
    wanted = {n for n in wanted if n != "stopbench" and not n.startswith("types-") and not n.endswith("-stubs")}
    page = (DOCS / "reference" / "dependencies.md").read_text(encoding="utf-8").lower()
    listed = {n.strip() for row in re.findall(r"^\| ([^|]+) \|", page, re.M) for n in re.split(r",|\(", row)}
    listed = {re.sub(r"\[.*?\]|\s.*", "", n) for n in listed}
    missing = sorted(n for n in wanted if n not in listed)
    assert not missing, f"docs/reference/dependencies.md does not say what these are for: {missing}"


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [str(p.relative_to(DOCS)) for p in PAGES if f" {p.relative_to(DOCS).as_posix()}" not in nav]
    assert not missing, f"pages mkdocs.yml's nav does not list: {missing}"


def test_a_link_to_a_report_becomes_a_link_into_the_site_and_one_to_code_becomes_its_path() -> None:
    rebased = hook()._rebase(
        "[table](reports/decision-table.md) [loop](predicates/reference.py) [page](docs/serve.md#errors)",
        Path("README.md"), Path("index.md"), set(hook().MOUNTED_PAGES))
    assert rebased == "[table](reports/decision-table.md) loop (`predicates/reference.py`) [page](serve.md#errors)"


def test_the_changelog_leads_with_the_version_pyproject_gives() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    first = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert first is not None and first.group(1) == version, (
        f"CHANGELOG.md's first entry is {first and first.group(1)}, pyproject.toml's version {version}")
