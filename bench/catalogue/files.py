"""The project's one way to write a file: whole or not at all, and a set of files all or none.

:func:`write_atomically` writes a temporary file beside the target, flushes it to disk, renames it
over the target and flushes the folder, so a reader (or a crash) sees the old file or the new one,
never half of one. The new file gets the permissions a plain ``open(path, "w")`` would give it:
an existing file keeps its mode, a new one gets ``0o666`` less the umask (a bare
``tempfile.mkstemp`` would leave it ``0600``).

:func:`write_all_or_nothing` does the same for a set of files (the reports of a run): every
temporary file is written first, then each is renamed over its target; if anything fails, the
targets already replaced get their old contents back and the temporary files are removed, so
the old set stays whole. The targets keep their paths (``reports/decision-table.md`` is always
that file, for the docs, links and ``git diff``): no folder is swapped in, since ``reports/`` also
holds what other commands write. What makes a set safe against a kill between its renames is a
journal (:data:`JOURNAL`, in the set's folder): before the first rename, each target's old contents
get a second name and the journal lists them; it is removed once every rename is done. A journal
found later is a write that never finished: the next write into the folder
(:func:`recover_folder`) puts the old contents back, so the previous set is whole again, and
removes what the killed write left (its temporary files, second names and journal). Ctrl-C and
SIGTERM wait while the renames run, so an interrupted write is either not begun or finished.

Every write into a folder holds the folder's lock (:func:`folder_lock`, ``fcntl.flock`` on
:data:`LOCK` beside the files): two processes writing into one folder take turns, and the clean-up
of a killed write never removes what a live one is staging. A caller that reads a file, changes it
and writes it back (``stopbench accept``) holds the lock across all three, so a concurrent writer's
change is never lost; a reader that must not see a set while its renames run (a few milliseconds)
reads under the lock too. Without the lock, a folder with no journal in it holds a whole set.

A folder that cannot be written (missing permission, a file where the folder should be) is an
:class:`UnwritableOutput`: one line naming the folder or file (never a temporary file that is gone),
which the command line prints before exiting 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from bench.errors import UnusableInput

try:
    import fcntl
except ImportError:  # not POSIX: writes are not locked
    fcntl = None  # type: ignore[assignment]

LOCK = ".stopbench.lock"
"""The lock file of a folder being written; removed by the last writer that held it."""
JOURNAL = ".stopbench-journal.json"
"""The renames of a set under way: present only while they run, or after a write that was killed."""
_MARK = ".stopbench-"
_LEFTOVER = re.compile(r"^\..+\.stopbench-[a-z0-9_]{8}\.(tmp|old)$")
_OLD_LEFTOVER = r"^\.{name}\.[a-z0-9_]{{8}}\.(tmp|old)$"  # the temporary names before they were marked


class UnwritableOutput(UnusableInput):
    """A file or folder the bench was asked to write and cannot; ``str()`` names it."""


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it is under it, as messages show it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def what_it_is(path: Path) -> str:
    """What `path`, which is there but is not a regular file, is, in the words of a one-line refusal
    (``is a folder``, ``is not a regular file (a FIFO)``), found without opening it: a FIFO's open
    would wait for a writer, a device's read would not end."""
    if path.is_dir():
        return "is a folder"
    kind = ("a FIFO" if path.is_fifo() else "a device" if path.is_char_device() or path.is_block_device()
            else "a socket" if path.is_socket() else "neither a file nor a folder")
    return f"is not a regular file ({kind})"


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given) in one step; see the module docstring."""
    write_all_or_nothing({path: text})


def write_all_or_nothing(files: Mapping[Path, str | bytes]) -> None:
    """Replace every file of `files` with its text (bytes are written as they are), or (on any failure) none of them.

    Raises UnwritableOutput naming the first path that could not be written.
    """
    for path in files:
        _ensure_folder(path)
    folders = sorted(dict.fromkeys(path.parent for path in files), key=lambda f: str(f.resolve()))
    with contextlib.ExitStack() as held:
        for folder in folders:  # in one order, so two writers of overlapping sets cannot wait on each other
            held.enter_context(folder_lock(folder))
            _recover_once(folder, {p.name for p in files if p.parent == folder})
        staged: list[tuple[Path, Path, int]] = []  # (target, temporary file, mode)
        try:
            for path, text in files.items():
                staged.append(_stage(path, text))
        except BaseException:
            for _, tmp, _ in staged:
                tmp.unlink(missing_ok=True)
            raise
        with _signals_held():
            _commit(staged)


# ---------------------------------------------------------------- the folder's lock


_held = threading.local()


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold `folder`'s write lock for the block (the folder is created if missing); held again by
    the same thread, it is only counted. Another process (or thread) waits until it is released.

    The lock file is removed on release; a waiter that then holds a lock on the removed file sees
    that the path no longer names the file it locked and takes the lock again on the new one."""
    key = str(folder.resolve())
    counts: dict[str, int] = _held.__dict__.setdefault("counts", {})
    if counts.get(key) or fcntl is None:
        counts[key] = counts.get(key, 0) + 1
        try:
            yield
        finally:
            counts[key] -= 1
        return
    _make_folder(folder)
    fd = _lock(folder / LOCK)
    counts[key] = 1
    try:
        yield
    finally:
        counts[key] = 0
        with contextlib.suppress(OSError):
            os.unlink(folder / LOCK)
        os.close(fd)  # releases the lock


