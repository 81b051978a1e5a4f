"""Every driven original loop's install pins: the one place they are written.

`make conformance` installs each loop from here (``python3 bench/conform/pins.py LOOP`` prints the
words it passes to pip or npm), the drivers' install lines are made from here
(:data:`bench.conform.runner.DRIVERS`), the conformance keys hash them (:mod:`bench.conform.keys`)
and ``reports/conformance.md`` shows them. A port's own ``PIN`` names the upstream release its rules
were read from; ``tests/conform/test_ci_drivers.py`` holds it to the version installed here.

This module is read by the Makefile before the bench's venv may exist, so it imports only the
standard library and runs as a script: ``python3 bench/conform/pins.py LOOP`` prints the loop's
install words (shell-quoted), ``python3 bench/conform/pins.py --loops pypi`` (or ``npm``) the loops
installed from that registry, ``--markdown`` the table the docs show; an unknown loop exits 2.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Registry = Literal["pypi", "npm"]
"""Where a loop is installed from: PyPI into a venv with pip, npm into a prefix with ``npm install``."""


@dataclass(frozen=True, slots=True)
class Pin:
    """One loop's install: its own packages at their versions, and dependencies held beside them."""

    registry: Registry
    packages: tuple[str, ...]
    """The loop's packages (``name==version`` on PyPI, ``name@version`` on npm): what its install line names."""
    beside: tuple[str, ...] = ()
    """Dependencies installed at these versions with the packages, so a fresh install resolves the tree the
    records were driven on; not named in the install line."""

    def words(self) -> str:
        """What is passed to pip or npm, shell-quoted (an extra such as ``[anthropic]`` is quoted)."""
        return shlex.join((*self.packages, *self.beside))

    def install_line(self) -> str:
        """The install line a driver shows (``LOOP``: its venv or npm prefix under CONFORM_DIR)."""
        if self.registry == "npm":
            return "npm install --prefix LOOP " + shlex.join(self.packages)
        return "pip install " + shlex.join(self.packages)


_VERCEL_AI = Pin("npm", ("ai@7.0.173", "@ai-sdk/openai@4.0.118", "@ai-sdk/anthropic@4.0.105", "zod@4.6.7"))

PINS: Mapping[str, Pin] = {
    "corecoder": Pin("pypi", ("corecoder==0.4.0", "openai==3.57.0")),
    "openai_agents": Pin("pypi", ("openai-agents==0.24.0", "openai==3.57.0")),
    "hermes": Pin("pypi", ("hermes-agent[anthropic]==0.19.0",)),
    "langchain": Pin("pypi", ("langchain==1.5.0", "langchain-openai==1.7.4", "langchain-anthropic==1.7.10"),
                     beside=("langgraph==1.2.24", "langgraph-prebuilt==1.1.3", "langchain-core==1.8.3",
                             "openai==3.57.0", "anthropic==2.14.0")),
    "pydantic_ai": Pin("pypi", ("pydantic-ai-slim[openai,anthropic]==2.68.0",),
                       beside=("openai==3.57.0", "anthropic==2.14.0")),
    "smolagents": Pin("pypi", ("smolagents==1.26.0", "openai==3.57.0")),
    "pi": Pin("npm", ("@earendil-works/pi-agent-core@0.84.1", "@earendil-works/pi-ai@0.84.1")),
    "opencode": Pin("npm", ("opencode-ai@1.18.32",)),
    "codex": Pin("npm", ("@openai/codex@0.169.0",)),
    "gemini_cli": Pin("npm", ("@google/gemini-cli@0.61.0",)),
    # the wrapper; npm installs its platform package (the native binary the driver runs) beside it
    "claude_code": Pin("npm", ("@anthropic-ai/claude-code@2.1.328",)),
    # the same generateText install for both columns (predicates/_vercel_ai.py)
    "vercel_ai": _VERCEL_AI,
    "vercel_ai_steps": _VERCEL_AI,
}
"""Each driven loop's pin, by driver name (a loop not in a registry has none: its driver says how it is
installed)."""


def pins_markdown() -> str:
    """The pins as a Markdown table, a row per loop: what the docs show (``<!-- generate: pins -->``)."""
    rows = ["| loop | registry | installed | pinned beside |", "| --- | --- | --- | --- |"]
    for name, pin in PINS.items():
        beside = ", ".join(f"`{p}`" for p in pin.beside) or "—"
        rows.append(f"| `{name}` | {'PyPI' if pin.registry == 'pypi' else 'npm'} | "
                    f"{', '.join(f'`{p}`' for p in pin.packages)} | {beside} |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str]) -> int:
    if len(argv) == 2 and argv[0] == "--loops" and argv[1] in ("pypi", "npm"):
        print(" ".join(name for name, pin in PINS.items() if pin.registry == argv[1]))
        return 0
    if list(argv) == ["--markdown"]:
        print(pins_markdown(), end="")
        return 0
    if len(argv) == 1 and argv[0] in PINS:
        print(PINS[argv[0]].words())
        return 0
    print(f"bench/conform/pins.py: no pin for {' '.join(argv) or '(nothing)'}; usage: pins.py LOOP | "
          f"pins.py --loops pypi|npm | pins.py --markdown (loops: {' '.join(PINS)})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
