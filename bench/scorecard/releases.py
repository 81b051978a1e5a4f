"""Newer releases of a framework's main packages, asked of the package indexes (network).

``stopbench scorecard bump`` is the one command that asks: the PyPI JSON API
(``https://pypi.org/pypi/<package>/json``) for a Python framework, the npm registry
(``https://registry.npmjs.org/<package>``) for a Node one. A release counts when it is final (digits
and dots only: no pre-release, dev or post release) and, on PyPI, has a file not yanked. The main
packages (:attr:`bench.scorecard.framework.Framework.main_packages`) move together, so a version
is offered only when every one of them has it.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from bench.errors import UnusableInput
from bench.scorecard.framework import Framework

PYPI = "https://pypi.org/pypi/{package}/json"
NPM = "https://registry.npmjs.org/{package}"
FINAL = re.compile(r"[0-9]+(\.[0-9]+)*")
TIMEOUT = 30.0

Fetch = Callable[[str], Any]
"""Reads a URL's JSON (a parameter, so the tests ask no index)."""


def fetch_json(url: str) -> Any:
    """The JSON at `url`. Raises :class:`UnusableInput` naming the URL when it cannot be read."""
    request = urllib.request.Request(url, headers={"accept": "application/json", "user-agent": "stopbench"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.loads(response.read())
    except (OSError, ValueError) as exc:
        raise UnusableInput(f"{url}: cannot read the package index: {exc}") from None


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def pypi_versions(data: Any) -> set[str]:
    """The final releases of a PyPI JSON answer that have a file not yanked."""
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        return set()
    return {v for v, files in releases.items()
            if FINAL.fullmatch(v) and isinstance(files, list)
            and any(isinstance(f, dict) and not f.get("yanked") for f in files)}


def npm_versions(data: Any) -> set[str]:
    """The final releases of an npm registry answer (not deprecated)."""
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(versions, dict):
        return set()
    return {v for v, meta in versions.items()
            if FINAL.fullmatch(v) and not (isinstance(meta, dict) and meta.get("deprecated"))}


def released(fw: Framework, fetch: Fetch = fetch_json) -> set[str]:
    """The final versions every main package of `fw` has on its index."""
    if not fw.main_packages:
        raise UnusableInput(f"{fw.folder / 'framework.json'}: install: no package is pinned at the framework's "
                            f"version {fw.version}, so there is no main package to ask the index about")
    common: set[str] | None = None
    for package in fw.main_packages:
        if fw.language == "python":
            found = pypi_versions(fetch(PYPI.format(package=urllib.parse.quote(package))))
        else:
            found = npm_versions(fetch(NPM.format(package=urllib.parse.quote(package, safe="@"))))
        common = found if common is None else common & found
    return common or set()


def newer(fw: Framework, versions: Iterable[str]) -> list[str]:
    """The `versions` after the framework's pinned one, oldest first."""
    if not FINAL.fullmatch(fw.version):
        raise UnusableInput(f"{fw.folder / 'framework.json'}: version: {fw.version!r} is not a final release "
                            "(digits and dots), so no release can be said to be newer")
    return sorted((v for v in versions if version_key(v) > version_key(fw.version)), key=version_key)
