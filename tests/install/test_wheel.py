"""The built wheel, installed into a fresh environment with its declared dependencies only, used from an empty
folder (ci/wheel_smoke.py: build, install offline from the wheelhouse, then the commands a new user runs).
tests/docs/test_tutorials.py runs `stopbench list`, `stopbench run` (exit 0: no cell mismatches or crashes) and
`stopbench check` on the example loop in the same environment, so they are left out here; `make smoke` runs
every step."""

from __future__ import annotations

import ast
import subprocess
import zipfile
from pathlib import Path

import pytest

from ci.wheel_smoke import Failed, smoke_steps
from tests.installed import installed

ROOT = Path(__file__).resolve().parents[2]

HERE = ("stopbench --version", "stopbench init + what it says to run next")


def test_the_wheel_works_from_an_empty_folder_in_a_fresh_environment(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    env = installed()
    capsys.readouterr()  # the wheel and the environment, built here when this test is the session's first user
    try:
        smoke_steps(env, tmp_path, only=HERE)
    except Failed as exc:
        pytest.fail(str(exc))
    done = [line.split(" (")[0].removeprefix("ok ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("ok ")]
    assert done == list(HERE)


DECLARED = ("bench", "openai", "anthropic", "pytest", "pandas", "uvicorn")
UNDECLARED = ("selenium", "mypy", "build", "ruff", "msgspec")


def test_the_fresh_environment_holds_the_declared_dependencies_and_nothing_of_the_dev_one(tmp_path: Path) -> None:
    probe = ("import importlib.util, sys\n"
             "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None))")
    proc = subprocess.run(["python", "-c", probe, *DECLARED, *UNDECLARED], cwd=tmp_path, env=installed().env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.split() == list(DECLARED)


def _imports(source: str, module: str, is_package: bool) -> set[str]:
    """The modules a source imports (anywhere in it, lazily too), relative imports resolved; a `from` import
    names both the module and each name, since a name may be a submodule."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _wheel_modules(wheel: Path) -> dict[str, set[str]]:
    """Each module of the wheel's bench package (not the shipped catalogue) and what it imports."""
    modules: dict[str, set[str]] = {}
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            if name.endswith(".py") and name.startswith("bench/") and not name.startswith("bench/_shipped/"):
                parts = name.removesuffix(".py").split("/")
                is_package = parts[-1] == "__init__"
                module = ".".join(parts[:-1] if is_package else parts)
                modules[module] = _imports(whl.read(name).decode(), module, is_package)
    return modules


def test_the_wheel_holds_no_module_only_the_development_tools_use() -> None:
    """A module that devtools/ imports, no module of the wheel imports and no page of docs/ names for users is
    a development module (make perf's, say): it belongs in devtools/, not in what users install."""
    modules = _wheel_modules(installed().wheel)
    by_wheel = {m for module, imported in modules.items() for m in imported if m != module}
    by_devtools = {m for path in (ROOT / "devtools").glob("*.py")
                   for m in _imports(path.read_text(encoding="utf-8"), f"devtools.{path.stem}", False)}
    docs = " ".join(path.read_text(encoding="utf-8") for path in (ROOT / "docs").rglob("*.md"))
    packages = {m.rpartition(".")[0] for m in modules}
    development = sorted(m for m in modules if m in by_devtools and m not in by_wheel and m not in packages
                         and m not in docs)
    assert modules and development == []
