"""The project's one way to write a file: whole or not at all, and a set of files all or none.

:func:`write_atomically` writes a temporary file beside the target, flushes it to disk, renames it
over the target and flushes the folder, so a reader (or a crash) sees the old file or the new one,
never half of one. The new file gets the permissions a plain ``open(path, "w")`` would give it:
an existing file keeps its mode, a new one gets ``0o666`` less the umask (a bare
``tempfile.mkstemp`` would leave it ``0600``).

:func:`write_all_or_nothing` does the same for a set of files (the reports of a run): every
temporary file is written first, then each is renamed over its target; if anything fails, the
targets already replaced get their old contents back and the temporary files are removed, so
the old set stays whole.

A folder that cannot be written (missing permission, a file where the folder should be) is an
:class:`UnwritableOutput`: one line naming the path, which the command line prints before exiting 2.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bench.errors import UnusableInput


class UnwritableOutput(UnusableInput):
    """A file or folder the bench was asked to write and cannot; ``str()`` names it."""


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it is under it, as messages show it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given) in one step; see the module docstring."""
    write_all_or_nothing({path: text})


def write_all_or_nothing(files: Mapping[Path, str | bytes]) -> None:
    """Replace every file of `files` with its text (bytes are written as they are), or (on any failure) none of them.

    Raises UnwritableOutput naming the first path that could not be written.
    """
    staged: list[tuple[Path, Path, int]] = []  # (target, temporary file, mode)
    try:
        for path, text in files.items():
            _ensure_folder(path)
            staged.append(_stage(path, text))
    except BaseException:
        for _, tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    _commit(staged)


def _ensure_folder(path: Path) -> None:
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in [folder, *folder.parents] if p.exists() and not p.is_dir()), folder)
        raise UnwritableOutput(f"{display_path(blocker)}: is a file, not a folder "
                               f"(cannot write {display_path(path)})") from None
    except OSError as exc:
        raise _unwritable(path, exc) from None
    if path.is_dir():
        raise UnwritableOutput(f"{display_path(path)}: is a folder, not a file; cannot write it")


def _unwritable(path: Path, exc: OSError) -> UnwritableOutput:
    where = display_path(exc.filename) if exc.filename else display_path(path)
    return UnwritableOutput(f"{where}: cannot write {display_path(path)}: {exc.strerror or exc}")


def _mode_for(path: Path) -> int:
    """What a plain write would give `path`: its current mode, or 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux shows it without changing it (os.umask can only set it, which races with threads)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _stage(path: Path, text: str | bytes) -> tuple[Path, Path, int]:
    """Write `text` to a flushed temporary file beside `path`; return (path, temporary, mode)."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
            fh.flush()
            os.fsync(fh.fileno())
        mode = _mode_for(path)
        os.chmod(tmp, mode)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path, tmp, mode


def _commit(staged: list[tuple[Path, Path, int]]) -> None:
    """Rename every temporary file over its target; on a failure put the old targets back.

    Before a target of a set is replaced, its old contents get a second name (:func:`_backup`),
    so the targets replaced before a failing rename can be restored. A single file needs none:
    its one rename happens whole or not at all."""
    replaced: list[tuple[Path, Path | None]] = []  # (target, its old contents; None: it was new)
    current = staged[0][0] if staged else Path()
    old: Path | None = None
    try:
        for current, tmp, _ in staged:
            old = _backup(current) if len(staged) > 1 else None
            os.replace(tmp, current)
            replaced.append((current, old))
            old = None
    except BaseException as exc:
        if old is not None:  # the failing target's second name: the target itself is untouched
            old.unlink(missing_ok=True)
        for path, previous in reversed(replaced):
            with contextlib.suppress(OSError):
                if previous is not None:
                    os.replace(previous, path)
                else:
                    path.unlink(missing_ok=True)
        for _, tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _unwritable(current, exc) from None
        raise
    for _, previous in replaced:
        if previous is not None:
            previous.unlink(missing_ok=True)
    for folder in dict.fromkeys(path.parent for path, _, _ in staged):
        _fsync_folder(folder)


def _backup(path: Path) -> Path | None:
    """A second name for `path`'s current contents (a hard link, else a copy), or None if it is new."""
    if not path.exists():
        return None
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
    os.close(fd)
    old = Path(name)
    try:
        old.unlink()
        os.link(path, old)
    except OSError:
        shutil.copy2(path, old)
    return old


def _fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (the renames) to disk; a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
