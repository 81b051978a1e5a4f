"""Run the replay server: in the foreground (the CLI) or in a background thread (tests, drivers)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn

from bench.serve.app import Session, create_app

DEFAULT_HOST = "127.0.0.1"


def config(session: Session, host: str = DEFAULT_HOST, port: int = 0) -> uvicorn.Config:
    """The uvicorn configuration: no lifespan, quiet logs, short keep-alive, bounded headers."""
    return uvicorn.Config(create_app(session), host=host, port=port, log_level="warning", lifespan="off",
                          timeout_keep_alive=5, timeout_graceful_shutdown=2, access_log=False,
                          h11_max_incomplete_event_size=64 * 1024)


def bind_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on `host`:`port` (the OS's words), or None. Checked before
    starting, so that a port in use is one line from the bench rather than uvicorn's log and a
    thread that exits."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return str(exc.strerror or exc)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            return str(exc.strerror or exc)
    return None


class BackgroundServer:
    """The server on a loopback port in a daemon thread; a context manager.

    ``with BackgroundServer(session) as srv: ... srv.base_url ...``; port 0 picks a free port.
    """

    def __init__(self, session: Session, host: str = DEFAULT_HOST, port: int = 0,
                 start_timeout: float = 10.0) -> None:
        self.session = session
        self.server = uvicorn.Server(config(session, host, port))
        self.thread = threading.Thread(target=self.server.run, name="stopbench-serve", daemon=True)
        self.start_timeout = start_timeout
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """The root URL, e.g. http://127.0.0.1:PORT (Anthropic clients append /v1/messages)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, root + /v1."""
        return self.url + "/v1"

    def start(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the replay server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for srv in self.server.servers for s in srv.sockets]
        self.port = int(sockets[0].getsockname()[1])
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
