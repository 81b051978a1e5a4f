"""The docs site builds with ``mkdocs build --strict``, and strict means strict: a broken link fails it.

Where mkdocs is not installed (the ``docs`` extra) these skip, saying so; with
``STOPBENCH_REQUIRE_DOCS=1`` (CI) a missing mkdocs is a failure instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT


@pytest.fixture(scope="module")
def mkdocs() -> list[str]:
    try:
        import mkdocs  # noqa: F401
        import mkdocs_click  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError as exc:
        if os.environ.get("STOPBENCH_REQUIRE_DOCS") == "1":
            pytest.fail(f"STOPBENCH_REQUIRE_DOCS=1 but the docs extra is not installed ({exc})")
        pytest.skip(f"the docs extra is not installed ({exc}): pip install -e '.[docs]' to build the site")
    return [sys.executable, "-m", "mkdocs", "build", "--strict"]


def build(command: list[str], config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([*command, "-f", str(config), "-d", str(site)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=config.parent)


def test_the_site_builds_strict_with_every_generated_page(mkdocs: list[str], tmp_path: Path) -> None:
    done = build(mkdocs, ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    site = tmp_path / "site"
    assert (site / "reports" / "index.html").read_bytes() == (ROOT / "reports" / "index.html").read_bytes()
    matrix = (site / "matrix" / "index.html").read_text(encoding="utf-8")
    assert '<iframe src="../reports/index.html"' in matrix, "the matrix page no longer shows the matrix"
    for page in ("reports/decision-table", "reports/conformance", "reports/frameworks/scorecard",
                 "reference/requirements", "reference/exit-codes", "reference/cli", "reference/python-api"):
        assert (site / page / "index.html").is_file(), page
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--decision-timeout" in cli and "stopbench accept" in cli, "the CLI reference is not the click commands"
    api = (site / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert "State" in api and "predicate" in api


def test_strict_fails_on_a_broken_link(mkdocs: list[str], tmp_path: Path) -> None:
    """The site's own settings (strict, link validation) on a one-page site whose page links nowhere."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    small = {key: config[key] for key in ("site_name", "strict", "validation", "markdown_extensions")}
    small["markdown_extensions"] = [e for e in small["markdown_extensions"] if e != "mkdocs-click"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [a page that is not there](gone.md).\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small), encoding="utf-8")
    done = build(mkdocs, tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "gone.md" in done.stderr, done.stderr[-2000:]
    (tmp_path / "docs" / "gone.md").write_text("# Here\n")
    assert build(mkdocs, tmp_path / "mkdocs.yml", tmp_path / "site").returncode == 0
    shutil.rmtree(tmp_path / "site")
