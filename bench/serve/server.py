"""Run the replay server: in the foreground (the CLI) or in a background thread (tests, drivers)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import socket
import threading
import time
from types import TracebackType
from typing import Any, Literal, Self

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from bench.serve.app import Session, create_app
from bench.serve.refusals import HEAD_TOO_LARGE, HEADER_TIMEOUT, MAX_HEAD

DEFAULT_HOST = "127.0.0.1"
KEEP_ALIVE = 5
"""Seconds an idle kept-alive connection stays open after a response (uvicorn's timeout_keep_alive)."""

Stack = Literal["auto", "fast", "pure"]
"""The event loop and HTTP parser: ``fast`` uvloop and httptools (the uvicorn[standard] pair), ``pure``
the standard asyncio loop and h11, ``auto`` fast where both import."""


class _Deadline:
    """A connection's header deadline and head size bound, over either of uvicorn's HTTP protocols.

    uvicorn closes a connection idle after a response (`timeout_keep_alive`), but not one that never
    sends a byte, nor one whose request line or headers stop half-way (any byte stops its keep-alive
    timer): both stay open for ever. Here a connection waiting for a request's headers is closed
    :data:`HEADER_TIMEOUT` seconds after it opened or its previous response ended; a request in
    progress is bounded by the app (`read_timeout`, `write_timeout`). h11 bounds the head itself
    (`h11_max_incomplete_event_size`); for httptools, which has no bound, the bytes received while
    waiting for the headers are counted here. A connection closed while a client that does not read
    still holds the rest of a response (a response cut at the write timeout) is aborted at the next
    deadline, instead of holding its buffer until the client goes."""

    header_timeout = HEADER_TIMEOUT
    max_head = MAX_HEAD
    _deadline: asyncio.TimerHandle | None = None
    _head = 0

    def _waiting(self) -> bool:
        cycle = self.cycle  # type: ignore[attr-defined]
        return cycle is None or bool(cycle.response_complete)

    def _arm(self) -> None:
        self._disarm()
        self._head = 0
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)  # type: ignore[attr-defined]

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            # closed, but still waiting for a client that does not read to take the rest (a cut
            # response, a kept-alive one it never read): drop it
            transport.abort()
        elif self._waiting():
            transport.close()
        else:  # a request in progress (the app bounds it): look again later
            self._deadline = self.loop.call_later(self.header_timeout, self._expire)  # type: ignore[attr-defined]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():  # type: ignore[attr-defined]
            self._arm()

    def data_received(self, data: bytes) -> None:
        waiting = self._waiting()
        super().data_received(data)  # type: ignore[misc]
        if not (waiting and self._waiting()):
            self._head = 0
            return
        self._head += len(data)
        if self._head > self.max_head and not self.transport.is_closing():  # type: ignore[attr-defined]
            self.send_400_response(HEAD_TOO_LARGE)  # type: ignore[attr-defined]


class _BoundedH11(_Deadline, H11Protocol):
    pass


def _protocol(stack: Stack, header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol where the fast stack is asked for or (auto) imports, else its h11
    one; either with the header deadline."""
    base: type[asyncio.Protocol] = _BoundedH11
    if stack != "pure" and fast_stack():
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = type("_BoundedHttpTools", (_Deadline, HttpToolsProtocol), {})
    elif stack == "fast":
        raise RuntimeError("the fast stack needs uvloop and httptools (pip install 'uvicorn[standard]')")
    return type(base.__name__, (base,), {"header_timeout": header_timeout})


def fast_stack() -> bool:
    """Whether uvloop and httptools both import (the platform has them)."""
    try:
        importlib.import_module("httptools")
        importlib.import_module("uvloop")
    except ImportError:
        return False
    return True


def config(session: Session, host: str = DEFAULT_HOST, port: int = 0, stack: Stack = "auto",
           header_timeout: float = HEADER_TIMEOUT) -> uvicorn.Config:
    """The uvicorn configuration of the replay server (:func:`uvicorn_config`)."""
    return uvicorn_config(create_app(session), host, port, stack, header_timeout)


def uvicorn_config(app: Any, host: str = DEFAULT_HOST, port: int = 0, stack: Stack = "auto",
                   header_timeout: float = HEADER_TIMEOUT) -> uvicorn.Config:
    """The uvicorn configuration the replay server runs `app` with (and ``make perf``'s floor): no
    lifespan, quiet logs, short keep-alive, a header deadline and bounded headers, uvloop and
    httptools where they import (`stack`)."""
    fast = stack == "fast" or (stack == "auto" and fast_stack())
    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                          timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=2, access_log=False,
                          h11_max_incomplete_event_size=MAX_HEAD, http=_protocol(stack, header_timeout),
                          loop="uvloop" if fast else "asyncio")


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


class PromptServer(uvicorn.Server):
    """uvicorn's server, ending as soon as it is asked rather than on its own clock.

    uvicorn looks at its exit flag every 0.1 s, and its shutdown sleeps 0.1 s before waiting, on 0.1 s
    polls again, for the open connections to close: never under a tenth of a second a stop, and a check
    or conformance run stops one server per (loop, sequence). Here :meth:`wake` ends the wait for the next
    look at the flag, and the shutdown takes uvicorn's steps in uvicorn's order (stop listening, ask
    every connection to close once its response is sent, wait for them and the tasks within the
    graceful-shutdown time, cancel what is left) polling every few milliseconds."""

    POLL = 0.005

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._woken: asyncio.Event | None = None

    def wake(self) -> None:
        """From any thread: look at the exit flag now."""
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(woken.set)

    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        limit = self.config.timeout_graceful_shutdown
        deadline = None if limit is None else loop.time() + limit
        while (self.server_state.connections or self.server_state.tasks) and not self.force_exit:
            if deadline is not None and loop.time() >= deadline:
                for task in self.server_state.tasks:
                    task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
                break
            await asyncio.sleep(self.POLL)
        else:
            for server in self.servers:
                await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()


class BackgroundUvicorn:
    """A uvicorn app on a loopback port in a daemon thread, stopped as soon as asked
    (:class:`PromptServer`); a context manager. `what` names it in the error when it does not start
    within `start_timeout` seconds, `thread` names its thread; port 0 picks a free port, read back
    once it listens; :attr:`url` is its address with `path` appended."""

    def __init__(self, config: uvicorn.Config, what: str, thread: str, start_timeout: float = 10.0,
                 path: str = "") -> None:
        self.server = PromptServer(config)
        self.thread = threading.Thread(target=self.server.run, name=thread, daemon=True)
        self.what = what
        self.start_timeout = start_timeout
        self.host: str = config.host
        self.port: int = config.port
        self.path = path

    @property
    def url(self) -> str:
        """The address once started, e.g. http://127.0.0.1:PORT (Anthropic clients append /v1/messages)."""
        return f"http://{self.host}:{self.port}{self.path}"

    def start(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the {self.what} did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for srv in self.server.servers for s in srv.sockets]
        self.port = int(sockets[0].getsockname()[1])
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        self.server.wake()
        self.thread.join(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class BackgroundServer(BackgroundUvicorn):
    """The replay server in the background.

    ``with BackgroundServer(session) as srv: ... srv.base_url ...``; port 0 picks a free port.
    """

    def __init__(self, session: Session, host: str = DEFAULT_HOST, port: int = 0,
                 start_timeout: float = 10.0, stack: Stack = "auto", header_timeout: float = HEADER_TIMEOUT) -> None:
        super().__init__(config(session, host, port, stack, header_timeout), "replay server", "stopbench-serve",
                         start_timeout)
        self.session = session

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, root + /v1."""
        return self.url + "/v1"
