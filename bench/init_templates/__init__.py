"""The files ``stopbench init`` writes into a new project, kept as files so they read as what they are
(Python ones as ``.py.txt``, so that no template is imported, linted or type-checked as the bench).

:data:`FILES` maps each template (a file of this folder) to where ``init`` writes it, relative to
the project folder. The workflow is the one template ``init`` fills in: :mod:`.workflow` says with what.
"""

from __future__ import annotations

FILES: dict[str, str] = {
    "my-first-sequence.yaml": "sequences/my-first-sequence.yaml",
    "my_loop.py.txt": "predicates/my_loop.py",
    "test_my_loop.py.txt": "tests/test_my_loop.py",
    "stopbench.yml": ".github/workflows/stopbench.yml",
}
"""template file name -> the path ``stopbench init`` writes it to."""

WORKFLOW = "stopbench.yml"
"""The workflow's template: ``init`` fills in where it installs stopbench from (:mod:`.workflow`)."""
