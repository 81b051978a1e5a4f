"""What a fuzz run leaves: each finding as a constructed catalogue sequence, and
reports/fuzz-findings.md (the same run gives the same bytes)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from bench.catalogue.document import sequence_to_yaml
from bench.catalogue.files import write_all_or_nothing
from bench.engine.model import Requirement, Sequence
from bench.fuzz._properties import PROPERTIES, REFERENCE
from bench.fuzz._shrink import Finding, FuzzRun


def short_hash(seq: Sequence) -> str:
    """8 hex digits of the sequence's content (dialect, then, turns), for a stable file name."""
    body = sequence_to_yaml(replace(seq, id="", title="-", source="-", tags=(), require=Requirement()))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:8]


def found_sequence(finding: Finding, seed: int) -> Sequence | None:
    """The finding as a constructed catalogue sequence (its id is the file name it is saved under),
    or None for a finding about declarations."""
    seq = finding.sequence
    if seq is None:
        return None
    sid = f"found-{finding.predicate}-{finding.prop.name}-{short_hash(seq)}"
    source = (f"Found by `stopbench fuzz --seed {seed}` (hypothesis, shrunk): predicate {finding.predicate} "
              f"broke property {finding.prop.name} ({finding.prop.statement}): {finding.message}")
    return replace(seq, id=sid, title=f"found: {finding.predicate} breaks {finding.prop.name}", kind="constructed",
                   source=source, tags=("found", "fuzz", finding.prop.name), require=finding.prop.require(seq),
                   path="")


def found_files(run: FuzzRun, folder: Path) -> dict[Path, str]:
    """Each finding as the text of ``folder/found-<predicate>-<property>-<hash>.yaml``, by path;
    each finding of `run` is marked as saved there (the report says where)."""
    files: dict[Path, str] = {}
    for key, finding in sorted(run.results.items()):
        seq = found_sequence(finding, run.seed) if finding is not None else None
        if finding is None or seq is None:
            continue
        path = folder / f"{seq.id}.yaml"
        run.results[key] = replace(finding, saved=str(path))
        files[path] = sequence_to_yaml(seq)
    return files


def save(run: FuzzRun, folder: Path) -> list[Path]:
    """Write every finding's sequence (:func:`found_files`), all or none; return the paths."""
    files = found_files(run, folder)
    write_all_or_nothing(files)
    return list(files)


def report(run: FuzzRun) -> str:
    """reports/fuzz-findings.md: the same run gives the same bytes."""
    lines = ["# Fuzz findings", "",
             f"Written by `stopbench fuzz --seed {run.seed} --max-examples {run.max_examples}`: each property "
             "was searched with hypothesis on generated sequences (every dialect, plain to hostile, some very "
             "long) and each counterexample shrunk to a minimal one. A failure of a property meant for the "
             "predicate (every predicate, or the reference loop for its own properties) is a bug; any other "
             "failure is a finding about that loop. `holds` means no counterexample was found in "
             f"{run.max_examples} examples, not a proof.", "",
             "## Properties", "", "| property | meant for | statement |", "| --- | --- | --- |"]
    for p in PROPERTIES:
        if any(name == p.name for _, name in run.results):
            lines.append(f"| `{p.name}` | {'every predicate' if p.scope == 'every' else REFERENCE} | {p.statement} |")
    names = [p.name for p in PROPERTIES if any(n == p.name for _, n in run.results)]
    lines += ["", "## Results", "", "| predicate | " + " | ".join(f"`{n}`" for n in names) + " |",
              "| --- |" + " --- |" * len(names)]
    for pred in run.predicates:
        row = []
        for n in names:
            f = run.results.get((pred, n))
            row.append("holds" if f is None else ("**FAILS**" if f.expected else "finding"))
        lines.append(f"| {pred} | " + " | ".join(row) + " |")
    for b in run.broken:
        lines.append(f"| {b.name} | does not load: {b.error} |")
    findings = sorted(run.findings, key=lambda f: (not f.expected, f.predicate, names.index(f.prop.name)))
    lines += ["", "## Findings", ""]
    if not findings:
        lines.append("None: every property held on every example tried.")
    for f in findings:
        status = "a bug: the property is meant to hold for it" if f.expected else "a finding about this loop"
        lines += [f"### {f.predicate} breaks `{f.prop.name}`", "",
                  f"{f.prop.statement} ({status}).", "", f"What happened: {f.message}", ""]
        if f.saved:
            lines += [f"Saved as `{_relative(f.saved)}`.", ""]
        seq = found_sequence(f, run.seed)
        if seq is None:
            lines += ["No sequence needed: the predicate's declarations alone break the property.", ""]
        else:
            lines += ["Minimal sequence:", "", "```yaml", sequence_to_yaml(seq).rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path
