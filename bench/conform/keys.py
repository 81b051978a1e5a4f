"""What a conformance record's row depends on, as one key per (loop, sequence) run.

A row of ``reports/conformance/<loop>.json`` is the observed cell of one original loop on one
sequence, compared with its port's cell. It stays true as long as none of these changed, and its
``key`` is a hash of all of them, taken when the loop was driven:

* ``pin``: the loop's pin: the words its install passes to pip or npm (:mod:`bench.conform.pins`, hashed
  under ``make``, ``PIN`` for PyPI and ``NPM`` for npm, the names of the Makefile variables that held
  them, so a key stays what it was) and the driver's install line and interpreter;
* ``driver``: the driver script and every file beside it that it imports (``stopbench_driver.py``,
  ``lib/stub_tools.mjs``, ...), and for a loop on the virtual clock the clock's files;
* ``port``: the port's file and the shared rules modules it loads (``predicates/_vercel_ai.py``);
* ``server``: the replay server's rendering and observation code (:data:`SERVER_SOURCES`) for the wires the
  loop is driven on (:meth:`KeySources.server`);
* per sequence: the sequence's file, the spec its driver is given (prompt, stub tools, wire, steers,
  cap: :func:`bench.conform.runner.driver_spec`) and the port's replayed cell on it, so a change of
  the engine that moves a port's cell re-drives that pair as a change of the port does.

`make conformance-ci` drives again only the pairs whose key is not the one in the record (and a
rotating sample, :mod:`bench.conform.reuse`); every other row is reused as it is. The loop-wide
parts are kept in the record too (``key_parts``), so a re-driven pair can say which part moved.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.conform.clock import CLOCK_DIR, clock_env
from bench.conform.pins import PINS, Pin
from bench.conform.report import steps_json
from bench.conform.runner import Driver, driver_spec
from bench.engine.discovery import shared_users
from bench.engine.model import Sequence
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.report.labels import label

KEY_FORMAT = 1
"""Part of every key: raised when what a key covers changes, so every pair is driven again once."""

KEY_LENGTH = 16
"""Hex digits kept of a SHA-256: 64 bits, ample for a few thousand rows."""

SERVER_SOURCES: tuple[str, ...] = ("bench/serve", "bench/wires", "bench/engine/changes.py")
"""The replay server's code that shapes the bytes served and the decisions inferred (files, or folders
of ``.py`` files, from the project's root). A change here drives every pair again."""

WIRES_DIR = "bench/wires"
"""Where each wire is a sub-package: a loop's key counts its own wire's package and the code the wires
share, never another wire's package (adding or changing a wire drives only the loops that speak it)."""

UNKEYED_IMPORTS: Mapping[str, str] = {
    "bench": "the package's public surface re-exports; what the server uses from it is keyed where it lives",
    "bench.engine.model": "the data types the server passes around; a change of what a turn holds changes the "
                   "sequence files or the port cells, which are keyed",
    "bench.engine.replay": "the server asks it which turn follows (`following`), as a replay does: a change there "
                    "moves the ports' cells, which are keyed",
    "bench.errors": "the error base classes (a capture the importers cannot read is an UnusableInput): no byte "
                    "served or decision inferred depends on them",
    "bench.faults": "fault recipes, applied only to a session given one (serve, check and record --faults); "
                    "conformance drives every loop with none, so no byte it is served depends on them",
    "bench.check.program": "the tool endpoint's schemas (GET /_stopbench/tools), which no conformance driver "
                           "reads: a driver registers the stub tools of its spec, which is keyed",
}
"""Modules the server code imports that are left out of the key, and why (a test holds the server's
imports to SERVER_SOURCES and this list)."""

