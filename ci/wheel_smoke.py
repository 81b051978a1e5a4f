"""The wheel smoke test: build stopbench's wheel, install it into a fresh environment that holds the wheel and
its declared dependencies and nothing else, and use it from an empty folder, as a new user would.

    python ci/wheel_smoke.py [--wheel PATH] [--wheelhouse DIR] [--keep]
    python ci/wheel_smoke.py --fill-wheelhouse [DIR]

The second form is the one step that needs the network (``make wheelhouse``, before the tests): ``pip wheel``
puts a wheel of every dependency pyproject.toml declares, with the ``loops`` extra the tutorials use, into
DIR (default :data:`WHEELHOUSE`). The first form then needs no network. Its steps, each printed with its
seconds; the first that fails ends the run with exit 1:

1. build the sdist and, from it, the wheel (``python -m build --no-isolation``: the running interpreter's
   setuptools; built from the unpacked sdist in a temporary folder, so nothing left in the repository's
   build/ from an earlier build gets in), unless ``--wheel`` gives one;
2. a fresh virtual environment in a temporary folder, ``stopbench[loops]`` installed into it from the
   wheel with ``pip --no-index --find-links`` the wheelhouse: what a user's ``pip install`` gives, and
   nothing of the environment running this script;
3. in an empty temporary folder, with the fresh environment first on the PATH as an activated one is:
   ``stopbench --version`` (the pyproject version), ``bench`` imported from the fresh environment,
   ``stopbench list`` (the shipped catalogue), ``stopbench run`` (every shipped cell matches, reports
   written here), ``stopbench check`` on a tiny loop (the repository's examples/openai_loop.py copied as
   my_loop.py, on the seed000 sequences, with --junit), ``stopbench init`` then the command it says to
   run next.

tests/install and tests/docs build the wheel and the environment once per session (:func:`install`) and run
the steps (:func:`smoke_steps`) and the tutorials' commands in it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "examples" / "openai_loop.py"
WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
"""Where ``make wheelhouse`` puts the dependencies' wheels (``make clean`` removes it with the venv)."""
EXTRAS = "loops"
"""The extras the fresh environment installs: the ones the tutorials tell a user to install."""


class Failed(Exception):
    """A step that did not do what it should; the message says what."""


