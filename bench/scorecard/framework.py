"""``examples/frameworks/<name>/framework.json``: what a framework is, how it is installed and run.

The format is described in ``docs/frameworks.md``. A folder that does not follow it is unusable
input: :func:`load_framework` raises :class:`UnusableInput` with one line naming the file and the
field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench.errors import UnusableInput
from bench.wires.dialects import DIALECTS

FRAMEWORKS = Path("examples/frameworks")
"""Where the framework folders are, relative to the project root."""

NAME = re.compile(r"[a-z][a-z0-9_]*")
"""A framework's name: lowercase letters, digits and ``_`` (it names a folder, a file and a make target)."""

Language = Literal["python", "node"]


@dataclass(frozen=True, slots=True)
class Framework:
    """One framework folder's ``framework.json``, checked."""

    name: str
    title: str
    language: Language
    version: str
    pip: tuple[str, ...]
    """Python: the pinned pip requirement strings (Node: empty)."""
    npm: tuple[tuple[str, str], ...]
    """Node: (npm package, exact version) pairs, by package (Python: empty)."""
    command: tuple[str, ...]
    dialects: tuple[str, ...]
    docs: str
    notes: str
    folder: Path
    env: tuple[tuple[str, str], ...] = field(default=())
    virtual_clock: bool = False
    """check's ``--virtual-clock``: the framework backs off on the real clock for longer than a run
    may take (smolagents waits 120 to 240 s after a 429), so without it such a run has no verdict."""

    @property
    def install(self) -> list[str] | dict[str, str]:
        """``framework.json``'s ``install``: the pip list, or the npm mapping."""
        return list(self.pip) if self.language == "python" else dict(self.npm)

    @property
    def install_spec(self) -> str:
        """The install as one canonical JSON string (what the install stamp keeps)."""
        return json.dumps({"language": self.language, "install": self.install}, sort_keys=True)

    def metadata(self) -> dict[str, Any]:
        """The fields a record keeps about the framework (JSON values, no paths)."""
        return {"name": self.name, "title": self.title, "language": self.language, "version": self.version,
                "install": self.install,
                "command": list(self.command), "dialects": list(self.dialects), "docs": self.docs,
                "notes": self.notes, "env": dict(self.env),
                **({"virtual_clock": True} if self.virtual_clock else {})}


def _str(data: dict[str, Any], key: str, where: Path) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UnusableInput(f"{where}: {key}: expected a non-empty string, got {value!r}")
    return value


def _str_list(data: dict[str, Any], key: str, where: Path) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UnusableInput(f"{where}: {key}: expected a non-empty list of strings, got {value!r}")
    return tuple(value)


def load_framework(folder: Path) -> Framework:
    """The framework of `folder` (``folder/framework.json``). Raises :class:`UnusableInput`."""
    path = folder / "framework.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UnusableInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UnusableInput(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UnusableInput(f"{path}: expected a JSON object")
    name = _str(data, "name", path)
    if not NAME.fullmatch(name) or name != folder.name:
        raise UnusableInput(f"{path}: name: {name!r} must be the folder's name ({folder.name!r}), lowercase "
                            "letters, digits and '_'")
    language = data.get("language")
    if language not in ("python", "node"):
        raise UnusableInput(f"{path}: language: expected \"python\" or \"node\", got {language!r}")
    pip: tuple[str, ...] = ()
    npm: tuple[tuple[str, str], ...] = ()
    raw = data.get("install")
    if language == "python":
        pip = _str_list(data, "install", path)
    else:
        if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) and isinstance(v, str) and k and v
                                                           for k, v in raw.items()):
            raise UnusableInput(f"{path}: install: expected {{npm package: exact version}}, got {raw!r}")
        npm = tuple(sorted(raw.items()))
    dialects = _str_list(data, "dialects", path)
    unknown = [d for d in dialects if d not in DIALECTS]
    if unknown:
        raise UnusableInput(f"{path}: dialects: unknown {', '.join(unknown)} (known: {', '.join(DIALECTS)})")
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise UnusableInput(f"{path}: env: expected {{NAME: value}} of strings, got {env!r}")
    virtual_clock = data.get("virtual_clock", False)
    if not isinstance(virtual_clock, bool):
        raise UnusableInput(f"{path}: virtual_clock: expected true or false, got {virtual_clock!r}")
    command = _str_list(data, "command", path)
    if len(command) > 1 and not (folder / command[-1]).is_file():
        raise UnusableInput(f"{path}: command: {command[-1]} is not a file of {folder}")
    return Framework(name=name, title=_str(data, "title", path), language=language, version=_str(data, "version", path),
                     pip=pip, npm=npm, command=command, dialects=dialects, docs=_str(data, "docs", path),
                     notes=str(data.get("notes", "")), folder=folder, env=tuple(sorted(env.items())),
                     virtual_clock=virtual_clock)


def load_frameworks(root: Path = FRAMEWORKS) -> list[Framework]:
    """Every framework folder under `root` (a folder with a ``framework.json``), by name."""
    return [load_framework(p.parent) for p in sorted(root.glob("*/framework.json"))]
