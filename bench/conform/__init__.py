"""Conformance: run an original agent loop against the replay server and compare its observed cell
with its port's cell."""

from bench.conform.runner import DRIVERS, ConformResult, Driver, compare_cells, run_conformance
from bench.serve.tools import tool_specs

__all__ = ["DRIVERS", "ConformResult", "Driver", "compare_cells", "run_conformance", "tool_specs"]