@dataclass(frozen=True)
class Installed:
    """A fresh environment holding the wheel and its dependencies: where it is, the variables to run in it."""

    venv: Path
    wheel: Path
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise Failed(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout + proc.stderr


def step(name: str, fn: Callable[[], str | None]) -> None:
    started = time.monotonic()
    detail = fn()
    print(f"ok {name} ({time.monotonic() - started:.1f} s){f': {detail}' if detail else ''}", flush=True)


def requirements() -> list[str]:
    """What the wheel declares: its dependencies and those of :data:`EXTRAS`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"][EXTRAS]]


def fill_wheelhouse(folder: Path) -> None:
    """A wheel of every requirement (:func:`requirements`) in `folder`, from the index (the network)."""
    folder.mkdir(parents=True, exist_ok=True)
    sh([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(folder), *requirements()], cwd=ROOT)


def build_wheel(out: Path) -> Path:
    sh([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=ROOT)
    wheels = sorted(out.glob("stopbench-*.whl"))
    if len(wheels) != 1:
        raise Failed(f"expected one wheel in {out}, found {[w.name for w in wheels]}")
    return wheels[0]


def check_wheel(wheel: Path) -> str:
    """The wheel holds the bench package and the whole shipped catalogue, nothing else."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    shipped = len(list((ROOT / "sequences").rglob("*.yaml")))
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    top = {name.split("/")[0] for name in names}
    if top != {"bench", f"stopbench-{version}.dist-info"}:
        raise Failed(f"the wheel holds more than the bench package: {sorted(top)}")
    if sum(name.startswith("bench/_shipped/sequences/") for name in names) < shipped:
        raise Failed(f"the wheel does not carry the catalogue's {shipped} sequences")
    if "bench/_shipped/predicates/reference.py" not in names:
        raise Failed("the wheel does not carry predicates/reference.py, which bench.loops.reference reads")
    return f"{wheel.name}, {wheel.stat().st_size / 1000:.0f} kB"


def make_env(venv: Path, wheel: Path, wheelhouse: Path) -> dict[str, str]:
    """The fresh environment with the wheel and its dependencies from `wheelhouse` installed, no index; the
    environment variables of a shell in which it is activated."""
    if not any(wheelhouse.glob("*.whl")):
        raise Failed(f"no wheels in {wheelhouse}: `make wheelhouse` fills it (the network, once)")
    sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    sh([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet", "--no-index",
        "--no-compile", "--disable-pip-version-check", "--find-links", str(wheelhouse), f"{wheel}[{EXTRAS}]"],
       cwd=venv.parent)
    env = {k: v for k, v in os.environ.items()
           if k not in ("STOPBENCH_ONLY_MINE", "PYTHONPATH", "PYTHONHOME") and not k.startswith("PYTEST_")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def install(work: Path, wheel: Path | None = None, wheelhouse: Path = WHEELHOUSE) -> Installed:
    """Steps 1 and 2: the wheel (built into `work` unless given) installed into a fresh environment in `work`."""
    found: dict[str, Path] = {}

    def build() -> str:
        found["wheel"] = wheel if wheel is not None else build_wheel(work / "dist")
        return check_wheel(found["wheel"])

    step("wheel", build)
    venv = work / "venv"
    env: dict[str, str] = {}
    step("fresh environment", lambda: (env.update(make_env(venv, found["wheel"], wheelhouse)), None)[1])
    return Installed(venv, found["wheel"], env)


def next_command(said: str) -> str:
    """The command ``stopbench init`` says to run next (its ``next:`` line, up to the first parenthesis)."""
    line = next((line for line in said.splitlines() if line.startswith("next: ")), "")
    if not line:
        raise Failed(f"stopbench init does not say what to run next:\n{said}")
    return line.removeprefix("next: ").split(" (", 1)[0]


STEPS = ("stopbench --version", "stopbench list", "stopbench run", "stopbench check -- python my_loop.py",
         "stopbench init + what it says to run next")
"""Step 3's commands, in order."""


def smoke_steps(installed: Installed, project: Path, only: tuple[str, ...] = STEPS) -> None:
    """Step 3: the commands a new user runs (those of :data:`STEPS` named in `only`), in the empty folder
    `project`."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    shipped = len(list((ROOT / "sequences").rglob("*.yaml")))
    env = installed.env

    def version_line() -> str:
        out = sh(["stopbench", "--version"], project, env).strip()
        if out != f"stopbench {version}":
            raise Failed(f"stopbench --version says {out!r}, pyproject.toml {version!r}")
        where = sh(["python", "-c", "import bench; print(bench.__file__)"], project, env).strip()
        if not where.startswith(str(installed.venv)):
            raise Failed(f"bench is imported from {where}, not from the fresh environment")
        return out

    def listing() -> str:
        out = sh(["stopbench", "list"], project, env)
        if f"sequences ({shipped}):" not in out:
            raise Failed(f"stopbench list does not show the {shipped} shipped sequences:\n{out[:500]}")
        return f"{shipped} sequences"

    def run() -> str:
        out = sh(["stopbench", "run", "-q"], project, env)
        verdict = next((line for line in out.splitlines() if " cells: " in line), "")
        cells, _, rest = verdict.partition(" cells: ")
        if not cells.isdigit() or not rest.startswith(f"{cells} match, 0 mismatch"):
            raise Failed(f"stopbench run: not every cell matches: {verdict!r}")
        if not (project / "reports" / "decision-table.md").is_file():
            raise Failed("stopbench run wrote no reports/ in the project folder")
        return verdict

    def check() -> str:
        shutil.copy(LOOP, project / "my_loop.py")
        argv = ["stopbench", "check", "--tag", "seed000", "--junit", "check.xml", "--", "python", "my_loop.py"]
        proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode not in (0, 1):
            raise Failed(f"stopbench check exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        tests = ET.parse(project / "check.xml").getroot().get("tests")
        if tests != "4" or not (project / "reports" / "live" / "my_loop.json").is_file():
            raise Failed(f"stopbench check: {tests} testcases in check.xml (4 expected) or no live record")
        return proc.stdout.strip().splitlines()[-1]

    def init_then_next() -> str:
        command = next_command(sh(["stopbench", "init"], project, env))
        out = sh(["bash", "-c", command], project, env)
        return f"{command}: {out.strip().splitlines()[-1]}"

    for name, fn in zip(STEPS, (version_line, listing, run, check, init_then_next), strict=True):
        if name in only:
            step(name, fn)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wheel", type=Path, help="the wheel to test (default: build one)")
    parser.add_argument("--wheelhouse", type=Path, default=WHEELHOUSE,
                        help=f"install the dependencies from this folder of wheels (default: {WHEELHOUSE})")
    parser.add_argument("--fill-wheelhouse", nargs="?", const=WHEELHOUSE, type=Path, metavar="DIR",
                        help="put a wheel of every dependency into DIR (the network) and stop")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    args = parser.parse_args()
    if args.fill_wheelhouse is not None:
        fill_wheelhouse(args.fill_wheelhouse.resolve())
        return 0
    work = Path(tempfile.mkdtemp(prefix="stopbench-smoke-"))
    started = time.monotonic()
    try:
        installed = install(work, args.wheel.resolve() if args.wheel else None, args.wheelhouse.resolve())
        (work / "project").mkdir()
        smoke_steps(installed, work / "project")
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