def _lock(path: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
        except OSError as exc:
            raise _unwritable(path.parent, exc, folder=True) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return fd
        except FileNotFoundError:  # removed by the writer that held it: lock the new one
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


# ---------------------------------------------------------------- a killed write's leftovers


def recover_folder(folder: Path, names: Iterable[str] = ()) -> None:
    """Finish what a killed write left in `folder` (call with its lock held): a set whose renames did
    not all happen gets its old contents back, and the temporary files, second names and journal
    are removed. `names`: targets about to be written, whose temporary files of any naming go too."""
    journal = folder / JOURNAL
    if journal.exists():
        _roll_back(folder, journal)
    old_names = [re.compile(_OLD_LEFTOVER.format(name=re.escape(n))) for n in sorted(names)]
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if _LEFTOVER.match(entry) or any(p.match(entry) for p in old_names):
            with contextlib.suppress(OSError):
                os.unlink(folder / entry)


def _recover_once(folder: Path, names: set[str]) -> None:
    """:func:`recover_folder`, once per folder and thread for a folder's own leftovers (a folder of many
    files written one by one is listed once), again for targets not yet cleaned there, and whenever a
    journal is there (a write killed since)."""
    done: dict[str, set[str]] = _held.__dict__.setdefault("recovered", {})
    key = str(folder.resolve())
    if key in done and names <= done[key] and not (folder / JOURNAL).exists():
        return
    recover_folder(folder, names - done.get(key, set()) if key in done else names)
    done.setdefault(key, set()).update(names)


def _ours(target: object, tmp: object, old: object) -> bool:
    """A journal entry this module could have written: a target named within the folder (no separator,
    not ``.`` or ``..``) and, for it, a temporary name and a second name (or none) of this module's
    naming. Any other entry (a journal copied, crafted or corrupted) is left alone: acting on it could
    replace or remove files outside the folder."""
    if not isinstance(target, str) or target in ("", ".", "..") or any(c in target for c in "/\\\0"):
        return False
    return all(isinstance(n, str) and _LEFTOVER.match(n) is not None and n.startswith(f".{target}{_MARK}")
               for n in (tmp, *(() if old is None else (old,))))


def _roll_back(folder: Path, journal: Path) -> None:
    """Undo the renames a journal lists. A journal cut short was being written: no rename had begun."""
    try:
        entries = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        entries = []
    for entry in entries if isinstance(entries, list) else []:
        try:
            target, tmp, old = folder / entry["target"], folder / entry["tmp"], entry.get("old")
        except (TypeError, KeyError):
            continue
        if not _ours(entry["target"], entry["tmp"], old):
            continue
        with contextlib.suppress(OSError):
            if old is not None and (folder / old).exists():
                os.replace(folder / old, target)
            elif old is None and not tmp.exists():  # a new target that was renamed in: it goes
                target.unlink(missing_ok=True)
    _fsync_folder(folder)
    journal.unlink(missing_ok=True)
    _fsync_folder(folder)


# ---------------------------------------------------------------- staging and renaming


def _ensure_folder(path: Path) -> None:
    _make_folder(path.parent, path)
    if path.is_dir():
        raise UnwritableOutput(f"{display_path(path)}: is a folder, not a file; cannot write it")


def _make_folder(folder: Path, path: Path | None = None) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in [folder, *folder.parents] if p.exists() and not p.is_dir()), folder)
        raise UnwritableOutput(f"{display_path(blocker)}: is a file, not a folder "
                               f"(cannot write {display_path(path or folder)})") from None
    except OSError as exc:
        raise _unwritable(path or folder, exc, folder=path is None) from None


