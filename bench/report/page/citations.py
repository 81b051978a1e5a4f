"""Turn citations into links to the pinned upstream files.

A port declares its citations as data (:mod:`bench.engine.cite`): :func:`citation_links` links each
place in a repository at a git ref, with its line range, and nothing else (a release whose git ref is
not known, a :class:`~bench.engine.cite.Note` such as a byte offset into a bundled binary or a seed
article, stays text: a link that guesses a ref would send the reader to the wrong lines).

A sequence's ``source:`` is free text in its YAML file, so :func:`provenance_links` reads links out
of it: a recorded capture's ``repo: owner/repo commit: <sha> path: <file>``, a citation written
``owner/repo@pin path/to/file.py:L10-20`` (:func:`text_links`), issues written ``owner/repo#123``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bench.engine.cite import Citation, Cite

GITHUB = "https://github.com"

_REPO_PIN = re.compile(r"(?<![@\w/.-])(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]*\w)@(?P<pin>[\w.-]*\w)")
_PATH = r"(?P<path>[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]+)"
_RANGE = r"L(?P<a>\d+)(?:-L?(?P<b>\d+))?"
_PATH_LINES = re.compile(_PATH + r"(?::|\s+(?:[A-Za-z_][\w.]*\s+)?)" + _RANGE + r"(?P<more>(?:,\s*L\d+(?:-L?\d+)?)*)")
_PATH_ONLY = re.compile(r"(?P<path>[\w.-]+(?:/[\w.-]+)+\.[A-Za-z0-9]+)(?![\w/])")
_MORE = re.compile(_RANGE)
_ISSUE = re.compile(r"(?<![\w/.-])(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]*\w)#(?P<n>\d+)\b")
_RECORDED = re.compile(r"repo:\s*(?P<repo>[\w.-]+/[\w.-]+)\s+commit:\s*(?P<pin>[0-9a-f]{7,40})\s+"
                       r"path:\s*(?P<path>\S+)")
_GIT_PIN = re.compile(r"(?:[0-9a-f]{7,40}|v\d[\w.-]*)")


@dataclass(frozen=True, slots=True)
class Link:
    """One cited place: the text as written and, where it can be pinned, its URL."""

    text: str
    url: str

    def as_json(self) -> dict[str, str]:
        return {"text": self.text, "url": self.url}


def citation_links(citations: Iterable[Citation]) -> list[Link]:
    """The links of citations declared as data (:mod:`bench.engine.cite`): one per line range of
    each place in a repository at a git ref, in order, each URL once. A :class:`~bench.engine.cite.Note`
    and a place in a release without a known git ref give none."""
    return _unique([Link(text, url) for c in citations if isinstance(c, Cite) for text, url in c.urls()])


def is_git_pin(pin: str) -> bool:
    """A commit (7 to 40 hex digits) or a ``v``-tag: refs a repository's web view resolves."""
    return _GIT_PIN.fullmatch(pin) is not None


def file_url(repo: str, pin: str, path: str, first: int | None = None, last: int | None = None) -> str:
    """The URL of `path` in `repo` at `pin`, anchored to lines `first`-`last` when given."""
    url = f"{GITHUB}/{repo}/blob/{pin}/{path}"
    if first is None:
        return url
    return url + (f"#L{first}-L{last}" if last is not None and last != first else f"#L{first}")


def text_links(text: str) -> list[Link]:
    """Every pinned file a citation written as text names, in order, each range its own link.

    Each ``owner/repo@pin`` opens a span that runs to the next one; in it, ``path:Lx-y`` (also
    ``path Name Lx-y`` and ``path:Lx, Ly-z``) gives a link per range, and a path right after the pin
    with no lines a link to the file. The first path of a span is taken from the repository's root.
    A later path is linked only where its folder is certain: from the same top folder, a bare file
    name (the folder of the file cited just before it), or a path starting inside that folder
    (``run_internal/x.py`` after ``agents/run_internal/y.py``). Any other path (a file of another
    package, a folder the text leaves open) stays text, and a pin that is not a git ref gives no link.
    """
    links: list[Link] = []
    starts = list(_REPO_PIN.finditer(text))
    for i, m in enumerate(starts):
        repo, pin = m["repo"], m["pin"]
        if not is_git_pin(pin):
            continue
        span = text[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        root = ""
        folder = ""
        first = _PATH_ONLY.match(span.lstrip())
        if first and not _PATH_LINES.match(span.lstrip()):
            root = first["path"].split("/", 1)[0]
            links.append(Link(f"{repo}@{pin} {first['path']} (file; no line range cited)",
                              file_url(repo, pin, first["path"])))
        for pm in _PATH_LINES.finditer(span):
            path = _resolve(pm["path"], root, folder)
            if path is None:
                continue
            if not root:
                root = path.split("/", 1)[0]
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            ranges = [(int(pm["a"]), int(pm["b"]) if pm["b"] else None)]
            ranges += [(int(r["a"]), int(r["b"]) if r["b"] else None) for r in _MORE.finditer(pm["more"] or "")]
            for a, b in ranges:
                shown = f"{path}:L{a}" + (f"-{b}" if b is not None else "")
                links.append(Link(f"{repo}@{pin} {shown}", file_url(repo, pin, path, a, b)))
    return _unique(links)


def _resolve(path: str, root: str, folder: str) -> str | None:
    """`path` from the repository's root, or None where its folder is not certain."""
    if not root:
        return path
    head = path.split("/", 1)[0]
    if "/" not in path:
        return f"{folder}/{path}" if folder else None
    if head == root:
        return path
    parts = folder.split("/") if folder else []
    if head in parts:
        return "/".join([*parts[:parts.index(head)], path])
    return None


def provenance_links(text: str) -> list[Link]:
    """Links in a sequence's ``source``: a recorded capture's file at its commit, pinned citations,
    and issues or pull requests written ``owner/repo#N``."""
    links = [Link(f"{m['repo']}@{m['pin'][:10]} {m['path']}", file_url(m["repo"], m["pin"], m["path"]))
             for m in _RECORDED.finditer(text)]
    if not links:
        links += text_links(text)
    links += [Link(f"{m['repo']}#{m['n']}", f"{GITHUB}/{m['repo']}/issues/{m['n']}") for m in _ISSUE.finditer(text)]
    return _unique(links)


def _unique(links: list[Link]) -> list[Link]:
    seen: set[str] = set()
    out = []
    for link in links:
        if link.url not in seen:
            seen.add(link.url)
            out.append(link)
    return out
