"""What the workflow ``stopbench init`` writes installs as stopbench: the place this copy came from.

stopbench is on no package index, so ``pip install stopbench`` in CI would fail or, worse, find someone
else's package. pip records where it installed a distribution from in the distribution's
``direct_url.json`` (PEP 610, https://packaging.python.org/en/latest/specifications/direct-url/): a
repository URL with the commit it was built from, an archive's URL, or a local file or folder. The first two
are what the workflow installs, pinned (the commit, the archive's hash); a local file or folder is out of
CI's reach, and the workflow then says, in a comment and in the failing step, what to fill in. A copy with no
``direct_url.json`` came from an index, and the workflow installs the same version from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.metadata import distributions
from urllib.parse import urlsplit, urlunsplit

SLOT = '  STOPBENCH: ""\n'
"""The template's line (bench/init_templates/stopbench.yml) that :func:`render` fills in."""


@dataclass(frozen=True)
class Source:
    """Where this copy of stopbench came from, and what pip installs in CI to get it again."""

    requirement: str | None
    """The pip requirement, or None when CI cannot reach where this copy came from."""
    origin: str
    """Where it came from, in words."""


def _public(url: str) -> str:
    """`url` without credentials: only ssh's ``git@`` and an environment variable reference are kept
    (PEP 610 allows those two); anything else before the ``@`` of the host is dropped."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or userinfo == "git" or (userinfo.startswith("${") and userinfo.endswith("}")):
        return url
    return urlunsplit(parts._replace(netloc=host))


def source_of(direct_url: str | None, version: str) -> Source:
    """The :class:`Source` a ``direct_url.json`` (its text; None for none: installed from an index) says."""
    if direct_url is None:
        return Source(f"stopbench=={version}", f"a package index (stopbench {version})")
    try:
        data = json.loads(direct_url)
        url = _public(str(data["url"]))
    except (ValueError, KeyError, TypeError):
        return Source(None, "an unreadable direct_url.json")
    local = urlsplit(url).scheme == "file"
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict) and not local:
        subdirectory = f"#subdirectory={data['subdirectory']}" if data.get("subdirectory") else ""
        return Source(f"stopbench @ {vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id')}{subdirectory}",
                      f"{url} at commit {vcs.get('commit_id')}")
    archive = data.get("archive_info")
    if isinstance(archive, dict) and not local:
        hashes = archive.get("hashes") or {}
        pinned = f"#sha256={hashes['sha256']}" if "sha256" in hashes else ""
        return Source(f"stopbench @ {url}{pinned}", url)
    name = url.rstrip("/").rsplit("/", 1)[-1]
    kind = "clone" if isinstance(vcs, dict) else "folder" if "dir_info" in data else "file"
    return Source(None, f"a local {kind} ({name})")


def installed_source() -> Source:
    """The :class:`Source` of the stopbench that is running: the installed distribution that recorded where it
    came from, when several are found (a build's leftover ``stopbench.egg-info`` in the working folder has
    no ``direct_url.json``)."""
    found = list(distributions(name="stopbench"))
    if not found:
        return Source(None, "a source tree that is not installed")
    recorded = [(d.read_text("direct_url.json"), d.version) for d in found]
    return source_of(*next((r for r in recorded if r[0] is not None), recorded[0]))


def render(template: str, source: Source) -> str:
    """The workflow `template` with its STOPBENCH line (:data:`SLOT`) set to `source`'s requirement, or left
    empty under a comment saying what to put there."""
    if template.count(SLOT) != 1:
        raise ValueError("the workflow template has no single STOPBENCH line to fill in")
    if source.requirement is not None:
        filled = f"  # stopbench came from {source.origin}\n  STOPBENCH: {json.dumps(source.requirement)}\n"
    else:
        filled = (f"  # FILL IN: this stopbench came from {source.origin}, which CI cannot reach. Put here what\n"
                  "  # pip installs: \"stopbench @ git+https://github.com/OWNER/stopbench@COMMIT\" or a wheel's URL\n"
                  + SLOT)
    return template.replace(SLOT, filled)
