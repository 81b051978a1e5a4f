"""Citations as data: where a port's rule comes from, in a form the page can link without guessing.

A port declares what it read once, as a :class:`Source` (its ``PIN``): a GitHub repository and the
git ref (a commit or tag) read, or only the release it read (a PyPI or npm version whose git ref is
not known). A rule cites places in it with :meth:`Source.at` (or :meth:`File.at` for a file cited
often), and wraps them with its prose in :class:`Cited`::

    PIN = Source("he-yufeng/CoreCoder", ref="v0.4.0", release="PyPI corecoder==0.4.0")
    AGENT = PIN.file("corecoder/agent.py")

    rules={"no-calls": Cited(AGENT.at("L61-64"), text="no tool calls: return the text")}

The human text (``he-yufeng/CoreCoder@v0.4.0 (PyPI corecoder==0.4.0) corecoder/agent.py:L61-64 -
no tool calls: return the text``) is derived from these values; the page's links come from them too
(:mod:`bench.report.page.citations`). A citation that is prose by nature (a byte offset into a
native binary, a section of a seed article, behaviour observed by driving the loop) is a
:class:`Note`, shown and never linked.

Line ranges are written as text (``"L61-64, L71"``), parsed here into numbers: the mutation check
changes every number literal in a port file, and a citation is not a rule it should mutate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GITHUB = "https://github.com"

Lines = tuple[int, int]
"""A range of lines, first and last (equal for one line)."""

_RANGE = re.compile(r"L(\d+)(?:-L?(\d+))?")


def parse_lines(spec: str) -> tuple[Lines, ...]:
    """``"L10-20, L31"`` -> ``((10, 20), (31, 31))``; ``""`` -> ``()``. Raises ValueError on
    anything else, so a mistyped range fails when the port is imported."""
    if not spec.strip():
        return ()
    out: list[Lines] = []
    for part in spec.split(","):
        m = _RANGE.fullmatch(part.strip())
        if m is None:
            raise ValueError(f"citation lines {spec!r}: {part.strip()!r} is not Ln or Ln-m")
        first = int(m[1])
        last = int(m[2]) if m[2] else first
        if last < first:
            raise ValueError(f"citation lines {spec!r}: {part.strip()!r} ends before it starts")
        out.append((first, last))
    return tuple(out)


def lines_text(lines: tuple[Lines, ...]) -> str:
    """The inverse of :func:`parse_lines`: ``L10-20, L31``."""
    return ", ".join(f"L{a}" if a == b else f"L{a}-{b}" for a, b in lines)


@dataclass(frozen=True, slots=True)
class Source:
    """What a port read, declared once: `repo` (``owner/name`` on GitHub) at `ref` (a commit or
    tag that repository resolves), or at `version` (a release whose git ref is not known), and
    `release` (the artefact read, in words: ``PyPI corecoder==0.4.0``). `tree` is the folder of the
    repository that holds the release's files, when they are not at its root (a wheel's ``agents/``
    is ``src/agents/`` in the repository): paths are cited as the release has them, linked under it.

    Only a repository with a `ref` gives links: a release version is not a git ref, and a link
    that guesses one would show the reader other lines than the ones read.
    """

    repo: str = ""
    ref: str = ""
    version: str = ""
    release: str = ""
    tree: str = ""

    def __post_init__(self) -> None:
        if self.tree and not self.tree.endswith("/"):
            raise ValueError(f"Source {self.repo!r}: tree {self.tree!r} must end with /")
        if self.ref and self.version:
            raise ValueError(f"Source {self.repo!r}: a git ref or a release version, not both")
        if (self.ref or self.version) and not self.repo:
            raise ValueError("Source: a ref or version needs its repo (owner/name)")
        if not (self.repo or self.release):
            raise ValueError("Source: name a repo or a release")
        if self.repo and self.repo.count("/") != 1:
            raise ValueError(f"Source: repo {self.repo!r} is not owner/name")

    @property
    def linkable(self) -> bool:
        return bool(self.repo and self.ref)

    def __str__(self) -> str:
        if not self.repo:
            return self.release
        pinned = self.ref or self.version
        head = f"{self.repo}@{pinned}" if pinned else self.repo
        return f"{head} ({self.release})" if self.release else head

    def file(self, path: str) -> File:
        """A file of this source, for a port that cites it often."""
        return File(self, path)

    def at(self, path: str, lines: str = "", detail: str = "") -> Cite:
        """`path` (from the repository's or the release's root) at `lines` (``"L10-20, L31"``), with
        `detail` (a symbol, a character offset) shown after it."""
        return Cite(self, path, parse_lines(lines), detail)


@dataclass(frozen=True, slots=True)
class File:
    """One file of a :class:`Source`."""

    source: Source
    path: str

    def __str__(self) -> str:
        return f"{self.source} {self.path}"

    def at(self, lines: str = "", detail: str = "") -> Cite:
        return Cite(self.source, self.path, parse_lines(lines), detail)


@dataclass(frozen=True, slots=True)
class Cite:
    """A place in a :class:`Source`: a file and its line ranges (none: the whole file), and an
    optional `detail` shown after them."""

    source: Source
    path: str
    lines: tuple[Lines, ...] = ()
    detail: str = ""

    @property
    def repo(self) -> str:
        return self.source.repo

    @property
    def ref(self) -> str:
        return self.source.ref

    def place(self) -> str:
        """The path and lines, without the source: ``corecoder/agent.py:L61-64``."""
        text = f"{self.path}:{lines_text(self.lines)}" if self.lines else self.path
        return f"{text} {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.source} {self.place()}"

    def urls(self) -> list[tuple[str, str]]:
        """``(text, url)`` for each line range (one for the file when there is none); empty when
        the source is not a git ref."""
        if not self.source.linkable:
            return []
        base = f"{GITHUB}/{self.repo}/blob/{self.ref}/{self.source.tree}{self.path}"
        head = f"{self.repo}@{self.ref} {self.path}"
        if not self.lines:
            return [(f"{head} (file; no line range cited)", base)]
        return [(f"{head}:{lines_text(((a, b),))}", base + (f"#L{a}" if a == b else f"#L{a}-L{b}"))
                for a, b in self.lines]


@dataclass(frozen=True, slots=True)
class Note:
    """A citation that stays prose: a byte offset into a native binary, a seed article's section,
    behaviour observed by driving the loop, a document of this project. Shown, never linked."""

    text: str

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ValueError("Note: empty citation")

    def __str__(self) -> str:
        return self.text


Citation = Cite | Note


class Cited:
    """A rule's (or a column's) citations and its prose: ``Cited(PIN.at("a.py", "L1-9"), text=...)``.

    ``str()`` is the human text: the citations (consecutive places in one source name it once),
    then `` - `` and the prose.
    """

    __slots__ = ("citations", "text")

    def __init__(self, *citations: Citation, text: str = "") -> None:
        if not citations:
            raise ValueError("Cited: at least one Cite or Note")
        for c in citations:
            if not isinstance(c, Cite | Note):
                raise TypeError(f"Cited: {c!r:.60} is not a Cite or a Note")
        self.citations: tuple[Citation, ...] = citations
        self.text = text

    def head(self) -> str:
        """The citations as text."""
        groups: list[str] = []
        last: Source | None = None
        for c in self.citations:
            if isinstance(c, Cite) and c.source == last:
                groups[-1] += f", {c.place()}"
            else:
                groups.append(str(c))
            last = c.source if isinstance(c, Cite) else None
        return "; ".join(groups)

    def __str__(self) -> str:
        return f"{self.head()} - {self.text}" if self.text else self.head()

    def __repr__(self) -> str:
        return f"Cited({self!s:.80})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cited) and (self.citations, self.text) == (other.citations, other.text)

    def __hash__(self) -> int:
        return hash((self.citations, self.text))
