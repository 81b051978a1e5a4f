"""The framework scorecard: real agent frameworks' own loops run by ``stopbench check``, one record each.

A framework lives in ``examples/frameworks/<name>/`` (``framework.json`` and its program, see
``docs/frameworks.md``). :mod:`bench.scorecard.framework` reads that folder,
:mod:`bench.scorecard.install` puts the framework in a venv (Python) or an npm prefix (Node) of its
own, :mod:`bench.scorecard.record` runs ``stopbench check`` on it and writes
``reports/frameworks/<name>.json`` with its footing (:mod:`bench.scorecard.footing`: the sequence
files it ran, by digest), :mod:`bench.scorecard.rows` reads the records and
:mod:`bench.scorecard.build` turns them into the scorecard (``reports/frameworks/scorecard.md``, a
block of ``docs/frameworks.md``, a section of the HTML report), byte for byte the same for the same
records. :mod:`bench.scorecard.bump` records a newer release beside the pinned one (the index asked
by :mod:`bench.scorecard.releases`), and :mod:`bench.scorecard.versions` says what changed between them.
"""

from bench.scorecard.build import ScorecardRow, build_scorecard, load_records, scorecard_markdown
from bench.scorecard.framework import Framework, load_framework, load_frameworks

__all__ = ["Framework", "ScorecardRow", "build_scorecard", "load_framework", "load_frameworks", "load_records",
           "scorecard_markdown"]
