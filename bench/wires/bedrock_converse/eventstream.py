"""The AWS event-stream binary encoding that ConverseStream frames its events in (not SSE): the
server's encoder, and the decoder the recorder and the reference loop's Bedrock client read it with.

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
from dataclasses import dataclass
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


_PRELUDE = 12


@dataclass(frozen=True, slots=True)
class Message:
    """One event-stream message: its header bytes as sent, the headers it names (the string ones),
    its payload."""

    raw_headers: bytes
    headers: dict[str, str]
    payload: bytes

    def encode(self, payload: bytes | None = None) -> bytes:
        """The message framed again, with `payload` instead of its own when given."""
        body = self.payload if payload is None else payload
        total = _PRELUDE + len(self.raw_headers) + len(body) + 4
        prelude = struct.pack(">II", total, len(self.raw_headers))
        out = prelude + struct.pack(">I", zlib.crc32(prelude)) + self.raw_headers + body
        return out + struct.pack(">I", zlib.crc32(out))

    def as_event(self) -> dict[str, Any] | None:
        """The message as botocore yields it: ``{event type: payload}`` (an exception under its
        exception type), or None when its payload is not a JSON object."""
        kind = self.headers.get(":event-type") or self.headers.get(":exception-type")
        try:
            value = json.loads(self.payload or b"{}")
        except ValueError:
            return None
        return {kind: value} if kind and isinstance(value, dict) else None


def _headers(raw: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    sizes = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
    while i < len(raw):
        n = raw[i]
        name = raw[i + 1:i + 1 + n].decode("utf-8", "replace")
        i += 1 + n
        kind = raw[i]
        i += 1
        if kind in (6, 7):
            (length,) = struct.unpack(">H", raw[i:i + 2])
            value = raw[i + 2:i + 2 + length]
            if kind == 7:
                out[name] = value.decode("utf-8", "replace")
            i += 2 + length
        elif kind in sizes:
            i += sizes[kind]
        else:
            break
    return out


def decode(data: bytes) -> tuple[list[Message], bytes]:
    """The whole messages at the start of `data`, and what is left (a message cut off, or bytes that
    are not one: a prelude whose CRC does not match ends the decoding there)."""
    out: list[Message] = []
    i = 0
    while len(data) - i >= _PRELUDE + 4:
        total, head = struct.unpack(">II", data[i:i + 8])
        (crc,) = struct.unpack(">I", data[i + 8:i + 12])
        if crc != zlib.crc32(data[i:i + 8]) or total < _PRELUDE + 4 + head or len(data) - i < total:
            break
        raw_headers = data[i + _PRELUDE:i + _PRELUDE + head]
        payload = data[i + _PRELUDE + head:i + total - 4]
        out.append(Message(raw_headers, _headers(raw_headers), payload))
        i += total
    return out, data[i:]
