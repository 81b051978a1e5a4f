"""The replay benchmark behind ``make perf``: figures, not a pass/fail test.

It generates a catalogue (thousands of sequences, up to hundreds of turns each) and replays it
through every predicate, printing:

* decisions per second of the full replay (decide, checks, step records, requirement judging);
* the ratio of the replay's time to the floor: the same predicate functions called over the same
  turns in a bare loop that only keeps the state a predicate reads (goal: at most 2), and the
  same ratio with the requirement judging that ``stopbench run`` adds on top;
* peak traced memory while cells are streamed to a JSON-lines file, for N and 4N sequences
  (goal: the same, since nothing but the current cell is held);
* first, the loading figures of :mod:`bench.perf_load`: a 100,000-turn sequence file's load
  time and peak memory, and the time to refuse a YAML alias bomb.

Each timing is the median of several rounds in one process; the machines are shared and noisy,
so compare ratios from one run rather than absolute figures across runs.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench import perf_import, perf_load
from bench.discovery import discover
from bench.model import Requirement, Sequence, ToolCall, Turn, Usage
from bench.predicate import Predicate, State
from bench.replay import DEFAULT_SAFETY_CAP, replay
from bench.report import json_line
from bench.runner import run

_TOOLS = ("read_file", "grep", "edit_file", "run_tests", "list_dir")


def generate(n: int, max_turns: int = 300, seed: int = 20261130) -> list[Sequence]:
    """`n` deterministic sequences: mostly tool rounds then an answer, with the usual hostile
    turns mixed in (truncation, dropped calls, stop with calls, unknown finishes, errors)."""
    rng = random.Random(seed)
    out: list[Sequence] = []
    for i in range(n):
        length = rng.randint(1, max_turns)
        turns: list[Turn] = []
        for j in range(length - 1):
            r = rng.random()
            if r < 0.80:
                calls = tuple(ToolCall(f"c{j}_{k}", rng.choice(_TOOLS), '{"path": "a.py"}')
                              for k in range(rng.randint(1, 3)))
                turns.append(Turn("tool_calls", "tool_calls", None if rng.random() < 0.5 else "", calls,
                                  usage=Usage(1000 + j, 50)))
            elif r < 0.85:
                turns.append(Turn("tool_calls", "tool_calls", None))
            elif r < 0.90:
                turns.append(Turn("stop", "stop", "", (ToolCall(f"s{j}", "grep", "{}"),)))
            elif r < 0.95:
                turns.append(Turn("length", "length", None,
                                  (ToolCall(f"t{j}", "edit_file", '{"path": "a.py", "text": "unterm'),)))
            else:
                turns.append(Turn("unknown", "other", "thinking..."))
        turns.append(Turn("stop", "stop", "done", usage=Usage(2000, 100)))
        then = "repeat" if rng.random() < 0.3 else "end"
        out.append(Sequence(id=f"gen-{i:05d}", title="generated", kind="constructed", dialect="openai-chat",
                            source="bench.perf.generate", turns=tuple(turns), then=then,  # type: ignore[arg-type]
                            require=Requirement(ok=True, no_dropped_calls=True)))
    return out


def bare_loop(sequences: list[Sequence], pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP) -> int:
    """The floor: call decide over the same turns the replay consumes, keeping only the state a
    predicate can read. Returns the number of decisions made."""
    decide = pred.decide
    max_steps = pred.max_steps
    total = 0
    for seq in sequences:
        turns = seq.turns
        n = len(turns)
        repeat = seq.then == "repeat"
        state = State()
        step = 0
        while step < safety_cap:
            if step < n:
                turn = turns[step]
            elif repeat:
                turn = turns[-1]
            else:
                break
            step += 1
            state.step = step
            d = decide(turn, state)
            state.turns.append(turn)
            state.decisions.append(d)
            if d.action == "stop" or (max_steps is not None and step >= max_steps):
                break
        total += step
    return total


def full_replay(sequences: list[Sequence], pred: Predicate, judged: bool = False) -> int:
    total = 0
    for seq in sequences:
        total += replay(seq, pred, judged=judged).n_steps
    return total


def _median_time(fn: Callable[[], int], rounds: int) -> tuple[float, int]:
    times = []
    count = 0
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), count


def streamed_peak(sequences: list[Sequence], preds: list[Predicate]) -> int:
    """Peak traced memory (bytes) of a run that streams each cell to a file and keeps none."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cells.jsonl"
        gc.collect()
        tracemalloc.start()
        with out.open("wb") as fh:
            for result in run(sequences, list(preds)):
                fh.write(json_line(result))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def help_seconds(rounds: int = 7) -> float:
    """Median wall time of ``stopbench --help`` in a fresh interpreter (subcommands load lazily, so
    this is the start-up cost every command pays before its own imports)."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bench", "--help"], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=2000, help="generated sequences (default 2000)")
    parser.add_argument("--max-turns", type=int, default=300, help="turns per sequence at most (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds per predicate; the median is shown")
    parser.add_argument("--predicates", type=Path, default=Path("predicates"))
    parser.add_argument("--load-turns", type=int, default=100_000,
                        help="turns of the generated sequence file whose loading is measured (default 100000)")
    parser.add_argument("--load-only", action="store_true", help="only the loading figures, no replay")
    args = parser.parse_args(argv)

    seqs = generate(args.sequences, args.max_turns)
    perf_load.report(args.load_turns, seqs)
    perf_import.report()
    if args.load_only:
        return
    preds = [p for p in discover(args.predicates, entry_points_too=False) if isinstance(p, Predicate)]
    n_turns = sum(len(s.turns) for s in seqs)
    print(f"catalogue: {len(seqs)} generated sequences, {n_turns} turns "
          f"(longest {max(len(s.turns) for s in seqs)}); {len(preds)} predicates; median of {args.rounds} rounds")
    print(f"{'predicate':32} {'decisions':>10} {'replay s':>9} {'bare s':>9} {'decisions/s':>12} {'ratio':>6} "
          f"{'+judging':>9}")
    ratios = []
    judged_ratios = []
    total_decisions = 0
    total_time = 0.0
    for pred in preds:
        t_replay, n_replay = _median_time(partial(full_replay, seqs, pred), args.rounds)
        t_bare, n_bare = _median_time(partial(bare_loop, seqs, pred), args.rounds)
        t_judged, _ = _median_time(partial(full_replay, seqs, pred, True), args.rounds)
        if n_replay != n_bare:
            print(f"  warning: {pred.name}: replay made {n_replay} decisions, bare loop {n_bare}", file=sys.stderr)
        ratio = t_replay / t_bare if t_bare else float("nan")
        ratios.append(ratio)
        judged_ratios.append(t_judged / t_bare if t_bare else float("nan"))
        total_decisions += n_replay
        total_time += t_replay
        print(f"{pred.name:32} {n_replay:>10} {t_replay:>9.3f} {t_bare:>9.3f} {n_replay / t_replay:>12,.0f} "
              f"{ratio:>6.2f} {judged_ratios[-1]:>9.2f}")
    if ratios:
        print(f"all predicates: {total_decisions / total_time:,.0f} decisions/s; replay/bare ratio median "
              f"{statistics.median(ratios):.2f}, max {max(ratios):.2f} (goal: at most 2); with requirement "
              f"judging median {statistics.median(judged_ratios):.2f}")

    # The same sequences replayed once and four times over: only the number of cells differs.
    peak_once = streamed_peak(seqs, preds)
    peak_four = streamed_peak(seqs * 4, preds)
    print(f"peak traced memory while streaming cells to a file: {peak_once / 1e6:.2f} MB for "
          f"{len(seqs) * len(preds)} cells, {peak_four / 1e6:.2f} MB for {4 * len(seqs) * len(preds)} "
          f"(ratio {peak_four / max(peak_once, 1):.2f}; goal: about 1; the generated catalogue is held "
          "outside the measurement)")
    print(f"stopbench --help: {help_seconds():.2f} s wall, median of 7 fresh interpreters (goal: well under 0.5 s)")


if __name__ == "__main__":
    main()
