"""What ``stopbench check`` refuses before it runs anything: a trial count past its bound, a loop name
that cannot name a file, an output it could not write. Each check says why in words a user can act on
and returns None when the value is fine; ``bench/cli/check.py`` turns a reason into one line and exit 2,
so a mistake costs no run (a run of the whole catalogue takes minutes). Also the bound on what a run
reads of a program's stderr."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bench.catalogue.files import UnwritableOutput, display_path

MAX_TRIALS = 1000
"""The most trials ``--trials`` runs: each trial runs every chosen sequence once, and its seeds and
cells are kept until the report, so a count past this is a typo, not a plan."""

MAX_NAME_CHARS = 50
"""The longest loop name: it names ``reports/live/<name>.json``, and 50 characters of at most 4 bytes
each, with the suffix and the writer's temporary name around them, stay under a file name's 255 bytes."""

STDERR_TAIL_BYTES = 64 * 1024
"""How much of the end of a program's stderr a run reads for its cell's error (its last lines): a program
that writes gigabytes there, or one line of megabytes, costs a read of this much, not of all of it."""

NAME_PUNCTUATION = "_.-"
"""What a loop name may hold besides letters and digits (any script's: ``λ-loop`` is a name)."""


def loop_name_problem(name: str) -> str | None:
    """Why `name` cannot name a loop's column and record file, or None: letters and digits of any
    script (:meth:`str.isalnum`), :data:`NAME_PUNCTUATION`, at most :data:`MAX_NAME_CHARS` characters,
    and not ``.`` or ``..`` (which name folders)."""
    if not name or name in {".", ".."}:
        return "use letters, digits, '_', '.', '-' (it names a file)"
    bad = sorted({c for c in name if not (c.isalnum() or c in NAME_PUNCTUATION)})
    if bad:
        shown = ", ".join(repr(c) for c in bad[:5])
        return f"{shown} cannot be in a name: use letters, digits, '_', '.', '-' (it names a file)"
    if len(name) > MAX_NAME_CHARS:
        return f"{len(name)} characters long: at most {MAX_NAME_CHARS} characters (it names a file)"
    return None


def unwritable_file(path: Path) -> str | None:
    """Why `path` could not be written as a file, found without creating anything (folders the write
    would make are not made here), or None when its nearest existing folder takes a new file."""
    if path.is_dir():
        return f"{display_path(path)}: is a folder, not a file; cannot write it"
    existing = next(p for p in [path.parent, *path.parent.parents] if os.path.lexists(p))
    if not existing.is_dir():
        return f"{display_path(existing)}: is a file, not a folder (cannot write {display_path(path)})"
    if os.statvfs(existing).f_flag & os.ST_RDONLY:
        return f"{display_path(existing)}: cannot write into this folder: Read-only file system"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{display_path(existing)}: cannot write into this folder: Permission denied"
    return None


def refuse_unwritable(paths: Iterable[Path | None]) -> None:
    """Raise :class:`~bench.catalogue.files.UnwritableOutput` (one line, exit 2) with the reason of the
    first of `paths` that :func:`unwritable_file` refuses; None stands for an output not asked for."""
    why = next((why for path in paths if path is not None and (why := unwritable_file(path)) is not None), None)
    if why is not None:
        raise UnwritableOutput(why)
