"""Reading the AWS event-stream framing of a recorded ConverseStream, and writing a message again.

The recorder decodes the upstream's bytes into messages to import them (as the one-key event objects
botocore yields, ``{"contentBlockDelta": {...}}``) and to redact their JSON payloads; a message whose
payload changed is framed again with its own header bytes and new CRCs. The decoder lives with the
encoder in :mod:`bench.wires.bedrock_converse.eventstream` (the reference loop's Bedrock client reads
with it too).
"""

from __future__ import annotations

from bench.wires.bedrock_converse.eventstream import Message, decode

__all__ = ["Message", "decode"]
