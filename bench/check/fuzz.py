"""Live fuzzing: generated sequences (:mod:`bench.fuzz.strategies`) served to a real program, judged by
the reference loop's properties, a failure shrunk (within a time budget) and kept as a sequence file.

The properties are those of ``stopbench fuzz`` for the reference loop, read off an observed cell:

* ``no-false-ok``: no success reported on a truncated, filtered or errored turn, nor on a turn
  carrying tool calls (the server sees no request after it, so their results never reached the
  model);
* ``keeps-calls``: no tool call thrown away (:func:`bench.engine.judge.first_dropped_calls`);
* ``within-cap``: the program stops by itself: not ``capped`` at the safety cap, and not hung past
  the time limit (``crashed``).

The strategies' hostile turns are kept, except that the tool call ids of a turn are made distinct
(:func:`distinct_ids`): the server tells calls apart by id only.

Every example runs the program once (seconds each), so shrinking a live program is slow: the search
stops shrinking after `shrink_time` seconds and keeps the smallest failing example seen. Answers are
cached by the example's YAML, so hypothesis replaying an example does not run the program again (and
a program that answers differently on the same input cannot make the search flaky).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING, cast

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

if TYPE_CHECKING:
    from bench.check.options import CheckOptions, Loop
    from bench.check.served import Served

from bench.catalogue.document import dump_sequence, sequence_to_yaml
from bench.engine.judge import first_dropped_calls
from bench.engine.model import Cell, Dialect, Requirement, Sequence, Then, Turn
from bench.fuzz import strategies as bs

LIVE_DIALECTS: tuple[Dialect, ...] = ("openai-chat", "anthropic", "openai-responses")
"""Dialects fuzzed by default: a checked program is given the OpenAI and Anthropic base URLs only."""

_BAD_FINISHES = frozenset({"length", "content_filter", "error"})


def live_failure(sequence: Sequence, cell: Cell) -> tuple[str, str] | None:
    """The first reference property the observed cell breaks, as (property, why), or None."""
    if cell.outcome == "capped":
        return "within-cap", f"did not stop within the safety cap ({cell.n_steps} requests)"
    if cell.outcome == "crashed":
        return "within-cap", f"no verdict: {cell.error}"
    if cell.outcome == "stopped" and cell.ok and cell.steps:
        last = cell.steps[-1]
        turn = sequence.turns[last.turn]
        why = ""
        if turn.error is not None or turn.finish == "error":
            why = "an errored turn"
        elif turn.finish in _BAD_FINISHES:
            why = {"length": "a truncated turn", "content_filter": "a filtered turn"}[turn.finish]
        elif turn.tool_calls:
            why = f"a turn carrying {len(turn.tool_calls)} tool call(s) whose results never reached the model"
        if why:
            return "no-false-ok", (f"reported success ({cell.reason}) at step {last.step} on turn {last.turn}, "
                                   f"{why} (finish {turn.finish}, raw {turn.finish_raw!r})")
    dropped = first_dropped_calls(sequence, cell)
    if dropped is not None:
        return "keeps-calls", dropped[1]
    return None


def distinct_ids(sequence: Sequence) -> Sequence:
    """The sequence with the tool call ids of each turn made distinct (a repeated or empty id gets a
    suffix): the server tells a turn's calls apart by their ids only, so two results for one id
    cannot be told from one call answered twice."""
    turns = []
    for turn in sequence.turns:
        seen: set[str] = set()
        calls = []
        for n, call in enumerate(turn.tool_calls):
            cid, k = call.id, 0
            while not cid or cid in seen:
                k += 1
                cid = f"{call.id or 'call'}_{n}_{k}"
            seen.add(cid)
            calls.append(replace(call, id=cid))
        turns.append(replace(turn, tool_calls=tuple(calls)))
    return replace(sequence, turns=tuple(turns))


def _requirement(prop: str, sequence: Sequence) -> Requirement:
    if prop == "keeps-calls":
        return Requirement(no_dropped_calls=True)
    if prop == "within-cap":
        return Requirement()  # as `stopbench fuzz`: no requirement follows from the loop's own cap
    if all(t.finish in _BAD_FINISHES or t.error is not None for t in sequence.turns):
        return Requirement(ok=False)
    return Requirement()


@dataclass(slots=True)
class LiveFinding:
    """The smallest failing example found, the property it breaks and why."""

    sequence: Sequence
    prop: str
    why: str
    cell: Cell


@dataclass(slots=True)
class LiveFuzz:
    """A live fuzzing run: how many examples ran, the finding, and the times."""

    examples: int = 0
    finding: LiveFinding | None = None
    search_seconds: float = 0.0
    shrink_seconds: float = 0.0
    shrink_stopped: bool = False
    failing_seen: int = 0
    cache: dict[str, tuple[str, str] | None] = field(default_factory=dict)


def _size(seq: Sequence) -> tuple[int, int]:
    return len(seq.turns), len(sequence_to_yaml(seq))


def search(judge_one: Callable[[Sequence], tuple[tuple[str, str] | None, Cell]], max_examples: int, *,
           seed: int = 0, dialects: tuple[Dialect, ...] = LIVE_DIALECTS, shrink_time: float = 120.0,
           then: Then | None = None, progress: Callable[[str], None] | None = None) -> LiveFuzz:
    """Generate up to `max_examples` sequences, run each through `judge_one`, shrink the first failure
    for at most `shrink_time` seconds; the result has the smallest failing example seen."""
    out = LiveFuzz()
    started = time.monotonic()
    first_failure: list[float] = []
    # open loop only: a reactive turn may send a loop back to an earlier turn for ever, and a live loop
    # without a cap of its own (the naive loop) would then run until killed (in-process: never)
    strategy = st.sampled_from(dialects).flatmap(
        lambda d: bs.sequences(d, max_turns=6, then=then, reactive=False))
    strategy = strategy.map(distinct_ids)

    def fails(seq: Sequence) -> bool:
        key = sequence_to_yaml(replace(seq, id="x", path=""))
        if key in out.cache:
            return out.cache[key] is not None
        if first_failure and time.monotonic() - first_failure[0] > shrink_time:
            out.shrink_stopped = True
            return False  # over budget: every new candidate is refused, so the shrinker ends
        found, cell = judge_one(seq)
        out.examples += 1
        out.cache[key] = found
        if progress is not None:
            progress(f"example {out.examples}: {len(seq.turns)} turn(s), {seq.dialect}: "
                     + ("holds" if found is None else f"FAILS {found[0]}: {found[1]}"))
        if found is not None:
            out.failing_seen += 1
            if not first_failure:
                first_failure.append(time.monotonic())
            if out.finding is None or _size(seq) < _size(out.finding.sequence):
                out.finding = LiveFinding(seq, found[0], found[1], cell)
        return found is not None

    config = settings(max_examples=max_examples, database=None, deadline=None,
                      phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    with contextlib.suppress(NoSuchExample, Unsatisfiable):
        find(strategy, fails, settings=config, random=Random(seed))
    end = time.monotonic()
    if first_failure:
        out.search_seconds = first_failure[0] - started
        out.shrink_seconds = end - first_failure[0]
    else:
        out.search_seconds = end - started
    return out


def fuzz_program(loop: Loop, options: CheckOptions, max_examples: int, *, seed: int = 0,
                 shrink_time: float = 120.0, progress: Callable[[str], None] | None = None) -> LiveFuzz:
    """``check --fuzz N``: :func:`search` with `loop`'s program run once per example as `options` say
    (its time limit, safety cap, result markers and folder; its dialects, else :data:`LIVE_DIALECTS`).
    Raises OSError when the program cannot be started."""
    from bench.check.report import column
    from bench.check.runner import run_program

    def judge_one(seq: Sequence) -> tuple[tuple[str, str] | None, Cell]:
        run = run_program(seq, loop.argv, name=column(loop.name), timeout=options.timeout,
                          safety_cap=options.safety_cap, cwd=options.cwd or Path.cwd(),
                          ok_marker=options.ok_marker, error_marker=options.error_marker)
        return live_failure(seq, run.cell), run.cell

    dialects = cast("tuple[Dialect, ...]", options.dialects) or LIVE_DIALECTS
    return search(judge_one, max_examples, seed=seed, dialects=dialects, shrink_time=shrink_time, progress=progress)


def found_sequence(finding: LiveFinding, name: str, seed: int, shrink_note: str) -> Sequence:
    """The finding as a constructed catalogue sequence, its require: block from the property."""
    from bench.fuzz import short_hash

    seq = finding.sequence
    sid = f"found-live-{name}-{finding.prop}-{short_hash(seq)}"
    source = (f"Found by `stopbench check --fuzz --seed {seed}` against the live program {name} (hypothesis, "
              f"{shrink_note}): it broke the reference property {finding.prop}: {finding.why}")
    return replace(seq, id=sid, title=f"found live: {name} breaks {finding.prop}", kind="constructed",
                   source=source, tags=("found", "fuzz", "live", finding.prop),
                   require=_requirement(finding.prop, seq), path="")


def save_finding(finding: LiveFinding, folder: Path, name: str, seed: int, shrink_note: str) -> Path:
    seq = found_sequence(finding, name, seed, shrink_note)
    return dump_sequence(seq, folder / f"{seq.id}.yaml")


def fuzz_loop(loop: Callable[[Served], tuple[bool, str]], max_examples: int = 20, *, seed: int = 0,
              dialects: tuple[Dialect, ...] = LIVE_DIALECTS, shrink_time: float = 60.0,
              safety_cap: int = 50) -> LiveFuzz:
    """Live-fuzz a loop that runs in this process (the pytest plugin's helper).

    `loop(served)` runs the loop against ``served.openai_base_url`` / ``anthropic_base_url`` and
    returns ``(ok, reason)``. The loop runs in this process, where it cannot be killed, so only
    ``then: end`` sequences are generated: past their last turn the server answers 410 and the
    loop's client raises. Use
    :func:`assert_no_finding` on the result::

        def test_my_loop_keeps_the_reference_properties():
            assert_no_finding(fuzz_loop(lambda s: my_loop(s.openai_base_url, s.prompt, s.tools)))
    """
    from bench.check.served import served

    start = Sequence("fuzz-start", "-", "constructed", LIVE_DIALECTS[0], "-", (Turn("stop", "stop", "ok"),))
    with served(start, name="loop@live") as server:
        def judge_one(seq: Sequence) -> tuple[tuple[str, str] | None, Cell]:
            s = server.serve(seq)
            try:
                ok, reason = loop(s)
            except Exception as exc:  # the loop raised: it gave up, openly
                ok, reason = False, f"raised {type(exc).__name__}: {exc}"
            cell = s.cell(ok, reason, safety_cap=safety_cap)
            return live_failure(seq, cell), cell

        return search(judge_one, max_examples, seed=seed, dialects=dialects, shrink_time=shrink_time, then="end")


def assert_no_finding(result: LiveFuzz) -> None:
    """AssertionError with the property, why, and the smallest failing sequence as catalogue YAML."""
    __tracebackhide__ = True
    f = result.finding
    if f is not None:
        yaml = sequence_to_yaml(replace(f.sequence, require=_requirement(f.prop, f.sequence)))
        raise AssertionError(f"breaks {f.prop}: {f.why}\nafter {result.examples} example(s); the smallest "
                             f"failing sequence:\n{yaml}")
