"""A stop signal reaches ``serve`` and ``record`` wherever the main thread is in its wait: Python runs a
signal handler between any two bytecodes of the main thread, so a handler that takes a lock the wait
holds (``threading.Event.set`` inside ``Event.wait``) deadlocks the command for ever (seen once in CI:
``serve`` never ended after SIGTERM)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import ROOT

# The handler is called (as Python would call it) at the k-th line the main thread runs inside wait().
HANDLER_AT_EVERY_LINE = """
import signal, sys
from bench.cli._stops import StopSignals

for k in range(1, 25):
    stop = StopSignals()
    stop.POLL = 0.001
    seen = [0]

    def trace(frame, event, arg):
        if event == "line":
            seen[0] += 1
            if seen[0] == k:
                stop._stop(signal.SIGTERM, frame)
        return trace

    sys.settrace(trace)
    stop.wait()
    sys.settrace(None)
    assert stop.names == ["SIGTERM"], stop.names
print("every stop seen")
"""


def test_a_stop_handled_between_any_two_lines_of_the_wait_ends_it() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", HANDLER_AT_EVERY_LINE], env=env, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "every stop seen"
