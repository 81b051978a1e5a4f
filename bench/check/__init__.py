"""Test your own loop: run any program against served sequences and judge what it did.

``stopbench check -- COMMAND`` (:mod:`bench.cli.check`), the pytest plugin
(:mod:`bench.pytest_plugin`) and live fuzzing (:mod:`bench.check.fuzz`) are built on
:func:`run_program`.
"""

from bench.check.program import PROMPT, ProgramResult, program_env, read_result
from bench.check.report import cell_from_json
from bench.check.runner import DEFAULT_TIMEOUT, LiveRun, run_all, run_program
from bench.serve.tools import tool_schemas

__all__ = ["DEFAULT_TIMEOUT", "PROMPT", "LiveRun", "ProgramResult", "cell_from_json", "program_env", "read_result",
           "run_all", "run_program", "tool_schemas"]
