"""Searching and shrinking: hypothesis looks for an example on which a predicate breaks a
property, shrinks it, and the runner behind ``stopbench fuzz`` does that for every pair."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from random import Random

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import Flaky, NoSuchExample, Unsatisfiable

from bench.engine.contain import DEFAULT_DECISION_TIMEOUT, decision_time_limit
from bench.engine.discovery import Broken, Loaded
from bench.engine.model import Sequence
from bench.engine.predicate import Predicate
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.fuzz._examples import examples
from bench.fuzz._properties import PROPERTIES, Example, Property
from bench.fuzz._trace import trace


@dataclass(frozen=True, slots=True)
class Finding:
    """A property a predicate broke, with the shrunk counterexample."""

    predicate: str
    prop: Property
    sequence: Sequence | None
    """The counterexample as a sequence to replay (for append-invariance: the one with turns appended);
    None when the predicate's declarations alone break the property."""
    example: Example | None
    message: str
    saved: str | None = None

    @property
    def expected(self) -> bool:
        """True when the property is meant to hold for this predicate (a failing test, not just a finding)."""
        return self.prop.holds_for(self.predicate)


@dataclass(slots=True)
class FuzzRun:
    seed: int
    max_examples: int
    predicates: list[str] = field(default_factory=list)
    broken: list[Broken] = field(default_factory=list)
    results: dict[tuple[str, str], Finding | None] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for f in self.results.values() if f is not None]

    def failed(self) -> bool:
        """True when a property meant for a predicate fails, or a predicate does not load."""
        return bool(self.broken) or any(f.expected for f in self.findings)


def fuzz_settings(max_examples: int) -> settings:
    return settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
                    phases=(Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def shrink(pred: Predicate, prop: Property, *, max_examples: int, seed: int,
           safety_cap: int = DEFAULT_SAFETY_CAP) -> Finding | None:
    """Search for an example on which `pred` breaks `prop`; return it shrunk, or None."""
    declared = prop.declared(pred)
    if declared is not None:
        return Finding(pred.name, prop, None, None, declared)
    first: list[tuple[Example, str]] = []

    def breaks(ex: Example) -> bool:
        why = prop.check(pred, ex, safety_cap)
        if why is not None and not first:
            first.append((ex, why))
        return why is not None

    try:
        ex = find(examples(), breaks, settings=fuzz_settings(max_examples), random=Random(seed))
    except (NoSuchExample, Unsatisfiable):
        return None
    except Flaky:
        # the predicate answers differently on the same example (hidden state): shrinking cannot
        # work, so report the first failing example as it was generated
        if not first:
            return None
        ex, why = first[0]
        message = f"{why} (not shrunk: the same example does not always give the same answer)"
    else:
        ex = _trim(pred, prop, ex, safety_cap)
        message = prop.check(pred, ex, safety_cap) or (first[0][1] if first else "")
    return Finding(pred.name, prop, counterexample_sequence(pred, prop, ex, safety_cap), ex, message)


def _trim(pred: Predicate, prop: Property, ex: Example, safety_cap: int) -> Example:
    """Drop the turns the replay never reached, when the property still breaks without them (the
    shrinker can stop at a long sequence whose tail plays no part)."""
    seq, extra = ex
    cell = trace(seq, pred, safety_cap).cell
    if cell is None or not cell.steps:
        return ex
    used = max(s.turn for s in cell.steps) + 1
    if used >= len(seq.turns):
        return ex
    shorter = (replace(seq, turns=seq.turns[:used]), extra)
    return shorter if prop.check(pred, shorter, safety_cap) is not None else ex


def counterexample_sequence(pred: Predicate, prop: Property, ex: Example,
                            safety_cap: int = DEFAULT_SAFETY_CAP) -> Sequence:
    """The sequence to keep for a finding: the example itself, or for append-invariance the stop's
    prefix with the extra turns appended (replaying it shows the difference)."""
    seq, extra = ex
    if prop.name == "append-invariance":
        cell = trace(seq, pred, safety_cap).cell
        if cell is not None and cell.outcome == "stopped":
            seq = replace(seq, turns=seq.turns[:cell.n_steps] + extra)
    return seq


def fuzz(preds: list[Loaded], *, props: tuple[Property, ...] = PROPERTIES, max_examples: int = 100,
         seed: int = 0, safety_cap: int = DEFAULT_SAFETY_CAP,
         decision_timeout: float | None = DEFAULT_DECISION_TIMEOUT,
         progress: Callable[[str], None] | None = None) -> FuzzRun:
    """Check every property on every predicate; each search starts from the same seed. A decision
    that takes longer than `decision_timeout` seconds breaks the property `ends` (None: the limit of
    an enclosing :func:`bench.engine.contain.decision_time_limit`, if any, as ``stopbench fuzz`` sets one)."""
    run = FuzzRun(seed=seed, max_examples=max_examples)
    with decision_time_limit(decision_timeout):
        for pred in preds:
            if isinstance(pred, Broken):
                run.broken.append(pred)
                continue
            run.predicates.append(pred.name)
            if progress:
                progress(f"{pred.name}: {', '.join(p.name for p in props)}")
            for prop in props:
                run.results[(pred.name, prop.name)] = shrink(pred, prop, max_examples=max_examples, seed=seed,
                                                             safety_cap=safety_cap)
    return run
