"""What a run comes to: counts per predicate, the problems worth reading first, and the verdict.

``stopbench run`` prints this on stderr. By default a person gets a table (per predicate: cells,
matches, mismatches, unreviewed, crashed, requirement violations), the first few problems and one
verdict line; ``--verbose`` lists every problem, ``--quiet`` only the failures and the verdict.

The verdict (the exit status) is 1 when a cell mismatches its golden cell or crashed; with
``strict`` also when a cell is unreviewed, with ``fail_on_violations`` also when a cell breaks a
requirement of its sequence; 0 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.golden.expected import Golden
from bench.golden.run import Result

FIRST_FEW = 10
"""Problems (mismatched or crashed cells, violations) listed without --verbose."""


@dataclass(slots=True)
class Counts:
    """One predicate's cells by status."""

    cells: int = 0
    match: int = 0
    mismatch: int = 0
    unreviewed: int = 0
    crashed: int = 0
    violations: int = 0


@dataclass(slots=True)
class Summary:
    """The counts, the problems and the unused expectations of one run."""

    counts: dict[str, Counts]
    failures: list[str] = field(default_factory=list)
    """One text per mismatched or crashed cell (a mismatch spans a few lines)."""
    violations: list[str] = field(default_factory=list)
    unreviewed: dict[str, list[str]] = field(default_factory=dict)
    unused: dict[str, list[str]] = field(default_factory=dict)
    """predicate -> sequence ids it has expectations for that are not in the catalogue."""
    own_catalogue: str | None = None
    """The sequences folder when it is not the default one: unused expectations are then expected."""
    orphans: list[str] = field(default_factory=list)
    """Predicates with a golden file but not loaded (removed or renamed): nothing checks that file."""

    @property
    def total(self) -> Counts:
        t = Counts()
        for c in self.counts.values():
            for name in Counts.__slots__:
                setattr(t, name, getattr(t, name) + getattr(c, name))
        return t

    def exit_status(self, *, strict: bool = False, fail_on_violations: bool = False) -> int:
        t = self.total
        failed = (t.mismatch or t.crashed or (strict and (t.unreviewed or self.orphans))
                  or (fail_on_violations and t.violations))
        return 1 if failed else 0

    def lines(self, *, verbose: bool = False, quiet: bool = False) -> list[str]:
        """The text for stderr, one entry per line (a mismatch entry may hold newlines)."""
        out: list[str] = []
        limit = None if verbose else FIRST_FEW
        if not quiet:
            out += self._table()
        out += _first(self.failures, limit, "mismatched or crashed cells")
        if self.unreviewed and not quiet:
            n = sum(len(v) for v in self.unreviewed.values())
            out.append(f"UNREVIEWED: {n} cell(s) have no expectation in expected/ "
                       "(look at them with `stopbench show`, then `stopbench accept PREDICATE`):")
            for pred, seqs in sorted(self.unreviewed.items()):
                more = f" ... (+{len(seqs) - 8})" if len(seqs) > 8 and not verbose else ""
                out.append(f"  {pred}: {', '.join(seqs if verbose else seqs[:8])}{more}")
        if self.violations and not quiet:
            out.append(f"requirement violations ({len(self.violations)}):")
            out += ["  " + v for v in _first(self.violations, limit, "violations")]
        if not quiet:
            out += self._unused(verbose)
        out += [f"note: a golden file for {name!r}, which is not among the predicates loaded (removed or "
                f"renamed?): its expectations are checked by nothing (a failure with --strict)"
                for name in self.orphans]
        t = self.total
        out.append(f"{t.cells} cells: {t.match} match, {t.mismatch} mismatch, {t.unreviewed} unreviewed, "
                   f"{t.crashed} crashed, {t.violations} requirement violation(s)")
        return out

    def _table(self) -> list[str]:
        if not self.counts:
            return []
        width = max(len("predicate"), *(len(p) for p in self.counts))
        heads = ("cells", "match", "mismatch", "unreviewed", "crashed", "violations")
        rows = [f"{'predicate':<{width}}  " + "  ".join(heads)]
        for name, c in [*sorted(self.counts.items()), ("all", self.total)]:
            values = (c.cells, c.match, c.mismatch, c.unreviewed, c.crashed, c.violations)
            rows.append(f"{name:<{width}}  " + "  ".join(f"{v:>{len(h)}}" for v, h in zip(values, heads, strict=True)))
        return rows

    def _unused(self, verbose: bool) -> list[str]:
        if not self.unused:
            return []
        n = sum(len(v) for v in self.unused.values())
        if self.own_catalogue is not None:
            return [f"note: {n} expectation(s) are for sequences not in {self.own_catalogue} (your own catalogue): "
                    "not a problem, they are ignored"]
        out = []
        for pred, seqs in sorted(self.unused.items()):
            out.append(f"unused expectations: {pred}: {len(seqs)} for sequences not in the catalogue "
                       f"(`stopbench accept {pred} --prune` removes them)")
            if verbose:
                out += [f"  {pred}: {seq}" for seq in seqs]
        return out


def _first(items: list[str], limit: int | None, what: str) -> list[str]:
    if limit is None or len(items) <= limit:
        return list(items)
    return [*items[:limit], f"... and {len(items) - limit} more {what} (--verbose lists them all)"]


def summarise(results: list[Result], golden: Golden, sequence_ids: set[str], *,
              own_catalogue: str | None = None, loaded: set[str] | None = None) -> Summary:
    """Count and collect the problems of `results`; `golden` gives the unused expectations of the
    predicates that ran and, given every predicate `loaded` (not a selection), its orphans."""
    counts: dict[str, Counts] = {}
    s = Summary(counts, own_catalogue=own_catalogue,
                orphans=sorted(set(golden.files) - loaded) if loaded is not None else [])
    for r in results:
        cell = r.cell
        c = counts.get(cell.predicate)
        if c is None:
            c = counts[cell.predicate] = Counts()
        c.cells += 1
        if cell.outcome == "crashed":
            c.crashed += 1
            s.failures.append(f"CRASHED {cell.sequence} x {cell.predicate}: {cell.error}")
        if r.status == "match":
            c.match += 1
        elif r.status == "mismatch":
            c.mismatch += 1
            if cell.outcome != "crashed":
                s.failures.append(str(r.mismatch))
        else:
            c.unreviewed += 1
            s.unreviewed.setdefault(cell.predicate, []).append(cell.sequence)
        c.violations += len(cell.violations)
        for v in cell.violations:
            step = f" at step {v.step}" if v.step is not None else ""
            s.violations.append(f"{cell.predicate} on {cell.sequence}: {v.requirement}{step}: {v.detail}")
    for name, gf in sorted(golden.files.items()):
        if name in counts:
            gone = sorted(seq for seq in gf.cells if seq not in sequence_ids)
            if gone:
                s.unused[name] = gone
    return s

