"""Properties of termination predicates, checked on generated sequences, and the runner behind
``stopbench fuzz``.

The test suite asserts each property only where it is meant to hold (every predicate, or the
reference loop for its own); ``stopbench fuzz`` checks all of them on every predicate and reports
where a loop breaks one as a finding about that loop. One module per concern:

* :mod:`bench.fuzz._trace`: one replay with what the bench saw of each decision (checked by the
  replay's own validator, :mod:`bench.engine.validate`; a hang is the replay's per-decision time limit,
  :mod:`bench.engine.contain`, firing);
* :mod:`bench.fuzz._properties`: the properties and their checks;
* :mod:`bench.fuzz._examples`: the hypothesis strategy of examples they are searched on;
* :mod:`bench.fuzz._shrink`: searching, shrinking, and the run over every predicate;
* :mod:`bench.fuzz._report`: found sequences and reports/fuzz-findings.md.
"""

from bench.fuzz._examples import examples
from bench.fuzz._properties import (
    BY_NAME,
    PROPERTIES,
    REFERENCE,
    Check,
    Example,
    Property,
    Scope,
    failures,
    properties,
)
from bench.fuzz._report import found_files, found_sequence, report, save, short_hash
from bench.fuzz._shrink import Finding, FuzzRun, counterexample_sequence, fuzz, fuzz_settings, shrink
from bench.fuzz._trace import Trace, trace

__all__ = [
    "BY_NAME",
    "PROPERTIES",
    "REFERENCE",
    "Check",
    "Example",
    "Finding",
    "FuzzRun",
    "Property",
    "Scope",
    "Trace",
    "counterexample_sequence",
    "examples",
    "failures",
    "found_files",
    "found_sequence",
    "fuzz",
    "fuzz_settings",
    "properties",
    "report",
    "save",
    "short_hash",
    "shrink",
    "trace",
]
