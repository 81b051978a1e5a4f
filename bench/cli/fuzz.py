"""``stopbench fuzz``: check the bench's properties on every predicate with generated sequences."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.catalogue.files import write_all_or_nothing
from bench.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    decision_timeout_option,
    discover_in,
    named,
    no_entry_points_option,
    only_mine_option,
    only_predicates_option,
    predicate_folders,
    predicates_option,
    reports_option,
    safety_cap_option,
    sequences_option,
)


@click.command("fuzz")
@only_predicates_option
@click.option("--property", "only_props", multiple=True,
              help="Only this property (repeatable); see reports/fuzz-findings.md for the list.")
@click.option("--save", is_flag=True,
              help="Write each shrunk counterexample to <sequences>/found/ as a constructed sequence.")
@click.option("--max-examples", type=click.IntRange(min=1), default=100, show_default=True,
              help="Examples tried per property and predicate.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every search (same seed, same findings).")
@sequences_option
@predicates_option
@only_mine_option
@reports_option
@safety_cap_option
@no_entry_points_option
@decision_timeout_option
def fuzz_cmd(only: tuple[str, ...], only_props: tuple[str, ...], save: bool, max_examples: int, seed: int,
             sequences_dir: Path, predicates_dir: Path, reports_dir: Path, safety_cap: int,
             no_entry_points: bool) -> None:
    """Search for sequences on which a predicate breaks a property, shrink them, report them.

    Properties for every predicate: the replay ends, never crashes, decisions are well formed with
    declared rules and reasons, no phantom tool calls, deterministic, turns appended after the stop
    change nothing. Properties of the reference loop (predicates/reference.py) are checked on every
    predicate too: where another loop breaks one, that is a finding about it. Writes
    reports/fuzz-findings.md (same seed, same bytes).

    Exit status: 0 when every property holds where it is meant to (findings about other loops
    included), 1 when one fails there or a predicate does not load, 2 on unusable options or when
    there is no predicate to fuzz.
    """
    from bench import fuzz  # hypothesis: imported only when this command runs

    unknown = [p for p in only_props if p not in fuzz.BY_NAME]
    if unknown:
        raise click.UsageError(f"no property named {', '.join(unknown)}; have {', '.join(fuzz.BY_NAME)}")
    props = tuple(p for p in fuzz.PROPERTIES if not only_props or p.name in only_props)
    preds = discover_in(predicate_folders(predicates_dir), entry_points_too=not no_entry_points)
    preds = named(preds, only)
    if not preds:
        click.echo(f"nothing to fuzz: no predicate under {predicates_dir}"
                   + ("" if no_entry_points else " nor in the installed packages"), err=True)
        sys.exit(EXIT_BAD_INPUT)
    if not any(p.name == fuzz.REFERENCE for p in preds) and any(p.scope == "reference" for p in props):
        click.echo(f"note: no predicate named {fuzz.REFERENCE!r}; the reference properties are only findings "
                   "here", err=True)

    run = fuzz.fuzz(preds, props=props, max_examples=max_examples, seed=seed, safety_cap=safety_cap,
                    decision_timeout=None, progress=lambda msg: click.echo(f"fuzzing {msg}", err=True))
    found = fuzz.found_files(run, sequences_dir / "found") if save else {}
    out = reports_dir / "fuzz-findings.md"
    write_all_or_nothing({**found, out: fuzz.report(run)})  # the finds and the report, all or none
    for path in found:
        click.echo(f"saved {path}", err=True)
    click.echo(f"wrote {out}", err=True)

    for b in run.broken:
        click.echo(f"BROKEN {b.name}: {b.error}", err=True)
    for f in sorted(run.findings, key=lambda f: (f.predicate, f.prop.name)):
        tag = "FAILS" if f.expected else "finding"
        click.echo(f"{tag} {f.predicate} breaks {f.prop.name}: {f.message}", err=True)
    checked = len(run.results)
    click.echo(f"{checked} (predicate, property) pairs checked: {checked - len(run.findings)} hold, "
               f"{sum(f.expected for f in run.findings)} fail where meant to hold, "
               f"{sum(not f.expected for f in run.findings)} finding(s) about other loops", err=True)
    sys.exit(EXIT_MISMATCH if run.failed() else EXIT_OK)
