"""Turn citations into links to the pinned upstream files.

A port declares its citations as data (:mod:`bench.engine.cite`): :func:`citation_links` links each
place in a repository at a git ref, with its line range, and nothing else (a release whose git ref is
not known, a :class:`~bench.engine.cite.Note` such as a byte offset into a bundled binary or a seed
article, stays text: a link that guesses a ref would send the reader to the wrong lines).

A sequence's ``source:`` is free text in its YAML file. :func:`provenance_links` links the two forms
the catalogue writes there: a recorded capture's ``repo: owner/repo commit: <sha> path: <file>`` (as
the importers write it) and an issue or pull request written ``owner/repo#123``; any other text
stays text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bench.engine.cite import GITHUB, Citation, Cite

_ISSUE = re.compile(r"(?<![\w/.-])(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]*\w)#(?P<n>\d+)\b")
_RECORDED = re.compile(r"repo:\s*(?P<repo>[\w.-]+/[\w.-]+)\s+commit:\s*(?P<pin>[0-9a-f]{7,40})\s+"
                       r"path:\s*(?P<path>\S+)")


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


def provenance_links(text: str) -> list[Link]:
    """Links in a sequence's ``source``: a recorded capture's file at its commit, and issues or pull
    requests written ``owner/repo#N``."""
    links = [Link(f"{m['repo']}@{m['pin'][:10]} {m['path']}", f"{GITHUB}/{m['repo']}/blob/{m['pin']}/{m['path']}")
             for m in _RECORDED.finditer(text)]
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
