"""Find predicates: one Python file each in a folder, plus an entry-point group for packages.

A file that fails to import, or defines no predicate (or several), does not stop the run: it
comes back as a :class:`Broken` entry whose message the CLI prints and whose cells are crashed.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from bench.predicate import Predicate

ENTRY_POINT_GROUP = "stopbench.predicates"


@dataclass(frozen=True, slots=True)
class Broken:
    """A predicate that could not be loaded: its column name and why."""

    name: str
    origin: str
    error: str


Loaded = Predicate | Broken


def discover(folder: Path | None, *, entry_points_too: bool = True) -> list[Loaded]:
    """Every predicate in `folder` (files not starting with ``_``) and the entry-point group,
    sorted by name. A name defined twice keeps the folder's and reports the other as broken."""
    found: dict[str, Loaded] = {}
    broken_dupes: list[Broken] = []
    if folder is not None:
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):
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
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            return Broken(name, origin, "cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except Exception as exc:  # any import-time failure is the file's problem, not the run's
        sys.modules.pop(module_name, None)
        return Broken(name, origin, _one_line(exc))
    found = [v for v in vars(module).values() if isinstance(v, Predicate)]
    if len(found) != 1:
        what = "no predicate" if not found else f"{len(found)} predicates"
        return Broken(name, origin, f"defines {what}; a predicate file defines exactly one "
                                    "(decorate its decide function with @predicate)")
    doc = (module.__doc__ or "").strip().splitlines()
    return found[0].named(name, origin, doc[0] if doc else "")


def _load_entry_point(name: str, value: str, load: object) -> Loaded:
    try:
        obj = load()  # type: ignore[operator]
    except Exception as exc:
        return Broken(name, value, _one_line(exc))
    if not isinstance(obj, Predicate):
        return Broken(name, value, f"entry point gives {type(obj).__name__}, not a Predicate")
    return obj.named(name, f"entry point {value}")


def _one_line(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}".replace("\n", " ")
