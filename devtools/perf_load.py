"""Loading figures for ``make perf``: a long sequence file, and a YAML alias bomb refused.

* A generated sequence file of 100,000 turns is loaded by :func:`bench.catalogue.load.load_sequence`
  in a fresh interpreter, which reports its wall and CPU time and its peak resident memory
  (``ru_maxrss``) before and after the load, so the figure is the loader's alone, not the
  benchmark's (goal at 100,000 turns: under 5 s and 300 MB), and the CPU time of the same file's bare event stream
  from the parser, the floor of any loader built on it, whose ratio to the load time does not
  depend on how busy the machine is.
* A "billion laughs" file (nine levels of nine aliases, about 500 bytes, 387 million strings
  once expanded) is refused; the time to refusal is printed (goal: under a second).

The file's turns come from :func:`devtools.perf.generate`, written by the one sequence writer
(:func:`bench.catalogue.document.sequence_to_yaml`) in a block of 1,000 turns that is repeated (tool
call ids repeat, which the format allows), so generating it costs a second, not minutes.
"""

from __future__ import annotations

import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from bench.catalogue.document import sequence_to_yaml
from bench.catalogue.load import SequenceError, load_sequence
from bench.catalogue.yaml_read import LOADER, paused_gc
from bench.engine.model import Sequence

BLOCK = 1000
"""Turns written by the sequence writer, then repeated to make the long file."""

GOAL_TURNS = 100_000
"""The file size the goal (under 5 s and 300 MB) is set for."""

BOMB_LEVELS = "abcdefghi"


def long_sequence_text(n_turns: int, generated: list[Sequence]) -> str:
    """A sequence file of `n_turns` turns (rounded up to a multiple of :data:`BLOCK`)."""
    turns = [t for s in generated for t in s.turns][:BLOCK]
    if len(turns) < BLOCK:
        raise ValueError(f"the generated sequences have {len(turns)} turns, fewer than {BLOCK}")
    text = sequence_to_yaml(replace(generated[0], turns=tuple(turns)))
    head, marker, body = text.partition("\nturns:\n")
    return head + marker + body * -(-n_turns // BLOCK)


def bomb_text() -> str:
    """A sequence file whose content is a YAML "billion laughs": nine levels of nine aliases."""
    lines = ["title: bomb", "kind: constructed", "dialect: openai-chat", "source: devtools.perf_load",
             "levels:", f"  - &{BOMB_LEVELS[0]} [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, name in itertools.pairwise(BOMB_LEVELS):
        lines.append(f"  - &{name} [{', '.join(['*' + prev] * 9)}]")
    lines += ["turns:", "  - finish: stop", f"    content: *{BOMB_LEVELS[-1]}"]
    return "\n".join(lines) + "\n"


def peak_rss_kb() -> int:
    """This process's peak resident memory in kB: Linux's VmHWM (which starts afresh at exec, where
    ``ru_maxrss`` keeps the parent's peak from before the fork), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def probe(path: str) -> None:
    """Run in a fresh interpreter: load `path` and print the figures as one JSON line."""
    before = peak_rss_kb()
    wall, cpu = time.perf_counter(), time.process_time()
    seq = load_sequence(Path(path))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = peak_rss_kb()
    floor = time.process_time()
    with paused_gc():
        for _ in yaml.parse(Path(path).read_bytes(), Loader=LOADER):
            pass
    floor = time.process_time() - floor
    print(json.dumps({"turns": len(seq.turns), "wall": wall, "cpu": cpu, "rss_before_kb": before,
                      "rss_after_kb": after, "parse_floor_cpu": floor}))


def measure_long_file(n_turns: int, generated: list[Sequence]) -> dict[str, Any]:
    """The probe's figures for a file of `n_turns` turns, plus the file's size."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.yaml"
        path.write_text(long_sequence_text(n_turns, generated), encoding="utf-8")
        out = subprocess.run([sys.executable, "-c", f"from devtools.perf_load import probe; probe({str(path)!r})"],
                             check=True, capture_output=True, text=True).stdout
        figures: dict[str, Any] = json.loads(out)
        figures["bytes"] = path.stat().st_size
    return figures


def measure_bomb() -> tuple[int, float, str]:
    """(size in bytes, seconds to refusal, the refusal's line) for :func:`bomb_text`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.yaml"
        path.write_text(bomb_text(), encoding="utf-8")
        t0 = time.perf_counter()
        try:
            load_sequence(path)
        except SequenceError as exc:
            return path.stat().st_size, time.perf_counter() - t0, str(exc)
    raise AssertionError("the alias bomb was loaded, not refused")


def report(n_turns: int, generated: list[Sequence]) -> None:
    """Print the loading figures (see the module docstring)."""
    f = measure_long_file(n_turns, generated)
    print(f"loading a {f['turns']:,}-turn sequence file ({f['bytes'] / 1e6:.1f} MB) in a fresh interpreter: "
          f"{f['wall']:.2f} s wall, {f['cpu']:.2f} s CPU; peak resident memory {f['rss_after_kb'] / 1024:.0f} MB "
          f"({f['rss_before_kb'] / 1024:.0f} MB before the load) (goal at 100,000 turns: under 5 s and 300 MB); "
          f"{f['cpu'] / f['parse_floor_cpu']:.2f} times the CPU of the parser's bare event stream "
          f"({f['parse_floor_cpu']:.2f} s, the floor)")
    if f["turns"] != GOAL_TURNS:
        scaled = f["cpu"] * GOAL_TURNS / f["turns"]
        print(f"  scaled linearly to the goal's {GOAL_TURNS:,} turns: about {scaled:.1f} s CPU "
              "(an estimate from this run, not a measurement; the loader validates one turn at a time)")
    size, seconds, line = measure_bomb()
    print(f"a {size}-byte YAML alias bomb: refused in {seconds * 1000:.1f} ms ({line})")
