"""The framework scorecard: real agent frameworks' own loops run by ``stopbench check``, one record each.

A framework lives in ``examples/frameworks/<name>/`` (``framework.json`` and its program, see
``docs/frameworks.md``). :mod:`bench.scorecard.framework` reads that folder,
:mod:`bench.scorecard.install` puts the framework in a venv (Python) or an npm prefix (Node) of its
own, :mod:`bench.scorecard.record` runs ``stopbench check`` on it and writes
``reports/frameworks/<name>.json``, and :mod:`bench.scorecard.build` turns the records alone into
the scorecard (``reports/frameworks/scorecard.md``, a block of ``docs/frameworks.md``, a section of
the HTML report), byte for byte the same for the same records.
"""

from bench.scorecard.build import ScorecardRow, build_scorecard, load_records, scorecard_markdown
from bench.scorecard.framework import Framework, load_framework, load_frameworks

__all__ = ["Framework", "ScorecardRow", "build_scorecard", "load_framework", "load_frameworks", "load_records",
           "scorecard_markdown"]
