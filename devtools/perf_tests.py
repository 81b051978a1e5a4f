"""What the test suite costs: ``make test``'s time on a clean clone, and each test's CPU seconds by folder,
written to ``reports/test-cost.md``, with the README's one sentence of it.

    python -m devtools.perf_tests --clean-clone [--out reports/test-cost.md]   # what make test-cost runs
    python -m devtools.perf_tests [--out reports/test-cost.md] [PYTEST ARGS]   # this checkout's pytest only

With ``--clean-clone``: clones this repository's HEAD into a temporary folder and times, there, what a
newcomer runs: ``make .venv/.installed`` (the dev venv), then ``make test`` with this module as a pytest
plugin; the report gives both, and pytest's share of ``make test``. Without it, pytest alone (default ``-n 2
--dist loadfile``) in this checkout. Either way the plugin writes each test's wall and CPU seconds, from its
set-up to its tear-down, with every process it started and waited for (the CPU a test costs, which a loaded
machine does not inflate as it does the wall time), one JSON line a test in a folder of one file per process;
then the table by folder, written as Markdown (what docs/reference/development.md includes). The README's
block between :data:`README_BEGIN` and :data:`README_END` is replaced by the report's first sentence
(tests/docs checks they agree). Not a pass/fail test: a run with failures is still measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

FOLDER_VARIABLE = "PYTEST_STOPBENCH_COST"
"""The folder each pytest process writes its tests' lines to (set by :func:`main`)."""
README_BEGIN = "<!-- test-cost:readme:begin (python -m devtools.perf_tests --clean-clone) -->"
README_END = "<!-- test-cost:readme:end -->"
ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """One line for `item`: its node id, wall and CPU seconds, the load average at its end."""
    c0, w0 = _cpu(), time.perf_counter()
    yield
    _write({"id": item.nodeid, "wall": time.perf_counter() - w0, "cpu": _cpu() - c0, "load": os.getloadavg()[0]})


_SESSION: dict[str, float] = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION["started"] = time.perf_counter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest's own wall time, from the process that ran the session (not an xdist worker)."""
    if "PYTEST_XDIST_WORKER" not in os.environ and "started" in _SESSION:
        _write({"session": time.perf_counter() - _SESSION["started"]})


def _write(line: dict[str, Any]) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(os.environ[FOLDER_VARIABLE]) / f"{worker}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


@dataclass
class Part:
    """A folder's (or a top-level file's) tests: how many, their CPU and wall seconds."""

    tests: int = 0
    cpu: float = 0.0
    wall: float = 0.0


@dataclass(frozen=True)
class Run:
    """One measured run: the tests' lines, pytest's wall seconds, the command it ran, and on a clean clone
    the seconds of the dev venv and of the whole ``make test`` (``None`` when pytest ran alone)."""

    lines: list[dict[str, Any]]
    pytest_wall: float
    command: str
    venv: float | None = None
    make_test: float | None = None


def by_folder(lines: list[dict[str, Any]]) -> dict[str, Part]:
    """The tests' lines summed by the folder under tests/ (a file directly in tests/ is its own part)."""
    parts: dict[str, Part] = {}
    for line in lines:
        path = line["id"].split("::")[0].split("/")
        part = parts.setdefault(path[1] if len(path) > 2 else path[-1], Part())
        part.tests += 1
        part.cpu += line["cpu"]
        part.wall += line["wall"]
    return parts


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} minutes"


def summary(run: Run, cores: int) -> str:
    """The report's first sentence, which the README repeats: how long ``make test`` took and at what load."""
    loads = sorted(line["load"] for line in run.lines)
    load = f"a load average of {loads[0]:.0f} to {loads[-1]:.0f} (median {loads[len(loads) // 2]:.0f})"
    if run.make_test is None:
        return f"`{run.command}` took {_minutes(run.pytest_wall)} on {cores} cores, at {load}."
    return (f"On a clean clone and {cores} cores, `make test` took {_minutes(run.make_test)} (pytest "
            f"{_minutes(run.pytest_wall)} of it), after {_minutes(run.venv or 0.0)} for the dev venv, at {load}.")


