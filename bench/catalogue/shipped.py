"""The shipped catalogue, predicates and golden files, and how a user's own folders add to them.

The repository's top-level ``sequences/``, ``predicates/`` and ``expected/`` are the shipped ones. The
wheel carries them as ``bench/_shipped/<kind>/`` (``setup.py`` maps them there); in a clone of the
repository, or an editable install of it, they are the repository's own folders, found beside the
``bench`` package. :func:`shipped_folder` answers either way.

A command run with its default folders reads the shipped folder and then the user's own
(``./sequences``, ``./predicates``, ``./expected``) when it exists and is not the shipped one itself
(in a clone they are the same folder, read once): :func:`layered`. On a collision, the same id (a
sequence's file stem, a predicate's file stem, a golden file's predicate) in both, **the user's
replaces the shipped one**, and the command says so in one line (:func:`collision_line`); two files
with the same bytes are one file, not a collision. ``--only-mine`` (or ``STOPBENCH_ONLY_MINE=1``)
reads only the user's folders.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal, TypeAlias

from bench.catalogue.files import display_path
from bench.catalogue.load import Catalogue, load_catalogue

Kind: TypeAlias = Literal["sequences", "predicates", "expected"]
"""The three folders the wheel ships."""

KINDS: tuple[Kind, ...] = ("sequences", "predicates", "expected")

_BENCH = Path(__file__).resolve().parent.parent
PACKAGED = _BENCH / "_shipped"
"""Where the wheel puts the shipped folders (``bench/_shipped/<kind>``)."""


def shipped_folder(kind: Kind) -> Path | None:
    """The shipped `kind` folder: the wheel's copy, else the repository's own (a clone, an editable
    install: the folder beside ``bench/`` in a checkout holding ``pyproject.toml``), else None."""
    packaged = PACKAGED / kind
    if packaged.is_dir():
        return packaged
    repository = _BENCH.parent
    if (repository / "pyproject.toml").is_file() and (repository / kind).is_dir():
        return repository / kind
    return None


def same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def layered(kind: Kind, mine: Path, *, only_mine: bool) -> list[Path]:
    """The folders a default `kind` folder stands for, shipped first: the shipped folder, then `mine`
    when it is a folder and not the shipped one; only `mine` with `only_mine` (or when nothing ships)."""
    shipped = shipped_folder(kind)
    if only_mine or shipped is None:
        return [mine]
    if not mine.is_dir() or same_folder(mine, shipped):
        return [shipped]
    return [shipped, mine]


def _same_bytes(a: str, b: str) -> bool:
    try:
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:
        return False


def collision_line(what: str, replaced: Iterable[str], folder: Path) -> str | None:
    """The one line saying which shipped `what` the user's `folder` replaces, or None for none."""
    names = sorted(replaced)
    if not names:
        return None
    return (f"note: {display_path(folder)}/ replaces {len(names)} shipped {what} with the same id (yours are "
            f"used): {', '.join(names)}; --only-mine uses only your folders")


def load_layered_catalogue(folders: list[Path]) -> tuple[Catalogue, list[str]]:
    """Every folder's catalogue, a later folder's sequence replacing an earlier one's with the same id;
    the notes are the collision lines (:func:`collision_line`)."""
    if len(folders) == 1:
        return load_catalogue(folders[0]), []
    merged = Catalogue()
    by_id: dict[str, int] = {}
    notes: list[str] = []
    for folder in folders:
        cat = load_catalogue(folder)
        merged.problems.extend(cat.problems)
        replaced = []
        for seq in cat.sequences:
            at = by_id.get(seq.id)
            if at is None:
                by_id[seq.id] = len(merged.sequences)
                merged.sequences.append(seq)
                continue
            if not _same_bytes(merged.sequences[at].path, seq.path):
                replaced.append(seq.id)
            merged.sequences[at] = seq
        line = collision_line("sequence(s)", replaced, folder)
        if line:
            notes.append(line)
    merged.sequences.sort(key=lambda s: s.id)
    return merged, notes


def replaced_files(folders: list[Path], pattern: str) -> dict[Path, list[str]]:
    """For each folder after the first, the stems of its `pattern` files that an earlier folder has
    too with other bytes (a predicate file, a golden file): what it replaces."""
    out: dict[Path, list[str]] = {}
    seen: dict[str, Path] = {}
    for folder in folders:
        mine: list[str] = []
        for path in sorted(folder.glob(pattern)) if folder.is_dir() else []:
            before = seen.get(path.name)
            if before is not None and not _same_bytes(str(before), str(path)):
                mine.append(path.stem)
            seen[path.name] = path
        if mine:
            out[folder] = mine
    return out
