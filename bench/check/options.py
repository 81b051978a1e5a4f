"""What one check is: the loops, which sequences, how each runs and what is written (:class:`CheckOptions`).

``stopbench check`` parses its options into a :class:`CheckOptions`; the pytest plugin chooses its
sequences with one (the marker's ``ids``, ``tags`` and ``dialects`` are check's ``-s``, ``--tag`` and
``--dialect``) and skips what check leaves out. :func:`bench.check.run.run_check` runs one.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterable
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.check.limits import MAX_NAME_CHARS
from bench.check.runner import DEFAULT_TIMEOUT, scripts_tool_results
from bench.engine.model import Sequence
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.errors import UnusableInput

if TYPE_CHECKING:
    from bench.faults import Recipe

_INTERPRETERS = {"python", "python3", "node", "deno", "bun", "ruby", "uv", "npx", "sh", "bash", "env"}

GENERIC_STEMS = frozenset({"loop", "main", "agent", "app", "index", "run", "program", "script", "cli", "bot",
                           "example", "demo", "__main__", "__init__"})
"""Program stems that say nothing of the program: its folder's name goes before them (``agno-loop``)."""


@dataclass(frozen=True, slots=True)
class Loop:
    """A program to check: its name (the column ``<name>@live``, the record ``live/<name>.json``) and
    its command line."""

    name: str
    argv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """One check run, as ``stopbench check``'s options say it.

    `ids`, `tags` and `dialects` choose the sequences (every kind of filter given applies; within one
    kind, any value). A sequence that scripts its tool results runs only with `bench_tools` (a live
    loop's own tools do not return them). `jobs` None runs as many at a time as this process has
    cores; `cwd` None is the working folder at run time. `reports` None writes no live record;
    without `fresh`, a run of some sequences merges its cells into the record there. `faults` is the
    recipe every served answer goes through (trial t with its seed + t)."""

    loops: tuple[Loop, ...] = ()
    ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    dialects: tuple[str, ...] = ()
    bench_tools: bool = False
    timeout: float = DEFAULT_TIMEOUT
    jobs: int | None = None
    safety_cap: int = DEFAULT_SAFETY_CAP
    ok_marker: str | None = None
    error_marker: str | None = None
    virtual_clock: bool = False
    preload: bool = False
    faults: Recipe | None = None
    trials: int = 1
    cwd: Path | None = None
    reports: Path | None = Path("reports")
    fresh: bool = False
    junit: Path | None = None

    def select(self, sequences: Iterable[Sequence], *, dialects: bool = True) -> list[Sequence]:
        """The sequences the filters choose, in their order (without `dialects`, ignoring ``--dialect``)."""
        return [s for s in sequences if (not self.ids or s.id in self.ids)
                and (not self.tags or set(self.tags) & set(s.tags))
                and (not dialects or not self.dialects or s.dialect in self.dialects)]

    def unknown_ids(self, sequences: Iterable[Sequence]) -> list[str]:
        """The ids asked for that no sequence has, sorted."""
        return sorted(set(self.ids) - {s.id for s in sequences})

    def runs_live(self, sequence: Sequence) -> bool:
        """Whether a check runs `sequence`: one scripting its tool results only on the bench's tools."""
        return self.bench_tools or not scripts_tool_results(sequence)

    @property
    def merges(self) -> bool:
        """Whether the live records take this run's cells into theirs: a run of some sequences, not --fresh."""
        return bool(self.ids or self.tags or self.dialects) and not self.fresh

    def outputs(self) -> list[Path | None]:
        """The files the run writes (None for the JUnit file not asked for), to refuse before any run."""
        live = [] if self.reports is None else [self.reports / "live" / f"{loop.name}.json" for loop in self.loops]
        return [self.junit, *live]


def default_name(command: Seq[str]) -> str:
    """The command's stem: the first argument that names an existing file after an interpreter
    (``python examples/openai_loop.py`` -> ``openai_loop``), else the program's own stem. A generic
    stem (:data:`GENERIC_STEMS`) takes its folder's name, so that ``frameworks/agno/loop.py`` and
    ``frameworks/strands/loop.py`` do not write one record (``agno-loop``, ``strands-loop``);
    characters a file name should not have become ``_``."""
    return _file_name(_stem(list(command)))[:MAX_NAME_CHARS]


def _stem(command: list[str]) -> str:
    for arg in command:
        p = Path(arg)
        if p.stem in _INTERPRETERS or arg.startswith("-"):
            continue
        if p.is_file():
            parent = p.resolve().parent.name
            return f"{parent}-{p.stem}" if p.stem in GENERIC_STEMS and parent else p.stem
    for before, arg in itertools.pairwise(command):
        if arg.startswith("-"):
            continue
        if before == "-m":  # python -m package.module
            parts = [x for x in arg.split(".") if x]
            if len(parts) > 1 and parts[-1] in GENERIC_STEMS:
                return f"{parts[-2]}-{parts[-1]}"
            return parts[-1] if parts else arg
        p = Path(arg)  # a file that is not there (yet): its stem all the same, never its suffix
        return f"{p.parent.name}-{p.stem}" if p.stem in GENERIC_STEMS and p.parent.name else p.stem or arg
    return Path(command[0]).stem


def _file_name(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "loop"


def refuse_unrunnable(loops: Seq[Loop], cwd: Path, *, preload: bool = False, fuzzing: bool = False) -> None:
    """Raise :class:`~bench.errors.UnusableInput` (one line, exit 2) before any run: a loop's command
    names a script that is not there (from `cwd`), or `preload` is asked for with `fuzzing` or for a
    command that is not a Python program."""
    from bench.check.command import missing_script
    from bench.check.preload import refusal

    for loop in loops:
        missing = missing_script(loop.argv, cwd)
        if missing is not None:
            raise UnusableInput(f"cannot run {shlex.join(loop.argv)}: {missing}: no such file (in {cwd})")
    if not preload:
        return
    if fuzzing:
        raise UnusableInput("--preload runs the catalogue's sequences, not --fuzz's")
    for loop in loops:
        why = refusal(loop.argv)
        if why is not None:
            raise UnusableInput(why)
