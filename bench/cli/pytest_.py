"""``stopbench pytest [ARGS]``: pytest, with stopbench's plugin, in the Python stopbench is installed in.

pytest is a dependency of stopbench and the plugin registers itself with it (the ``pytest11`` entry point),
so wherever stopbench is installed a plain ``pytest`` loads the plugin. Under pipx, though, stopbench's
environment is its own and only the ``stopbench`` command is on the PATH: this command is how a test file
of the plugin's runs there. The ARGS go to pytest as they are (``stopbench pytest --help`` is pytest's help).
"""

from __future__ import annotations

import os
import subprocess
import sys

import click


@click.command("pytest", context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def pytest_cmd(args: tuple[str, ...]) -> None:
    """Run pytest with ARGS in the Python stopbench is installed in, stopbench's plugin loaded: the way to run
    the tests `stopbench init` writes when stopbench was installed with pipx. In a virtual environment that
    holds stopbench, `pytest` does the same.

    Exit status: pytest's.
    """
    argv = [sys.executable, "-m", "pytest", *args]
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, argv)  # pytest's own signals and exit status, no process in between
    sys.exit(subprocess.run(argv, check=False).returncode)