_PY_IMPORT = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.M)
_JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.\.?/[^"']+)["']""")


def digest(data: Any) -> str:
    """A short hash of JSON-able `data` (sorted keys: the same data, the same digest)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def files_digest(files: Iterable[Path], root: Path) -> str:
    """A short hash of files' contents, each named by its path from `root` (so the same files give the
    same digest wherever the folder is; a missing file counts as missing, so deleting one changes it)."""
    h = hashlib.sha256()
    for path in sorted({p.resolve() for p in files}):
        try:
            name = str(path.relative_to(root.resolve()))
        except ValueError:
            name = str(path)
        h.update(name.encode("utf-8") + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"<missing>")
        h.update(b"\0")
    return h.hexdigest()[:KEY_LENGTH]


def source_files(root: Path, sources: Iterable[str]) -> list[Path]:
    """The files named by `sources` (files, or folders of ``.py`` files, searched recursively)."""
    found: list[Path] = []
    for name in sources:
        path = root / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def script_closure(script: Path) -> list[Path]:
    """A driver script and the files beside it that it imports, recursively: a Python module of the
    same folder (``from stopbench_driver import ...``), a relative JavaScript import (``./lib/x.mjs``)."""
    seen: list[Path] = []
    todo = [script.resolve()]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py":
            todo += [p for name in _PY_IMPORT.findall(text) if (p := path.parent / f"{name}.py").is_file()]
        else:
            todo += [(path.parent / rel).resolve() for rel in _JS_IMPORT.findall(text)]
    return seen


@dataclass
class KeySources:
    """Where the parts of a key are read from, with each loop-wide part computed once."""

    root: Path
    """The project's root: the driver scripts and the server's code are found from it."""
    predicates_dir: Path
    pins: Mapping[str, Pin] = field(default_factory=lambda: PINS)
    """Each loop's pin, by driver name (a loop without one is keyed by its install line alone)."""
    _server: dict[str, str] = field(default_factory=dict, repr=False)
    _parts: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def server(self, wire: str) -> str:
        """The server's code that serves and observes `wire`: :data:`SERVER_SOURCES` without the other
        wires' packages (``bench/wires/<name>/``, `wire` with ``-`` as ``_``)."""
        if wire not in self._server:
            wires = self.root / WIRES_DIR
            others = [d for d in wires.iterdir() if (d / "__init__.py").is_file() and d.name != wire.replace("-", "_")]
            files = [f for f in source_files(self.root, SERVER_SOURCES)
                     if not any(f.is_relative_to(d) for d in others)]
            self._server[wire] = files_digest(files, self.root)
        return self._server[wire]

    def pin(self, driver: Driver) -> str:
        pin = self.pins.get(driver.name)
        words = {"PIN": "pypi", "NPM": "npm"}
        return digest({"make": {k: pin.words() if pin and pin.registry == r else None for k, r in words.items()},
                       "install": driver.install, "interpreter": driver.interpreter})

    def driver(self, driver: Driver) -> str:
        files = script_closure(self.root / driver.script)
        if clock_env(driver, self.root):  # its sources, never the bytecode a run leaves (machine-dependent)
            files += sorted(p for p in (self.root / CLOCK_DIR).rglob("*")
                            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
        return files_digest(files, self.root)

    def port(self, driver: Driver) -> str:
        port_file = self.predicates_dir / f"{driver.predicate}.py"
        shared = [path for path, cols in shared_users(self.predicates_dir).items() if driver.predicate in cols]
        return files_digest([port_file, *shared], self.predicates_dir)

    def parts(self, driver: Driver) -> dict[str, str]:
        """The loop-wide parts of `driver`'s keys: pin, driver, port, server."""
        if driver.name not in self._parts:
            self._parts[driver.name] = {"pin": self.pin(driver), "driver": self.driver(driver),
                                        "port": self.port(driver),
                                        "server": digest([self.server(w) for w in sorted({driver.wire,
                                                                                          *driver.wires.values()})])}
        return self._parts[driver.name]

    def key(self, driver: Driver, sequence: Sequence, port: Predicate | None) -> str:
        """The key of `driver`'s run on `sequence` (see the module docstring)."""
        return digest({"format": KEY_FORMAT, **self.parts(driver), "sequence": sequence_digest(sequence),
                       "spec": digest(driver_spec(driver, sequence)), "cell": port_cell_digest(sequence, port)})


def sequence_digest(sequence: Sequence) -> str:
    """A short hash of the sequence's file (its parsed form when it has no file: a sequence built in code)."""
    path = Path(sequence.path) if sequence.path else None
    if path is not None and path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()[:KEY_LENGTH]
    return digest(repr(sequence))


def port_cell_digest(sequence: Sequence, port: Predicate | None) -> str:
    """A short hash of the port's replayed cell on `sequence` as a record compares it (None: no port)."""
    if port is None:
        return digest(None)
    cell = replay(sequence, port)
    return digest({"label": label(cell), "outcome": cell.outcome, "reason": cell.reason, "ok": cell.ok,
                   "steps": steps_json(cell)})


def moved_parts(before: Mapping[str, Any] | None, now: Mapping[str, str]) -> list[str]:
    """The loop-wide parts that differ from a record's ``key_parts`` (all of them when it has none)."""
    if not isinstance(before, Mapping):
        return list(now)
    return [name for name, value in now.items() if before.get(name) != value]
