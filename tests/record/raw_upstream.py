"""An upstream that misbehaves below HTTP: it reads a request, writes the bytes it was given (a status
line, headers and as much body as the case wants), then resets the connection, closes it, or holds it
open and says nothing more. The cases the recording proxy must record as what the client got."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

Then = Literal["reset", "close", "hang", "stall"]
"""After the bytes: a reset, a close, or the connection held open with nothing sent (``hang``: not
even the bytes; ``stall``: the bytes, then nothing)."""


def response(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    """A status line, headers and `body` as an HTTP/1.1 server writes them (no length added)."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body


def chunk(data: bytes) -> bytes:
    """`data` as one chunk of a chunked body."""
    return b"%x\r\n" % len(data) + data + b"\r\n"


def _read_request(conn: socket.socket) -> None:
    """Read a whole request (its head, then Content-Length bytes): a socket closed with bytes unread
    sends a reset, not the close the case asked for."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(1 << 16)
        if not piece:
            return
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        piece = conn.recv(1 << 16)
        if not piece:
            return
        body += piece


@contextmanager
def raw_upstream(sent: bytes, then: Then) -> Iterator[str]:
    """A server at the URL yielded that answers every request with `sent`, then does `then`."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)  # so the thread sees `stop` (closing the socket does not wake an accept)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            _read_request(conn)
            if then == "hang":
                held.append(conn)
                continue
            conn.sendall(sent)
            if then == "stall":
                held.append(conn)
                continue
            if then == "reset":  # SO_LINGER 0: close sends RST, not FIN (once the bytes sent have arrived)
                time.sleep(0.2)  # a reset drops what the peer has not read yet
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=serve, name="raw-upstream", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()
        for conn in held:
            conn.close()
        thread.join(5)