def markdown(run: Run, when: date, cores: int) -> str:
    """The report: the run, then the table by folder, most CPU first."""
    parts = sorted(by_folder(run.lines).items(), key=lambda kv: -kv[1].cpu)
    cpu = sum(p.cpu for _, p in parts)
    out = ["# What the test suite costs", "",
           summary(run, cores), "",
           f"Generated by `python -m devtools.perf_tests{' --clean-clone' if run.make_test is not None else ''}` "
           f"(devtools/perf_tests.py); do not edit. One run on {when.isoformat()} of `{run.command}`: "
           f"{len(run.lines):,} tests, {cpu:.0f} s of CPU in the tests (each test's, set-up to tear-down, with every "
           "process it started and waited for). On a shared machine the wall time is the machine's; the CPU time "
           "is what the suite costs, and pytest over two idle cores takes about half of it.", "",
           "| folder | tests | CPU s | wall s (summed over the processes) |", "| --- | ---: | ---: | ---: |"]
    out += [f"| {name} | {p.tests:,} | {p.cpu:.0f} | {p.wall:.0f} |" for name, p in parts]
    return "\n".join(out) + "\n"


def with_readme_block(readme: str, sentence: str) -> str:
    """`readme` with the text between :data:`README_BEGIN` and :data:`README_END` replaced by `sentence`."""
    pattern = re.compile(re.escape(README_BEGIN) + ".*?" + re.escape(README_END), re.S)
    if not pattern.search(readme):
        raise ValueError(f"README.md: no block {README_BEGIN} ... {README_END}")
    return pattern.sub(lambda _: f"{README_BEGIN}\n{sentence}\n{README_END}", readme)


def read_lines(folder: Path) -> tuple[list[dict[str, Any]], float | None]:
    """The tests' lines, and pytest's session seconds if its process wrote them."""
    lines = [json.loads(line) for f in sorted(folder.glob("*.jsonl"))
             for line in f.read_text(encoding="utf-8").splitlines()]
    session = next((line["session"] for line in lines if "session" in line), None)
    return [line for line in lines if "id" in line], session


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=False)
    return time.perf_counter() - started


def run_here(pytest_args: list[str], folder: Path) -> Run:
    """pytest alone in this checkout, with this module as a plugin."""
    env = {**os.environ, FOLDER_VARIABLE: str(folder), "HYPOTHESIS_PROFILE": "ci"}
    wall = _timed([sys.executable, "-m", "pytest", "-q", "-p", "devtools.perf_tests", *pytest_args], ROOT, env)
    lines, session = read_lines(folder)
    return Run(lines, session or wall, " ".join(["pytest", *pytest_args]))


def run_clean_clone(folder: Path) -> Run:
    """``make .venv/.installed`` then ``make test`` (this module as a plugin) in a clone of HEAD."""
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    costs = folder / "lines"
    costs.mkdir()
    env = {**os.environ, FOLDER_VARIABLE: str(costs), "FRAMEWORK_DIR": str(folder / "frameworks"),
           "CONFORM_DIR": str(folder / "conform")}
    env.pop("VIRTUAL_ENV", None)
    venv = _timed(["make", "--no-print-directory", ".venv/.installed"], clone, env)
    make_test = _timed(["make", "--no-print-directory", "test", "PYTEST_EXTRA=-p devtools.perf_tests"], clone, env)
    lines, session = read_lines(costs)
    return Run(lines, session or make_test, "make test", venv, make_test)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.perf_tests", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "reports/test-cost.md")
    parser.add_argument("--clean-clone", action="store_true",
                        help="time make .venv/.installed and make test in a clone of HEAD; write the README block")
    args, pytest_args = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory(prefix="stopbench-cost-") as folder:
        run = (run_clean_clone(Path(folder)) if args.clean_clone else
               run_here(pytest_args or ["-n", "2", "--dist", "loadfile"], Path(folder)))
    if not run.lines:
        print("python -m devtools.perf_tests: no test was measured", file=sys.stderr)
        return 2
    cores = os.cpu_count() or 1
    args.out.write_text(markdown(run, date.today(), cores), encoding="utf-8")
    print(f"written to {args.out}")
    if args.clean_clone:
        readme = ROOT / "README.md"
        readme.write_text(with_readme_block(readme.read_text(encoding="utf-8"), summary(run, cores)), encoding="utf-8")
        print(f"and its sentence to {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
