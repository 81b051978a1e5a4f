"""Test your own loop: run any program against served sequences and judge what it did.

A check is a :class:`CheckOptions` (the loops, the sequences' filters, how each runs, what is
written): :func:`choose` picks its sequences from a catalogue, :func:`run_check` runs them and returns
a :class:`CheckResult`, :func:`write_records` and :func:`write_check_junit` write it, and
:func:`verdict_text` says it as ``stopbench check -- COMMAND`` (:mod:`bench.cli.check`) prints it. The
pytest plugin (:mod:`bench.pytest_plugin`) chooses its sequences with the same options, and live
fuzzing (:mod:`bench.check.fuzz`) runs a program as they say; all of them run a program once on one
sequence with :func:`run_program`.
"""

from bench.check.explain import assert_meets_requirements, violation_words
from bench.check.options import CheckOptions, Loop, default_name, refuse_unrunnable
from bench.check.processes import (
    Terminated,
    deferred_interrupts,
    end_all_contained,
    end_contained,
    sigterm_as_interrupt,
    start_contained,
)
from bench.check.program import PROMPT, ProgramResult, program_env, read_result
from bench.check.report import cell_from_json, violation_json
from bench.check.run import (
    CheckResult,
    Chosen,
    choose,
    live_records,
    planned_runs,
    run_check,
    write_check_junit,
    write_records,
)
from bench.check.runner import DEFAULT_TIMEOUT, LiveRun, run_all, run_program
from bench.check.served import Served, served
from bench.check.verdict import json_text, verdict_text, wall_line
from bench.serve.tools import tool_schemas

__all__ = ["DEFAULT_TIMEOUT", "PROMPT", "CheckOptions", "CheckResult", "Chosen", "LiveRun", "Loop", "ProgramResult",
           "Served", "Terminated", "assert_meets_requirements", "cell_from_json", "choose", "default_name",
           "deferred_interrupts", "end_all_contained", "end_contained", "json_text", "live_records", "planned_runs",
           "program_env", "read_result", "refuse_unrunnable", "run_all", "run_check", "run_program", "served",
           "sigterm_as_interrupt", "start_contained", "tool_schemas", "verdict_text", "violation_json",
           "violation_words", "wall_line", "write_check_junit", "write_records"]
