"""Every driven original loop's install pins, as their ports declare them (:mod:`bench.conform.ports`).

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

import sys
from collections.abc import Mapping, Sequence

if __package__:
    from bench.conform.ports import PORTS, Pin, Registry
else:  # run as a script (the Makefile, before the venv): this folder is on sys.path, the bench is not
    from ports import PORTS, Pin, Registry  # type: ignore[import-not-found,no-redef]

__all__ = ["PINS", "Pin", "Registry", "pins_markdown"]

PINS: Mapping[str, Pin] = {name: port.pin for name, port in PORTS.items() if port.pin is not None}
"""Each driven loop's pin, by driver name, as its port (:data:`bench.conform.ports.PORTS`) declares it (a loop
not in a registry has none: its port says how it is installed)."""


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
