"""Install a framework where its program runs: a venv (Python) or an npm prefix (Node) of its own.

``FRAMEWORK_DIR/<name>`` holds it (default :data:`DEFAULT_FRAMEWORK_DIR`), and
``FRAMEWORK_DIR/<name>@<version>`` a Python framework's newer release beside it. A stamp file keeps the
install spec it was made from, so an install is done once and redone only when ``framework.json``'s
``install`` (or its language) changes. A Node framework's folder gets a ``node_modules`` link to
the prefix's, so that ``node loop.mjs`` run from the folder resolves its imports (ES modules ignore
``NODE_PATH``); the link is not committed (``.gitignore``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.errors import UnusableInput
from bench.scorecard.framework import Framework

DEFAULT_FRAMEWORK_DIR = Path("/tmp/stopbench-frameworks")
STAMP = ".stopbench-installed"
"""The stamp file in the install folder: the install spec it was made from."""


def install_dir(framework_dir: Path, fw: Framework) -> Path:
    """``FRAMEWORK_DIR/<name>``, or ``FRAMEWORK_DIR/<name>@<version>`` for a release beside the pin."""
    return framework_dir / fw.key


def interpreter(framework_dir: Path, fw: Framework) -> str:
    """The program that runs the framework's command: the venv's python, or ``node``."""
    if fw.language == "python":
        return str(install_dir(framework_dir, fw) / "bin" / "python")
    return "node"


def stamp_text(fw: Framework) -> str:
    """What the stamp keeps: the install spec, and for Node the lock file's hash when there is one."""
    lock = fw.folder / "package-lock.json"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest() if fw.language == "node" and lock.is_file() else ""
    return fw.install_spec + ("\n" + digest if digest else "")


def is_installed(framework_dir: Path, fw: Framework) -> bool:
    stamp = install_dir(framework_dir, fw) / STAMP
    try:
        return stamp.read_text(encoding="utf-8") == stamp_text(fw)
    except OSError:
        return False


def _run(argv: list[str], cwd: Path | None = None) -> None:
    print("+ " + " ".join(argv), file=sys.stderr, flush=True)
    status = subprocess.run(argv, cwd=cwd, check=False).returncode
    if status != 0:
        raise UnusableInput(f"install failed (exit {status}): {' '.join(argv)}")


def link_node_modules(framework_dir: Path, fw: Framework) -> None:
    """``<folder>/node_modules`` -> the prefix's ``node_modules`` (replaced when it points elsewhere)."""
    target = install_dir(framework_dir, fw).resolve() / "node_modules"
    link = fw.folder / "node_modules"
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.is_symlink():
        link.unlink()
    elif link.exists():
        raise UnusableInput(f"{link}: a real folder; remove it (the install links it to {target})")
    link.symlink_to(target, target_is_directory=True)


def install(framework_dir: Path, fw: Framework, python: str = sys.executable) -> bool:
    """Install `fw` under `framework_dir` unless its stamp says it is; True when something was done.

    Python: ``python -m venv``, then ``pip install`` of the pinned requirements. Node: the folder's
    ``package.json`` and ``package-lock.json`` when it has them (``npm ci``, exactly the lock), else
    ``npm install --prefix`` of the pinned ``package@version`` list.
    """
    where = install_dir(framework_dir, fw)
    if fw.language == "node" and fw.beside:
        raise UnusableInput(f"{fw.name}: a Node framework runs from its folder, whose node_modules link is the "
                            f"pinned install's ({fw.beside}): a release beside it cannot be installed there")
    if fw.language == "node":
        done = False
        if not is_installed(framework_dir, fw):
            _install_node(where, fw)
            done = True
        link_node_modules(framework_dir, fw)
        return done
    if is_installed(framework_dir, fw):
        return False
    (where / STAMP).unlink(missing_ok=True)
    if not (where / "bin" / "python").exists():
        _run([python, "-m", "venv", str(where)])
    _run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          *fw.pip])
    (where / STAMP).write_text(stamp_text(fw), encoding="utf-8")
    return True


def _install_node(where: Path, fw: Framework) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / STAMP).unlink(missing_ok=True)
    manifest, lock = fw.folder / "package.json", fw.folder / "package-lock.json"
    if manifest.is_file() and lock.is_file():
        for src in (manifest, lock):
            (where / src.name).write_bytes(src.read_bytes())
        _run(["npm", "ci", "--prefix", str(where), "--no-audit", "--no-fund"])
    else:
        pins = [f"{pkg}@{version}" for pkg, version in fw.npm]
        if not (where / "package.json").exists():
            (where / "package.json").write_text(json.dumps({"private": True}) + "\n", encoding="utf-8")
        _run(["npm", "install", "--prefix", str(where), "--no-audit", "--no-fund", "--save-exact", *pins])
    (where / STAMP).write_text(stamp_text(fw), encoding="utf-8")
