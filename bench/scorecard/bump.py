"""``stopbench scorecard bump``: record a framework's newest release beside its pinned one.

The package index says which final releases of the framework's main packages are newer than the
pin (:mod:`bench.scorecard.releases`, the one part that uses the network); the newest is installed
in ``FRAMEWORK_DIR/<name>@<version>`` (the pins of ``framework.json`` with the main packages moved
to it, :meth:`bench.scorecard.framework.Framework.at_release`) and recorded as
``reports/frameworks/<name>@<version>.json``, exactly as the pinned one is. The pinned record and
``framework.json`` are left as they are; the scorecard shows what changed between the two
(:mod:`bench.scorecard.versions`). A release already recorded is not recorded again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.scorecard.framework import Framework
from bench.scorecard.install import install
from bench.scorecard.record import run_record
from bench.scorecard.releases import Fetch, fetch_json, newer, released


@dataclass(frozen=True, slots=True)
class Bumped:
    """What bump found and did for one framework."""

    name: str
    newer: tuple[str, ...]
    """The final releases after the pin, oldest first."""
    said: str
    """One line: what was done, or why nothing was."""


def bump_one(fw: Framework, framework_dir: Path, project: Path, records_dir: Path, *, jobs: int, timeout: float,
             list_only: bool = False, fetch: Fetch = fetch_json,
             record: Callable[..., object] = run_record) -> Bumped:
    """Ask the index about `fw`'s main packages, then (unless `list_only`) install and record the
    newest release beside the pin."""
    packages = ", ".join(fw.main_packages)
    found = tuple(newer(fw, released(fw, fetch)))
    if not found:
        return Bumped(fw.name, (), f"{fw.name}: {fw.version} is the newest release of {packages}")
    newest = fw.at_release(found[-1])
    path = records_dir / f"{newest.key}.json"
    listed = f"{fw.name}: newer than {fw.version} ({packages}): {', '.join(found)}"
    if list_only:
        return Bumped(fw.name, found, listed)
    if fw.language == "node":
        return Bumped(fw.name, found, f"{listed}; not recorded: a Node framework runs from its folder, whose "
                                      "node_modules link is the pinned install's")
    if path.is_file():
        return Bumped(fw.name, found, f"{listed}; {newest.version} already recorded in {path}")
    install(framework_dir, newest)
    record(newest, framework_dir, project, jobs=jobs, timeout=timeout, out=path)
    return Bumped(fw.name, found, f"{listed}; {newest.version} recorded in {path}")