def _unwritable(path: Path, exc: OSError, *, folder: bool = False) -> UnwritableOutput:
    """One line naming where the write failed: the file `exc` names when it is the target or one of
    its folders, else (a temporary file or the lock file, which the user never asked for) the folder."""
    why = exc.strerror or exc
    if folder:
        return UnwritableOutput(f"{display_path(path)}: cannot write into this folder: {why}")
    where = Path(exc.filename) if exc.filename else path
    if where != path and where not in path.parents:
        where = path.parent
    return UnwritableOutput(f"{display_path(where)}: cannot write {display_path(path)}: {why}")


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
        fd, name = tempfile.mkstemp(prefix=f".{path.name}{_MARK}", suffix=".tmp", dir=path.parent)
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


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done (they are delivered after it), so the renames of
    a set are never cut half way by them. Outside the main thread, or where signals cannot be held: no change."""
    held = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _commit(staged: list[tuple[Path, Path, int]]) -> None:
    """Rename every temporary file over its target; on a failure put the old targets back.

    Before a target of a set is replaced, its old contents get a second name (:func:`_backup`) and
    the folder's journal lists them, so the targets replaced before a failing rename (or a kill) can be
    restored. A single file needs neither: its one rename happens whole or not at all."""
    replaced: list[tuple[Path, Path | None]] = []  # (target, its old contents; None: it was new)
    backups: dict[Path, Path | None] = {}
    journals: list[Path] = []
    current = staged[0][0] if staged else Path()
    try:
        if len(staged) > 1:
            for current, _, _ in staged:
                backups[current] = _backup(current)
            journals = _write_journals(staged, backups)
        for current, tmp, _ in staged:
            os.replace(tmp, current)
            replaced.append((current, backups.get(current)))
    except BaseException as exc:
        for path, previous in reversed(replaced):
            with contextlib.suppress(OSError):
                if previous is not None:
                    os.replace(previous, path)
                else:
                    path.unlink(missing_ok=True)
        for journal in journals:  # the old set is back: the second names are no longer needed
            journal.unlink(missing_ok=True)
        for old in backups.values():
            if old is not None:
                old.unlink(missing_ok=True)
        for _, tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _unwritable(current, exc) from None
        raise
    folders = list(dict.fromkeys(path.parent for path, _, _ in staged))
    for folder in folders:
        _fsync_folder(folder)
    for journal in journals:  # the set is in: a kill from here on leaves only second names to remove
        journal.unlink(missing_ok=True)
    for previous in backups.values():
        if previous is not None:
            previous.unlink(missing_ok=True)
    for folder in folders:
        _fsync_folder(folder)


def _write_journals(staged: list[tuple[Path, Path, int]], backups: dict[Path, Path | None]) -> list[Path]:
    """One journal per folder of the set, flushed before any rename (a journal cut short by a kill
    therefore means no rename had begun). Written in place: a failed write is undone by the caller."""
    journals: list[Path] = []
    for folder in dict.fromkeys(path.parent for path, _, _ in staged):
        entries = [{"target": path.name, "tmp": tmp.name,
                    "old": None if backups[path] is None else backups[path].name}  # type: ignore[union-attr]
                   for path, tmp, _ in staged if path.parent == folder]
        journal = folder / JOURNAL
        journals.append(journal)
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, json.dumps(entries).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_folder(folder)
    return journals


def _backup(path: Path) -> Path | None:
    """A second name for `path`'s current contents (a hard link, else a copy), or None if it is new."""
    if not path.exists():
        return None
    fd, name = tempfile.mkstemp(prefix=f".{path.name}{_MARK}", suffix=".old", dir=path.parent)
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
