"""Rule coverage: which declared rules of each predicate fire on at least one cell of a run.

A golden cell guards only the rules its path goes through: a rule that no sequence reaches can be
changed (a budget, a comparison) without any golden file noticing. This module counts, per
predicate, the declared rules (the cap's rule included when the loop has a cap) that appear in at
least one step of the given cells, and sets apart the rules a predicate declares ``unreachable``
(with its reason) from those that simply have no sequence yet. Everything here is a pure function
of its inputs, so the report section is byte-identical for the same run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bench.engine.model import Cell
from bench.engine.predicate import Predicate


@dataclass(frozen=True, slots=True)
class RuleCoverage:
    """One predicate's rules, split by whether a cell fired them.

    `declared` is every rule id, sorted (the cap's rule included when the loop has a cap);
    `fired` the declared ones some step used, with the number of cells and the first sequence
    (in run order) that used each; `never` the rules that fired nowhere and are not declared
    unreachable (a coverage gap); `unreachable` the declared-unreachable rules with their reasons.
    `unreachable_fired` are rules declared unreachable that did fire (the declaration is wrong),
    and `unknown_unreachable` ids declared unreachable that are not rules at all.
    """

    predicate: str
    declared: tuple[str, ...]
    fired: tuple[tuple[str, int, str], ...]
    never: tuple[str, ...]
    unreachable: tuple[tuple[str, str], ...]
    unreachable_fired: tuple[str, ...]
    unknown_unreachable: tuple[str, ...]

    @property
    def n_fired(self) -> int:
        return len(self.fired)

    @property
    def complete(self) -> bool:
        """Every rule fires or is declared unreachable, and every declaration is consistent."""
        return not (self.never or self.unreachable_fired or self.unknown_unreachable)

    def problems(self) -> list[str]:
        """One line per coverage defect of this predicate (empty when :attr:`complete`)."""
        out = [f"{self.predicate}: rule {r!r} fires on no cell and is not declared unreachable"
               for r in self.never]
        out += [f"{self.predicate}: rule {r!r} is declared unreachable but fires" for r in self.unreachable_fired]
        out += [f"{self.predicate}: unreachable names {r!r}, which is not a declared rule"
                for r in self.unknown_unreachable]
        return out


def rule_coverage(predicates: Iterable[Predicate], cells: Iterable[Cell]) -> list[RuleCoverage]:
    """The rule coverage of each predicate over `cells`, in the order of `predicates`.

    Cells of predicates not given are ignored; a predicate with no cell has fired nothing.
    """
    preds = list(predicates)
    names = {p.name for p in preds}
    counts: dict[str, dict[str, int]] = {n: {} for n in names}
    first: dict[str, dict[str, str]] = {n: {} for n in names}
    for cell in cells:
        if cell.predicate not in names:
            continue
        seen = {s.decision.rule for s in cell.steps}
        per, firsts = counts[cell.predicate], first[cell.predicate]
        for rule in seen:
            per[rule] = per.get(rule, 0) + 1
            firsts.setdefault(rule, cell.sequence)
    return [_one(p, counts[p.name], first[p.name]) for p in preds]


def _one(pred: Predicate, counts: Mapping[str, int], first: Mapping[str, str]) -> RuleCoverage:
    declared = tuple(sorted(pred.all_rules))
    unreachable = dict(pred.unreachable)
    fired = tuple((r, counts[r], first[r]) for r in declared if r in counts)
    return RuleCoverage(
        predicate=pred.name,
        declared=declared,
        fired=fired,
        never=tuple(r for r in declared if r not in counts and r not in unreachable),
        unreachable=tuple((r, unreachable[r]) for r in declared if r in unreachable and r not in counts),
        unreachable_fired=tuple(r for r in declared if r in unreachable and r in counts),
        unknown_unreachable=tuple(sorted(r for r in unreachable if r not in declared)),
    )


def summary_line(cov: RuleCoverage) -> str:
    """One line for the run summary, e.g. ``hermes 31/34 rules fire; never: a, b, c``."""
    if not cov.declared:
        return f"{cov.predicate} declares no rules"
    line = f"{cov.predicate} {cov.n_fired}/{len(cov.declared)} rules fire"
    if cov.never:
        line += f"; never: {', '.join(cov.never)}"
    if cov.unreachable:
        line += f"; declared unreachable: {', '.join(r for r, _ in cov.unreachable)}"
    if cov.unreachable_fired:
        line += f"; declared unreachable but fired: {', '.join(cov.unreachable_fired)}"
    if cov.unknown_unreachable:
        line += f"; unreachable names no rule: {', '.join(cov.unknown_unreachable)}"
    return line


def summary_lines(coverage: Iterable[RuleCoverage]) -> list[str]:
    """:func:`summary_line` for each predicate, in order."""
    return [summary_line(c) for c in coverage]


def markdown_section(coverage: Iterable[RuleCoverage]) -> str:
    """The ``## Rule coverage`` section of ``reports/decision-table.md``: a table with one row per
    predicate, then each rule declared unreachable with its reason. Ends without a newline."""
    covs = list(coverage)
    out = ["## Rule coverage", "",
           "Declared rules (the cap's included) that decide at least one step of the catalogue. A rule "
           "no cell reaches is not guarded by any golden cell; a rule the predicate declares unreachable "
           "says why in the predicate file.", "",
           "| predicate | rules | fire | never fire | declared unreachable |",
           "| --- | --- | --- | --- | --- |"]
    for c in covs:
        never = ", ".join(f"`{r}`" for r in c.never) or "-"
        if c.unreachable_fired:
            never += " (declared unreachable but fired: " + ", ".join(f"`{r}`" for r in c.unreachable_fired) + ")"
        unreach = ", ".join(f"`{r}`" for r, _ in c.unreachable) or "-"
        out.append(f"| {c.predicate} | {len(c.declared)} | {c.n_fired} | {never} | {unreach} |")
    reasons = [(c.predicate, r, why) for c in covs for r, why in c.unreachable]
    if reasons:
        out += ["", "Rules declared unreachable:", ""]
        out += [f"- {pred} `{rule}`: {' '.join(why.split())}" for pred, rule, why in reasons]
    return "\n".join(out)
