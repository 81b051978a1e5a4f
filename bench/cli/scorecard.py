"""``stopbench scorecard``: install a framework, record it with ``check``, build the scorecard from the records."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from bench.cli._common import EXIT_INTERRUPTED, EXIT_MISMATCH, EXIT_OK, jobs_option

if TYPE_CHECKING:
    from bench.scorecard.framework import Framework
    from bench.scorecard.record import Recorded

_framework_dir = click.option("--framework-dir", type=click.Path(path_type=Path),
                              default=lambda: os.environ.get("FRAMEWORK_DIR", "/tmp/stopbench-frameworks"),
                              show_default="$FRAMEWORK_DIR or /tmp/stopbench-frameworks",
                              help="Where each framework's venv or npm prefix is installed.")
_frameworks = click.option("--frameworks", "frameworks_dir", type=click.Path(path_type=Path),
                           default=Path("examples/frameworks"), show_default=True,
                           help="Folder of framework folders (<name>/framework.json).")
_records = click.option("--records", "records_dir", type=click.Path(path_type=Path),
                        default=Path("reports/frameworks"), show_default=True,
                        help="Folder of the framework records and the scorecard.")


F = TypeVar("F", bound=Callable[..., Any])


def _stoppable(fn: F) -> F:
    """A command that runs frameworks: Ctrl-C or SIGTERM (CI's timeout) ends it with one line and exit 2,
    once the check it started has ended its runs (:mod:`bench.scorecard.record`), no record written."""
    @functools.wraps(fn)
    def stoppable(*args: Any, **kwargs: Any) -> Any:
        from bench.check import Terminated, sigterm_as_interrupt
        try:
            with sigterm_as_interrupt():
                return fn(*args, **kwargs)
        except KeyboardInterrupt as exc:
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            click.echo(f"interrupted ({how}): the framework's runs ended, nothing written", err=True)
            sys.exit(EXIT_INTERRUPTED)
    return stoppable  # type: ignore[return-value]


_release = click.option("--release", default=None, metavar="VERSION",
                        help="The release of the framework's main packages installed beside the pinned one "
                             "(stopbench scorecard bump), in FRAMEWORK_DIR/NAME@VERSION, recorded as "
                             "NAME@VERSION.json.")


def _framework(frameworks_dir: Path, name: str, release: str | None = None) -> Framework:
    from bench.errors import UnusableInput
    from bench.scorecard.framework import load_framework
    folder = frameworks_dir / name
    if not (folder / "framework.json").is_file():
        known = sorted(p.parent.name for p in frameworks_dir.glob("*/framework.json"))
        raise UnusableInput(f"no framework {name!r} under {frameworks_dir} (known: {', '.join(known) or 'none'})")
    fw = load_framework(folder)
    if release is None or release == fw.version:
        return fw
    if not fw.main_packages:
        raise UnusableInput(f"{folder / 'framework.json'}: install: no package is pinned at version {fw.version}: "
                            "--release has no main package to move")
    return fw.at_release(release)


@click.group("scorecard")
def scorecard_cmd() -> None:
    """Frameworks' own agent loops under ``stopbench check``: install, record, build the scorecard.

    A framework is a folder examples/frameworks/<name>/ (framework.json and its program; see
    docs/frameworks.md). ``record`` writes reports/frameworks/<name>.json; ``build`` writes
    reports/frameworks/scorecard.md and the table of docs/frameworks.md from the records alone.
    """


@scorecard_cmd.command("list")
@_frameworks
def list_cmd(frameworks_dir: Path) -> None:
    """Print the framework names, one a line (checking every framework.json)."""
    from bench.scorecard.framework import load_frameworks
    for fw in load_frameworks(frameworks_dir):
        click.echo(fw.name)


@scorecard_cmd.command("install")
@click.argument("name")
@_release
@_frameworks
@_framework_dir
@_stoppable
def install_cmd(name: str, release: str | None, frameworks_dir: Path, framework_dir: Path) -> None:
    """Install framework NAME in FRAMEWORK_DIR/NAME (a venv or an npm prefix), unless its stamp says it is."""
    from bench.scorecard.install import install, install_dir
    fw = _framework(frameworks_dir, name, release)
    done = install(framework_dir, fw)
    click.echo(f"{fw.key}: {'installed' if done else 'already installed'} in {install_dir(framework_dir, fw)}",
               err=True)


@scorecard_cmd.command("record")
@click.argument("name")
@click.option("-s", "--sequence", "ids", multiple=True, help="Only this sequence id (repeatable).")
@jobs_option(default=2)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds one run of the program may take (check's --timeout).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Write the record here [default: <records>/<name>.json].")
@click.option("--update", is_flag=True,
              help="Re-record only the -s sequences and put their cells into the existing record (the "
                   "others kept), after a bench change that serves those sequences otherwise.")
@click.option("--changed", is_flag=True,
              help="Bring the existing record onto the catalogue: run only the sequences of its wires added "
                   "or changed since it was made (by their files' digests), drop the cells of those removed, "
                   "keep the rest. Nothing is run when it is on the catalogue already.")
@_release
@_frameworks
@_framework_dir
@_records
@_stoppable
def record_cmd(name: str, ids: tuple[str, ...], jobs: int, timeout: float, out: Path | None, update: bool,
               changed: bool, release: str | None, frameworks_dir: Path, framework_dir: Path,
               records_dir: Path) -> None:
    """Run ``stopbench check`` on framework NAME and write its record.

    Exit status 0 when the record is written or already on the catalogue (whatever the framework's
    verdicts: they are the record), 2 when the framework is not installed, the check gave no
    record, or --changed or --update has no record to start from.
    """
    from bench.errors import UnusableInput
    from bench.scorecard.record import run_record
    if changed and (ids or update):
        raise UnusableInput("--changed chooses the sequences itself: give neither -s nor --update with it")
    fw = _framework(frameworks_dir, name, release)
    done = run_record(fw, framework_dir, Path.cwd(), jobs=jobs, timeout=timeout, ids=ids,
                      out=out or records_dir / f"{fw.key}.json", update=update, changed=changed)
    _say_recorded(done)


def _say_recorded(done: Recorded) -> None:
    """What a record run did: the sequences run and dropped, and the verdicts that moved."""
    from bench.scorecard.rows import row_of
    from bench.scorecard.versions import verdict_changes
    if done.before is not None and not done.ran and not done.dropped:
        click.echo(f"{done.path}: on the catalogue already; nothing run", err=True)
        return
    click.echo(f"wrote {done.path}: {len(done.ran)} sequence(s) recorded"
               + (f", {len(done.dropped)} dropped ({', '.join(done.dropped)})" if done.dropped else ""), err=True)
    if done.before is not None:
        after = json.loads(done.path.read_text(encoding="utf-8"))
        moved = verdict_changes(done.before, after)
        for change in moved:
            click.echo(f"  {change.sequence}: {change.before} -> {change.after}", err=True)
        click.echo(f"{len(moved)} verdict(s) moved", err=True)
        before = {c["sequence"] for c in done.before.get("cells", [])}
        for sequence, verdict in row_of(after).verdicts:
            if sequence not in before:
                click.echo(f"  new {sequence}: {verdict}", err=True)


@scorecard_cmd.command("rejudge")
@click.argument("names", nargs=-1)
@_records
def rejudge_cmd(names: tuple[str, ...], records_dir: Path) -> None:
    """Judge the cells of the records NAMES (default: every record) again on the catalogue, without
    running the frameworks: after a change to the judge (what it marks as a guess, a requirement's
    words), then ``stopbench scorecard build``. A cell whose requirements broken would differ is
    kept as recorded and named (its sequence changed since: record it again). Exit status 0."""
    from bench.catalogue.files import write_atomically
    from bench.errors import UnusableInput
    from bench.scorecard.record import record_text, rejudge_record
    paths = [records_dir / f"{n}.json" for n in names] or sorted(records_dir.glob("*.json"))
    for path in paths:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise UnusableInput(f"{path}: no readable framework record") from None
        new, kept = rejudge_record(record, Path.cwd())
        for line in kept:
            click.echo(f"{path}: {line}", err=True)
        if new != record:
            write_atomically(path, record_text(new))
        click.echo(f"{path}: {'rejudged' if new != record else 'as recorded'}", err=True)


@scorecard_cmd.command("verify")
@click.argument("name")
@click.option("-s", "--sequence", "ids", multiple=True, help="A sequence of the sample (repeatable).")
@click.option("--rotating", type=click.IntRange(min=0), default=0, show_default=True,
              help="Add about this many of the recorded sequences, a slice that turns with each commit.")
@jobs_option(default=2)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True)
@_release
@_frameworks
@_framework_dir
@_records
@_stoppable
def verify_cmd(name: str, ids: tuple[str, ...], rotating: int, jobs: int, timeout: float, release: str | None,
               frameworks_dir: Path, framework_dir: Path, records_dir: Path) -> None:
    """Re-run framework NAME on the sequences given (and a rotating slice of its record with
    --rotating) and compare each cell with its committed record (with --release, the record of that
    release beside the pin, NAME@VERSION).

    Exit status 0 when every cell is the committed one, 1 when one differs (each named with its
    first differing field), 2 when there is no record, the framework is not installed, a sequence
    is not in the record, or no sequence is given.
    """
    from bench.errors import UnusableInput
    from bench.scorecard.verify import rotating_ids, verify
    fw = _framework(frameworks_dir, name, release)
    record = records_dir / f"{fw.key}.json"
    if rotating:
        turned, said = rotating_ids(record, rotating, Path.cwd())
        click.echo(f"{fw.key}: {said}: {', '.join(turned)}", err=True)
        ids = tuple(dict.fromkeys((*ids, *turned)))
    if not ids:
        raise UnusableInput(f"scorecard verify {fw.key}: no sequence to re-run (give -s or --rotating)")
    diffs = verify(fw, framework_dir, Path.cwd(), record, ids, jobs=jobs, timeout=timeout)
    for d in diffs:
        click.echo(f"{fw.key} {d.sequence}: {d.field} differs from the committed record: "
                   f"{json.dumps(d.committed, ensure_ascii=False)[:200]} -> "
                   f"{json.dumps(d.now, ensure_ascii=False)[:200]}", err=True)
    click.echo(f"{fw.key}: {len(ids) - len(diffs)} of {len(ids)} cell(s) as recorded", err=True)
    sys.exit(EXIT_MISMATCH if diffs else EXIT_OK)


@scorecard_cmd.command("bump")
@click.argument("names", nargs=-1)
@click.option("--list", "list_only", is_flag=True, help="Only say the newer releases: install and record nothing.")
@jobs_option(default=2)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds one run of the program may take (check's --timeout).")
@_frameworks
@_framework_dir
@_records
@_stoppable
def bump_cmd(names: tuple[str, ...], list_only: bool, jobs: int, timeout: float, frameworks_dir: Path,
             framework_dir: Path, records_dir: Path) -> None:
    """Record the newest release of each framework NAME (default: every one) beside its pinned one.

    This command uses the network: it asks the package index (the PyPI JSON API for a Python
    framework, the npm registry for a Node one) for the final releases of the framework's main
    packages (those pinned at its version) newer than the pin, installs the newest in
    FRAMEWORK_DIR/NAME@VERSION (pip, from the index) and records it as <records>/NAME@VERSION.json.
    The pinned record and framework.json are kept as they are; ``stopbench scorecard build`` then
    shows what changed between the versions. A release already recorded is not recorded again; a
    Node framework's release is listed, not recorded. Exit status 0, 2 when an index cannot be
    read or an install fails.
    """
    from bench.scorecard.bump import bump_one
    from bench.scorecard.framework import load_frameworks
    chosen = [_framework(frameworks_dir, n) for n in names] or load_frameworks(frameworks_dir)
    for fw in chosen:
        done = bump_one(fw, framework_dir, Path.cwd(), records_dir, jobs=jobs, timeout=timeout, list_only=list_only)
        click.echo(done.said, err=True)


@scorecard_cmd.command("build")
@_records
@_frameworks
@click.option("--docs", "docs_path", type=click.Path(path_type=Path), default=Path("docs/frameworks.md"),
              show_default=True, help="The docs page whose scorecard block is rewritten.")
@click.option("--readme", "readme_path", type=click.Path(path_type=Path), default=Path("README.md"),
              show_default=True, help="The README whose scorecard block (between its markers) is rewritten; "
                                      "a README without the markers is left alone.")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 when the scorecard, the docs block or the README block is not what "
                   "the records say.")
def build_cmd(records_dir: Path, frameworks_dir: Path, docs_path: Path, readme_path: Path, check_only: bool) -> None:
    """Build reports/frameworks/scorecard.md, the docs block and the README block from the records
    (and the citations of each framework's framework.json)."""
    from bench.catalogue.files import write_all_or_nothing
    from bench.scorecard.build import (
        README_BEGIN,
        build_scorecard,
        load_records,
        scorecard_markdown,
        with_block,
        with_readme_block,
    )
    from bench.scorecard.framework import citations_of
    records = load_records(records_dir)
    rows = build_scorecard(records, citations_of(frameworks_dir, {str(r.get("name")) for r in records}))
    want = {records_dir / "scorecard.md": scorecard_markdown(rows)}
    if docs_path.is_file():
        want[docs_path] = with_block(docs_path.read_text(encoding="utf-8"), rows)
    if readme_path.is_file() and README_BEGIN in (readme := readme_path.read_text(encoding="utf-8")):
        want[readme_path] = with_readme_block(readme, rows)
    if check_only:
        stale = [str(p) for p, text in want.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            click.echo(f"{p}: not what the records say (stopbench scorecard build rewrites it)", err=True)
        sys.exit(EXIT_MISMATCH if stale else EXIT_OK)
    write_all_or_nothing(dict(want))
    click.echo(f"scorecard of {len(rows)} framework record(s): {', '.join(str(p) for p in want)}", err=True)



@scorecard_cmd.command("repro")
@click.argument("name")
@click.argument("sequence")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The folder to write (it must not exist, or be empty).")
@click.option("--sequences", "sequences_dir", type=click.Path(path_type=Path), default=Path("sequences"),
              show_default=True, help="Folder of sequence YAML files (sub-folders included).")
@_frameworks
@_records
def repro_cmd(name: str, sequence: str, out: Path, sequences_dir: Path, frameworks_dir: Path,
              records_dir: Path) -> None:
    """Write a reproduction of framework NAME's recorded cell on SEQUENCE to the folder OUT.

    The folder holds the program, the sequence, the exchange recorded (the answers served and what
    the loop did after each), the verdict in words, run.sh (installs the framework's pins once,
    then replays the cell with stopbench check) and README.md, a write-up an upstream issue can
    start from. Exit status 0 when written, 2 on an unknown framework or sequence, a sequence the
    record lacks, or an OUT that is not an empty folder or cannot be written (nothing is written).
    """
    from bench.errors import UnusableInput
    from bench.scorecard.repro import write_repro
    fw = _framework(frameworks_dir, name)
    path = records_dir / f"{name}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UnusableInput(f"{path}: no readable record of {name}: stopbench scorecard record {name}") from None
    written = write_repro(fw, record, path, sequences_dir, sequence, out)
    click.echo(f"wrote {written}: ./run.sh replays it", err=True)
