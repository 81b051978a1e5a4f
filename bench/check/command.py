"""What a program's command line names: the script an interpreter is told to run.

``check`` refuses a command whose script is not there before any run (:func:`missing_script`), and
``--preload`` finds the Python script whose imports it loads once (:func:`script_argument`).
"""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from pathlib import Path

_SCRIPT_RUNNERS = re.compile(r"(python|pypy)[0-9.]*|node|nodejs|ruby|perl|sh|bash|zsh|deno|tsx")
_TAKES_VALUE = frozenset({"-W", "-X", "-r", "--require", "--import", "--loader", "--experimental-loader"})
_NO_SCRIPT = frozenset({"-m", "-c", "-e", "-p", "--eval", "--print", "-"})


def missing_script(argv: Sequence[str], cwd: Path) -> str | None:
    """The script `argv` tells an interpreter to run when no file of that name (or with an added
    suffix, as ``node loop`` finds ``loop.js``) is there from `cwd`; None when it is, or `argv` names none."""
    i = script_argument(argv)
    if i is None or "://" in argv[i]:
        return None
    path = cwd / argv[i]
    return None if path.exists() or any(path.parent.glob(glob.escape(path.name) + ".*")) else argv[i]


def script_argument(argv: Sequence[str]) -> int | None:
    """The index in `argv` of the script an interpreter is told to run (``python my_loop.py``,
    ``node --import x loop.mjs``, ``deno run loop.ts``), or None when `argv` is no interpreter with a
    script (a program of its own, ``python -m package``, ``python -c CODE``, or no argument after the options)."""
    if not argv or not _SCRIPT_RUNNERS.fullmatch(Path(argv[0]).name):
        return None
    i = 1
    if Path(argv[0]).name == "deno" and i < len(argv) and argv[i] == "run":
        i += 1
    while i < len(argv):
        arg = argv[i]
        if arg in _NO_SCRIPT:
            return None
        if not arg.startswith("-"):
            return i
        i += 2 if arg in _TAKES_VALUE else 1
    return None
