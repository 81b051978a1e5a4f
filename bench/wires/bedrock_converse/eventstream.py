"""The AWS event-stream binary encoding that ConverseStream frames its events in (not SSE).

One message is a prelude (total length and headers length, 4 bytes each, big-endian, then the
CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before it. A header
is its name's length (1 byte), the name, a type byte (7: string) and the value (2-byte length,
then the bytes). This is the format botocore's ``botocore.eventstream`` decodes.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

STRING = 7
"""The header value type of a UTF-8 string."""

MEDIA = "application/vnd.amazon.eventstream"
"""The content type of a ConverseStream answer."""


def headers(values: Mapping[str, str]) -> bytes:
    """The encoded headers, in the order given, every value a string."""
    out = bytearray()
    for name, value in values.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack(">B", len(raw_name)) + raw_name
        out += struct.pack(">BH", STRING, len(raw_value)) + raw_value
    return bytes(out)


def message(head: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude and its CRC, headers, payload, message CRC."""
    encoded = headers(head)
    total = 4 + 4 + 4 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + encoded + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(kind: str, data: dict[str, Any]) -> bytes:
    """A ``:message-type: event`` message of type `kind` carrying `data` as JSON."""
    return message({":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
                   json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def exception(kind: str, data: dict[str, Any]) -> bytes:
    """A ``:message-type: exception`` message: an error inside the stream (`kind`: the member name
    of ConverseStreamOutput, e.g. ``throttlingException``)."""
    return message({":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
                   json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
