"""``stopbench record``: a recording proxy in front of a model API, and ``stopbench diff``: where a
loop's requests first differ from a recording's.

:mod:`~bench.record.proxy` passes the traffic through; :mod:`~bench.record.recording` splits it into
conversations and writes each as a redacted cassette and a sequence the importers build from it;
:mod:`~bench.record.redact` is what is never written; :mod:`~bench.record.divergence` compares a
loop's requests with a recording's. docs/how-to/record.md shows the commands.
"""

from __future__ import annotations

from bench.record.recording import Exchange, Recorder, response_bytes
from bench.record.redact import DEFAULT_PATTERNS, MASK, Redactor, mask, redactor

__all__ = ["DEFAULT_PATTERNS", "MASK", "Exchange", "Recorder", "Redactor", "mask", "redactor", "response_bytes"]
