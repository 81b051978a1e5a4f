"""Find predicates: one Python file each in a folder, plus an entry-point group for packages.

A file that fails to import (a syntax error, a missing module, an exception, ``sys.exit`` or
``os._exit`` at import, a change of the working folder (put back at once, so the next file and
the golden files are found where they were), an import that outlasts the time limit of
:mod:`bench.engine.contain`), defines no predicate (or several), or declares itself wrongly
(:class:`bench.engine.predicate.DeclarationError`) does not stop the run: it comes back as a
:class:`Broken` entry whose message the CLI prints and whose cells are crashed. Only the user's Ctrl-C propagates.

A file whose name starts with ``_`` is not a column: it is a *shared rules module*, rules that
several columns are configurations of (``predicates/_vercel_ai.py`` behind ``vercel_ai`` and
``vercel_ai_steps``). It declares one :func:`~bench.engine.predicate.predicate_factory`, a function
that builds a predicate from its parameters; a column gets that factory with :func:`shared_factory`
(``from bench import shared_factory``) and calls it with its own parameters. Loading records the
column as a user of the file, so the conformance key (:mod:`bench.conform.keys`) covers the shared
file and the mutation check (:mod:`devtools.mutate`) mutates it too, judging each mutant against
every column that loads it (:func:`shared_users`).
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from bench.engine.contain import GUARD, DecisionTimeout, Escape, user_interrupted, watch_import
from bench.engine.predicate import Predicate, PredicateFactory

ENTRY_POINT_GROUP = "stopbench.predicates"


@dataclass(frozen=True, slots=True)
class Broken:
    """A predicate that could not be loaded: its column name and why."""

    name: str
    origin: str
    error: str


Loaded = Predicate | Broken

SHARED_PREFIX = "_"
"""A predicate file whose name starts with this is a shared rules module, not a column."""

_loading: list[str] = []
"""The column files being imported now (innermost last): the user a shared rules module records."""
_users: dict[Path, set[str]] = {}
"""Every shared rules module loaded so far (resolved path) and the columns that loaded it."""


def discover(folder: Path | None, *, entry_points_too: bool = True) -> list[Loaded]:
    """Every predicate in `folder` (files not starting with ``_``) and the entry-point group,
    sorted by name. A name defined twice keeps the folder's and reports the other as broken."""
    found: dict[str, Loaded] = {}
    broken_dupes: list[Broken] = []
    if folder is not None:
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith(SHARED_PREFIX):
                continue
            found[path.stem] = load_file(path)
    if entry_points_too:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            item = _load_entry_point(ep.name, ep.value, ep.load)
            if ep.name in found:
                broken_dupes.append(Broken(ep.name + "@" + ep.value, ep.value,
                                           f"name {ep.name!r} is already taken by {found[ep.name].origin}"))
            else:
                found[ep.name] = item
    result = [found[k] for k in sorted(found)]
    return result + broken_dupes


def load_file(path: Path) -> Loaded:
    """Import one predicate file and return its single Predicate, or a Broken entry saying why."""
    name = path.stem
    origin = str(path)
    module_name = f"stopbench_predicates.{name}"
    if path.exists() and not path.is_file():  # a FIFO would block the import, /dev/zero fill memory until the limit
        return Broken(name, origin, "not a regular file (a folder, a FIFO or a device): nothing to import")
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            return Broken(name, origin, "cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        _loading.append(name)
        GUARD.enter()
        try:
            with watch_import():
                spec.loader.exec_module(module)
        finally:
            _loading.pop()
            problem = GUARD.leave()
        if problem is not None:
            sys.modules.pop(module_name, None)
            return Broken(name, origin, f"{problem} at import")
    except KeyboardInterrupt:
        sys.modules.pop(module_name, None)
        if user_interrupted():
            raise
        return Broken(name, origin, "raised KeyboardInterrupt at import")
    except BaseException as exc:  # any import-time failure (sys.exit too) is the file's problem, not the run's
        sys.modules.pop(module_name, None)
        problem = GUARD.escape if isinstance(exc, Escape) else None
        return Broken(name, origin, f"{problem} at import" if problem else _one_line(exc, path))
    found = [v for v in vars(module).values() if isinstance(v, Predicate)]
    if len(found) != 1:
        what = "no predicate" if not found else f"{len(found)} predicates"
        return Broken(name, origin, f"defines {what}; a predicate file defines exactly one "
                                    "(decorate its decide function with @predicate)")
    doc = (module.__doc__ or "").strip().splitlines()
    return found[0].named(name, origin, doc[0] if doc else "")


def shared_factory(column_file: str, name: str) -> PredicateFactory[...]:
    """The predicate factory of the shared rules file `name` (``_vercel_ai``) beside the column file
    `column_file` (the caller's ``__file__``): the one function it declares with
    ``@predicate_factory``. The file is imported once per path and recorded as used by the column
    importing it now. Predicate files are not a package, so the file is found by path; one already
    imported from another path (a mutant's copy in another folder) is imported anew. A file with no
    factory, or several, raises ImportError (the column is then a broken predicate saying so)."""
    if not name.startswith(SHARED_PREFIX):
        raise ValueError(f"a shared rules module's name starts with {SHARED_PREFIX!r}: {name!r}")
    path = (Path(column_file).parent / f"{name}.py").resolve()
    module_name = f"stopbench_predicates.{name}"
    if _loading:
        _users.setdefault(path, set()).add(_loading[-1])
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__file__", None) != str(path):
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
    found = [v for v in vars(module).values() if isinstance(v, PredicateFactory)]
    if len(found) != 1:
        raise ImportError(f"{path.name}: a shared rules file declares exactly one @predicate_factory, "
                          f"this one declares {len(found)}")
    return found[0]


def shared_users(folder: Path) -> dict[Path, list[str]]:
    """The shared rules modules in `folder` that columns loaded so far, each with its columns, sorted."""
    here = folder.resolve()
    return {path: sorted(cols) for path, cols in sorted(_users.items()) if path.parent == here}


def _load_entry_point(name: str, value: str, load: object) -> Loaded:
    GUARD.enter()
    try:
        try:
            with watch_import():
                obj = load()  # type: ignore[operator]
        finally:
            problem = GUARD.leave()
    except KeyboardInterrupt:
        if user_interrupted():
            raise
        return Broken(name, value, "raised KeyboardInterrupt at import")
    except BaseException as exc:
        return Broken(name, value, f"{problem} at import" if problem else _one_line(exc))
    if problem is not None:
        return Broken(name, value, f"{problem} at import")
    if not isinstance(obj, Predicate):
        return Broken(name, value, f"entry point gives {type(obj).__name__}, not a Predicate")
    return obj.named(name, f"entry point {value}")


def _one_line(exc: BaseException, path: Path | None = None) -> str:
    """The exception as one line, with the line of the predicate's own file it came from (the
    innermost frame in `path`, else the innermost frame)."""
    if isinstance(exc, DecisionTimeout):
        return str(exc)
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) at import"
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"SyntaxError: {exc.msg} ({Path(exc.filename or str(path)).name}:{exc.lineno})"
    tb = traceback.extract_tb(exc.__traceback__)
    mine = path.resolve() if path is not None else None
    own = [f for f in tb if mine is not None and Path(f.filename).resolve() == mine]
    frame = own[-1] if own else (tb[-1] if tb else None)
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__  # no "Name: " with nothing after
    return f"{text}{where}".replace("\n", " ")
