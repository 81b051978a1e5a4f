"""``stopbench loop reference|naive``: one of the bench's own loops as a program for ``stopbench check``.

The same as ``python -m bench.loops NAME`` (:mod:`bench.loops.__main__`), as a command of the installed
``stopbench``, so it runs wherever stopbench does (under pipx too, where ``python`` is not the interpreter
stopbench is installed in): ``stopbench check -c mine="python my_loop.py" -c reference="stopbench loop
reference"``.
"""

from __future__ import annotations

import os
import sys

import click

from bench.errors import UnusableInput
from bench.loops.__main__ import LOOPS, main


@click.command("loop")
@click.argument("name", type=click.Choice(LOOPS))
def loop_cmd(name: str) -> None:
    """Run loop NAME (reference: the loop stopbench recommends; naive: the loop most tutorials write) once, on
    the sequence `stopbench check` serves it (the STOPBENCH_* variables and the clients' base URLs). Put it
    beside your own loop with `stopbench check -c reference="stopbench loop reference" ...`.

    It talks through the official openai and anthropic clients, the loops extra: pip install
    'stopbench[loops]' (under pipx: pipx inject stopbench openai anthropic).

    Exit status: 0 when the loop ended with success, 1 when it stopped otherwise, 2 when a client it needs is
    not installed or it runs outside `stopbench check`.
    """
    if "STOPBENCH_SEQUENCE" not in os.environ:
        raise UnusableInput(f"stopbench loop {name}: run it under stopbench check, which serves it a sequence: "
                            f'stopbench check -c {name}="stopbench loop {name}"')
    sys.exit(main([name]))
