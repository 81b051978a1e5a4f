"""Hypothesis profiles for the whole suite.

``ci`` (the default, and what ``make test`` sets): derandomized, no example database, a bounded
number of examples, no deadline, so the property suite is the same on every run and stays well
under a minute on a 2-core machine. ``long`` (``make fuzz``): many more examples, random, with the
local example database, for hunting on a developer's machine. Choose with HYPOTHESIS_PROFILE.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=40,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")
