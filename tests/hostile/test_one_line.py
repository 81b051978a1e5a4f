"""Hostile input that must end in one line and the exit status of bench/cli/_common.py's table (2: unusable
input), never a traceback. Each test runs the command as a user does: ``python -m bench`` in a fresh folder."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.corpus.generate import corpus_lines
from tests.helpers import ROOT

CAPTURE = ROOT / "tests/importers/data/vercel-ai/anthropic-refusal.json"


def stopbench(cwd: Path, *args: str | Path, env: dict[str, str] | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`stopbench ARGS` run from `cwd`, reading this checkout's bench package."""
    full_env = {**os.environ, "STOPBENCH_ONLY_MINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "bench", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def one_line(res: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The one line on stderr, after checking the exit status and that no traceback was printed."""
    assert "Traceback" not in res.stderr, res.stderr
    assert res.returncode == code, (res.returncode, res.stderr)
    lines = [line for line in res.stderr.splitlines() if line.strip() and not line.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder holding a 20-sequence corpus and a folder with one predicate."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "corpus.jsonl").write_bytes(b"".join(itertools.islice(corpus_lines(40_000), 20)))
    (tmp_path / "predicates").mkdir()
    shutil.copy(ROOT / "predicates" / "finish_only.py", tmp_path / "predicates")
    return tmp_path


def corpus_args(*args: str) -> list[str]:
    return ["corpus", "--no-entry-points", "--predicates", "predicates", *args]


def test_import_out_empty_is_refused(tmp_path: Path) -> None:
    line = one_line(stopbench(tmp_path, "import", CAPTURE, "--out", ""))
    assert "--out" in line and "empty" in line
    assert not list(tmp_path.iterdir())


def test_corpus_out_empty_is_refused_and_writes_nothing_here(corpus: Path) -> None:
    line = one_line(stopbench(corpus, *corpus_args("c", "--out", "")))
    assert "--out" in line and "empty" in line
    assert sorted(p.name for p in corpus.iterdir()) == ["c", "predicates"]


def test_corpus_on_a_first_line_of_2000_deep_json(corpus: Path) -> None:
    (corpus / "deep.jsonl").write_text('{"a":' + "[" * 2000 + "]" * 2000 + "}\n", encoding="utf-8")
    line = one_line(stopbench(corpus, *corpus_args("deep.jsonl", "--out", "rep")))
    assert line.startswith("deep.jsonl: ")


def test_corpus_with_a_dask_address_of_no_known_scheme(corpus: Path) -> None:
    line = one_line(stopbench(corpus, *corpus_args("c", "--out", "rep", "--dask", "garbage://x")))
    assert line.startswith("--dask garbage://x: ")


def test_corpus_report_inside_its_input_folder_is_not_read_back(corpus: Path) -> None:
    first = stopbench(corpus, *corpus_args("--quiet", "c", "--out", "c/rep"))
    assert first.returncode == 0, first.stderr
    again = stopbench(corpus, *corpus_args("--quiet", "c", "--out", "c/rep"))
    assert again.returncode == 0 and again.stderr == "", again.stderr
