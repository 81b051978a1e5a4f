"""``examples/frameworks/<name>/framework.json``: what a framework is, how it is installed and run.

The format is described in ``docs/frameworks.md``. A folder that does not follow it is unusable
input: :func:`load_framework` raises :class:`UnusableInput` with one line naming the file and the
field. :meth:`Framework.at_release` is the same framework at a newer release of its main packages,
installed and recorded beside the pinned one (``stopbench scorecard bump``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from bench.errors import UnusableInput
from bench.wires.dialects import DIALECTS

FRAMEWORKS = Path("examples/frameworks")
"""Where the framework folders are, relative to the project root."""

NAME = re.compile(r"[a-z][a-z0-9_]*")
"""A framework's name: lowercase letters, digits and ``_`` (it names a folder, a file and a make target)."""

Language = Literal["python", "node"]

PIN = re.compile(r"(?P<package>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<extras>\[[^\]]*\])?==(?P<version>[^\s;,]+)")
"""A pip requirement pinned to one version: ``package[extras]==version``."""

REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
LINES = re.compile(r"L[1-9][0-9]*(-L[1-9][0-9]*)?")
CITATION_KEYS = ("class", "repo", "release", "path", "lines", "says")


@dataclass(frozen=True, slots=True)
class Citation:
    """The framework's own source lines behind one broken class of its scorecard row."""

    label: str
    """The class, as the scorecard shows it ("reported success on a cut-off reply")."""
    repo: str
    release: str
    path: str
    lines: str
    says: str
    """One sentence: what that code does that makes the class break."""

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.release}/{self.path}#{self.lines}"


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
    citations: tuple[Citation, ...] = ()
    beside: str = ""
    """For a release installed beside the pinned one (:meth:`at_release`): the pinned version."""

    @property
    def key(self) -> str:
        """What names its install folder and record: the name, or ``name@version`` for a release
        beside the pin."""
        return f"{self.name}@{self.version}" if self.beside else self.name

    @property
    def main_packages(self) -> tuple[str, ...]:
        """The packages pinned at the framework's version (they move together: ``crewai`` and
        ``crewai-tools``, ``genkit`` and ``@genkit-ai/google-genai``), in the install's order."""
        if self.language == "node":
            return tuple(pkg for pkg, version in self.npm if version == self.version)
        return tuple(m["package"] for m in map(PIN.fullmatch, self.pip) if m and m["version"] == self.version)

    def at_release(self, version: str) -> Framework:
        """This framework with its main packages at `version`, the other pins as they are."""
        pip = tuple(f"{m['package']}{m['extras'] or ''}=={version}" if m and m["version"] == self.version else req
                    for req, m in ((r, PIN.fullmatch(r)) for r in self.pip))
        npm = tuple((pkg, version if v == self.version else v) for pkg, v in self.npm)
        return replace(self, version=version, pip=pip, npm=npm, beside=self.beside or self.version)

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
                **({"virtual_clock": True} if self.virtual_clock else {}),
                **({"beside": self.beside} if self.beside else {})}


def _str(data: dict[str, Any], key: str, where: Path, prefix: str = "") -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UnusableInput(f"{where}: {prefix}{key}: expected a non-empty string, got {value!r}")
    return value


def _str_list(data: dict[str, Any], key: str, where: Path) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UnusableInput(f"{where}: {key}: expected a non-empty list of strings, got {value!r}")
    return tuple(value)


def _install(data: dict[str, Any], language: str, where: Path) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``install``: (pip requirements, ()) for Python, ((), sorted npm pairs) for Node."""
    if language == "python":
        return _str_list(data, "install", where), ()
    raw = data.get("install")
    if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) and isinstance(v, str) and k and v
                                                       for k, v in raw.items()):
        raise UnusableInput(f"{where}: install: expected {{npm package: exact version}}, got {raw!r}")
    return (), tuple(sorted(raw.items()))


def _citation(raw: object, field_name: str, where: Path) -> Citation:
    if not isinstance(raw, dict):
        raise UnusableInput(f"{where}: {field_name}: expected an object with {', '.join(CITATION_KEYS)}, got {raw!r}")
    extra = sorted(set(raw) - set(CITATION_KEYS))
    if extra:
        raise UnusableInput(f"{where}: {field_name}: unknown key {extra[0]!r} (known: {', '.join(CITATION_KEYS)})")
    values = {k: _str(raw, k, where, f"{field_name}.") for k in CITATION_KEYS}
    checks = (("repo", REPO, "owner/name"), ("lines", LINES, "L<first>-L<last> or L<line>"))
    for key, pattern, shape in checks:
        if not pattern.fullmatch(values[key]):
            raise UnusableInput(f"{where}: {field_name}.{key}: expected {shape}, got {values[key]!r}")
    if values["path"].startswith("/") or ".." in values["path"].split("/"):
        raise UnusableInput(f"{where}: {field_name}.path: expected a path inside the repository, "
                            f"got {values['path']!r}")
    return Citation(label=values["class"], repo=values["repo"], release=values["release"], path=values["path"],
                    lines=values["lines"], says=values["says"])


def _citations(data: dict[str, Any], where: Path) -> tuple[Citation, ...]:
    """``citations``: the framework's source lines behind its broken classes (optional)."""
    raw = data.get("citations", [])
    if not isinstance(raw, list):
        raise UnusableInput(f"{where}: citations: expected a list of objects, got {raw!r}")
    return tuple(_citation(item, f"citations[{i}]", where) for i, item in enumerate(raw))


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
    pip, npm = _install(data, language, path)
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
                     virtual_clock=virtual_clock, citations=_citations(data, path))


def load_frameworks(root: Path = FRAMEWORKS) -> list[Framework]:
    """Every framework folder under `root` (a folder with a ``framework.json``), by name."""
    return [load_framework(p.parent) for p in sorted(root.glob("*/framework.json"))]


def citations_of(root: Path, names: Iterable[str]) -> dict[str, tuple[Citation, ...]]:
    """``{name: its framework.json's citations}`` for each of `names` with a folder under `root`."""
    return {name: load_framework(root / name).citations for name in sorted(names)
            if (root / name / "framework.json").is_file()}
