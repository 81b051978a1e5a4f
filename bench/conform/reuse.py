"""Which (loop, sequence) pairs a CI conformance run drives, and which rows it reuses.

A pair is driven again when its row cannot stand for it any more: no row (or a row never run), no
key, a key that is not the pair's key now (:mod:`bench.conform.keys`), or a row that fails (a
failed driver, a difference its port does not explain). Every other row is reused as it is.

On top of that a *rotating sample* of `size` pairs is driven whatever their keys say, so a change the
key does not see (a registry republishing a pinned version, a dependency of a loop that is not
pinned, a server module left out of the key) cannot go unproven for long. The pairs are put in one
fixed order (by a hash of their names, so a slice mixes loops and sequences) and dealt into
``ceil(pairs / size)`` slices of at most `size` pairs; a run drives slice ``seed mod slices``. The
seed is the number of commits in HEAD's history, so consecutive commits take consecutive slices and
every pair is driven at least once in the CI runs of any ``slices`` consecutive commits (the day
number when git cannot say, as in a shallow clone: then within ``slices`` days of daily CI).
"""

from __future__ import annotations

import hashlib
import math
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.conform.campaign import Port, drivable
from bench.conform.keys import KeySources, moved_parts
from bench.conform.report import KEY_PARTS, read_record, status_of
from bench.conform.runner import Driver
from bench.engine.model import Sequence

Pair = tuple[str, str]
"""(driver name, sequence id)."""

DEFAULT_SAMPLE = 80
"""Pairs a CI run drives whatever their keys say (``make conformance-ci``'s CI_SAMPLE)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The rotating sample of one run: slice `index` of `slices`, and where its seed came from."""

    pairs: tuple[Pair, ...] = ()
    index: int = 0
    slices: int = 0
    seed: str = ""

    def describe(self) -> str:
        if not self.slices:
            return "no sample"
        return (f"sample slice {self.index + 1} of {self.slices} ({len(self.pairs)} pairs; seed: {self.seed}): "
                f"every pair is driven at least once in {self.slices} consecutive commits' CI runs")


@dataclass(frozen=True, slots=True)
class Choice:
    """The pairs to drive (each with why) and the rows to reuse (each with its key)."""

    drive: Mapping[Pair, str] = field(default_factory=dict)
    reuse: Mapping[Pair, str] = field(default_factory=dict)
    sample: Sample = field(default_factory=Sample)

    def counts(self) -> dict[str, int]:
        """How many pairs are driven for each reason (the reason's first words), and reused."""
        out: dict[str, int] = {}
        for why in self.drive.values():
            head = why.split(" (")[0]
            out[head] = out.get(head, 0) + 1
        return {**dict(sorted(out.items())), "reused": len(self.reuse)}

    def summary(self) -> str:
        """One line: how many pairs are driven and why, how many reused, and the sample."""
        driven = ", ".join(f"{n} {why}" for why, n in self.counts().items() if why != "reused") or "none"
        return (f"{len(self.drive) + len(self.reuse)} pair(s): {len(self.drive)} driven ({driven}), "
                f"{len(self.reuse)} reused with their key unchanged; {self.sample.describe()}")


def pair_order(pair: Pair) -> str:
    """A fixed order of pairs that mixes loops and sequences."""
    return hashlib.sha256(f"{pair[0]}\0{pair[1]}".encode()).hexdigest()


def rotating_sample(pairs: Iterable[Pair], size: int, seed: int, seed_source: str = "") -> Sample:
    """Slice ``seed mod slices`` of the pairs in :func:`pair_order`: ``ceil(pairs / size)`` slices, each
    every slices-th pair from its own start, so no slice has more than `size` pairs."""
    ordered = sorted(set(pairs), key=pair_order)
    if size <= 0 or not ordered:
        return Sample(seed=seed_source)
    slices = math.ceil(len(ordered) / size)
    index = seed % slices
    return Sample(tuple(ordered[index::slices]), index, slices, seed_source or str(seed))


def default_seed(root: Path) -> tuple[int, str]:
    """The sample's seed: the number of commits in HEAD's history, or the day number (UTC) when git
    cannot say (no git, not a repository, a shallow clone)."""
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    shallow = git("rev-parse", "--is-shallow-repository")
    count = git("rev-list", "--count", "HEAD") if shallow == "false" else None
    if count is not None and count.isdigit():
        return int(count), f"{count} commits in HEAD"
    day = int(time.time() // 86400)
    return day, f"day {day} since 1970 (UTC; git gave no commit count)"


def stale(row: Mapping[str, Any] | None, key: str, explained: Mapping[str, str], sequence: str) -> str | None:
    """Why the row cannot stand for a pair whose key is `key` now, or None when it can be reused."""
    if row is None or row.get("original") is None or row.get("not_run") or row.get("not_driven"):
        return "no record"
    if not row.get("key"):
        return "no key"
    if row["key"] != key:
        return "key changed"
    if status_of(row, explained, sequence) not in ("same", "explained"):
        return "failing"
    return None


def choose(keys: Mapping[Pair, str], records: Mapping[str, Mapping[str, Any] | None],
           explained: Mapping[str, Mapping[str, str]], moved: Mapping[str, list[str]], sample: Sample) -> Choice:
    """For each pair of `keys` (those a run could drive), drive it or reuse its record's row.
    `moved` names, per driver, the loop-wide key parts that changed since its record was written, to
    say why a key changed."""
    drive: dict[Pair, str] = {}
    reuse: dict[Pair, str] = {}
    sampled = set(sample.pairs)
    for pair, key in keys.items():
        driver, seq = pair
        record = records.get(driver) or {}
        row = record.get("sequences", {}).get(seq)
        why = stale(row if isinstance(row, Mapping) else None, key, explained.get(driver, {}), seq)
        if why == "key changed":
            parts = moved.get(driver) or []
            why += f" ({', '.join(parts)})" if parts else " (the sequence, its spec or its port cell)"
        if why is None and pair in sampled:
            why = "sample"
        if why is None:
            reuse[pair] = key
        else:
            drive[pair] = why
    return Choice(drive, reuse, sample)


def keys_of(drivers: Iterable[Driver], seqs: Iterable[Sequence], ports: Mapping[str, Port],
            sources: KeySources) -> dict[Pair, str]:
    """The key now of every pair a run drives (neither not run on nor not driven)."""
    return {(d.name, s.id): sources.key(d, s, ports[d.name].predicate) for d, s in drivable(drivers, seqs, ports)}


def plan_reuse(keys: Mapping[Pair, str], drivers: Iterable[Driver], ports: Mapping[str, Port], report_dir: Path,
               sources: KeySources, *, sample_size: int, seed: tuple[int, str] | None = None) -> Choice:
    """Which of the pairs of `keys` to drive and which rows to reuse, from the records in `report_dir`.
    `seed` is the sample's (value, where it came from); None: :func:`default_seed`."""
    drivers = list(drivers)
    records = {d.name: read_record(report_dir, d.name) for d in drivers}
    value, source = seed if seed is not None else default_seed(sources.root)
    sample = rotating_sample(keys, sample_size, value, source)
    moved = {d.name: moved_parts((records[d.name] or {}).get(KEY_PARTS), sources.parts(d)) for d in drivers}
    return choose(keys, records, {n: p.explained for n, p in ports.items()}, moved, sample)
