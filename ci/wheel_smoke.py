"""The wheel smoke test: build stopbench's wheel, install it into a fresh environment outside the
repository and use it from an empty folder, as a new user would.

    python ci/wheel_smoke.py [--wheel PATH] [--wheelhouse DIR] [--keep]

Steps, each printed with its seconds; the first that fails ends the run with exit 1:

1. build the sdist and, from it, the wheel (``python -m build --no-isolation``: the running
   interpreter's setuptools, so no network; built from the unpacked sdist in a temporary folder, so
   nothing left in the repository's build/ from an earlier build gets in), unless ``--wheel`` gives one;
2. a fresh virtual environment in a temporary folder; the wheel installed with ``pip --no-index``.
   Its dependencies come from ``--wheelhouse DIR`` (``--find-links``, resolved by pip) or, by default,
   from the environment running this script: a ``.pth`` file puts that environment's site-packages
   after the fresh one's, so nothing is downloaded and the wheel's own ``bench`` is the one imported;
3. in an empty temporary folder: ``stopbench --version`` (the pyproject version), ``bench`` imported
   from the fresh environment, ``stopbench list`` (the shipped catalogue), ``stopbench run`` (every
   shipped cell matches, reports written here), ``stopbench check`` on a tiny loop (the repository's
   examples/openai_loop.py copied as my_loop.py, on the seed000 sequences, with --junit), ``stopbench
   init`` then ``pytest``.

It never reads the repository after the build: the project folder and the environment are temporary
folders outside it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "examples" / "openai_loop.py"


class Failed(Exception):
    """A step that did not do what it should; the message says what."""


def sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise Failed(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout + proc.stderr


def step(name: str, fn: Callable[[], str | None]) -> None:
    started = time.monotonic()
    detail = fn()
    print(f"ok {name} ({time.monotonic() - started:.1f} s){f': {detail}' if detail else ''}", flush=True)


def build_wheel(out: Path) -> Path:
    sh([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=ROOT)
    wheels = sorted(out.glob("stopbench-*.whl"))
    if len(wheels) != 1:
        raise Failed(f"expected one wheel in {out}, found {[w.name for w in wheels]}")
    return wheels[0]


def make_env(venv: Path, wheel: Path, wheelhouse: Path | None) -> dict[str, str]:
    """The fresh environment with the wheel installed; the environment variables to run in it."""
    sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-index"]
    if wheelhouse is not None:
        sh([*pip, "--find-links", str(wheelhouse), str(wheel)], cwd=venv.parent)
    else:
        purelib = sh([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=venv.parent)
        here = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
        (Path(purelib.strip()) / "_smoke_dependencies.pth").write_text("\n".join(sorted(here)) + "\n")
        sh([*pip, "--no-deps", str(wheel)], cwd=venv.parent)
    env = {k: v for k, v in os.environ.items()
           if k not in ("STOPBENCH_ONLY_MINE", "PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PYTEST_")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def smoke(work: Path, wheel: Path | None, wheelhouse: Path | None) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    shipped = len(list((ROOT / "sequences").rglob("*.yaml")))
    found: dict[str, Path] = {}

    def build() -> str:
        found["wheel"] = wheel if wheel is not None else build_wheel(work / "dist")
        with zipfile.ZipFile(found["wheel"]) as whl:
            top = {name.split("/")[0] for name in whl.namelist()}
            shipped_in = sum(name.startswith("bench/_shipped/sequences/") for name in whl.namelist())
        if top != {"bench", f"stopbench-{version}.dist-info"}:
            raise Failed(f"the wheel holds more than the bench package: {sorted(top)}")
        if shipped_in < shipped:
            raise Failed(f"the wheel carries {shipped_in} files of the catalogue, not its {shipped} sequences")
        return f"{found['wheel'].name}, {found['wheel'].stat().st_size / 1000:.0f} kB"

    step("wheel", build)
    venv = work / "venv"
    env: dict[str, str] = {}
    step("fresh environment", lambda: (env.update(make_env(venv, found["wheel"], wheelhouse)), None)[1])
    project = work / "project"
    project.mkdir()
    stopbench = str(venv / "bin" / "stopbench")

    def version_line() -> str:
        out = sh([stopbench, "--version"], project, env).strip()
        if out != f"stopbench {version}":
            raise Failed(f"stopbench --version says {out!r}, pyproject.toml {version!r}")
        where = sh([str(venv / "bin" / "python"), "-c", "import bench; print(bench.__file__)"], project, env).strip()
        if not where.startswith(str(venv)):
            raise Failed(f"bench is imported from {where}, not from the fresh environment")
        return out

    def listing() -> str:
        out = sh([stopbench, "list"], project, env)
        if f"sequences ({shipped}):" not in out:
            raise Failed(f"stopbench list does not show the {shipped} shipped sequences:\n{out[:500]}")
        return f"{shipped} sequences"

    def run() -> str:
        out = sh([stopbench, "run", "-q"], project, env)
        verdict = next((line for line in out.splitlines() if " cells: " in line), "")
        cells, _, rest = verdict.partition(" cells: ")
        if not cells.isdigit() or not rest.startswith(f"{cells} match, 0 mismatch"):
            raise Failed(f"stopbench run: not every cell matches: {verdict!r}")
        if not (project / "reports" / "decision-table.md").is_file():
            raise Failed("stopbench run wrote no reports/ in the project folder")
        return verdict

    def check() -> str:
        shutil.copy(LOOP, project / "my_loop.py")
        argv = [stopbench, "check", "--tag", "seed000", "--junit", "check.xml", "--", str(venv / "bin" / "python"),
                "my_loop.py"]
        proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode not in (0, 1):
            raise Failed(f"stopbench check exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        tests = ET.parse(project / "check.xml").getroot().get("tests")
        if tests != "4" or not (project / "reports" / "live" / "my_loop.json").is_file():
            raise Failed(f"stopbench check: {tests} testcases in check.xml (4 expected) or no live record")
        return proc.stdout.strip().splitlines()[-1]

    def init_then_pytest() -> str:
        sh([stopbench, "init"], project, env)
        out = sh([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "tests/test_my_loop.py"], project, env)
        return out.strip().splitlines()[-1]

    for name, fn in (("stopbench --version", version_line), ("stopbench list", listing), ("stopbench run", run),
                     ("stopbench check -- python my_loop.py", check), ("stopbench init + pytest", init_then_pytest)):
        step(name, fn)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wheel", type=Path, help="the wheel to test (default: build one)")
    parser.add_argument("--wheelhouse", type=Path, help="install the dependencies from this folder of wheels")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stopbench-smoke-"))
    started = time.monotonic()
    try:
        smoke(work, args.wheel.resolve() if args.wheel else None,
              args.wheelhouse.resolve() if args.wheelhouse else None)
    except (Failed, subprocess.TimeoutExpired) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wheel smoke test passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
