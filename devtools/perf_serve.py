"""``make perf``'s server section: the replay server's request rate and latency against the floor of
its own stack, against CopilotKit aimock where it is installed, and ``stopbench check``'s own CPU per
sequence.

Cases: a JSON answer (one tool call) and a streamed one (a text of 51 Chat Completions events, about
12 KB), each over 1 and 8 keep-alive connections. Targets, each a server process of its own:

* ``stopbench``: the replay server (``BackgroundServer``) serving a one-turn ``then: repeat``
  sequence: every request is read, parsed, checked, journaled and answered from the turn;
* ``floor``: the same stack (uvicorn with the server's configuration, loop and parser, an ASGI
  callable as the replay server's model calls get, the same response writer) reading the request's
  body and answering the same pre-rendered bytes, without parsing, checking or journaling anything:
  what no replay server on this stack can beat;
* ``aimock``: CopilotKit's aimock (Node) with fixtures for the same two answers (same text, chunked
  at the same 24 characters), when ``--aimock DIR`` or ``STOPBENCH_AIMOCK`` names a folder where
  ``npm install @copilotkit/aimock`` was run; left out otherwise (the section works offline).

Over 8 connections two references beside the floor say what work added to a request costs there
(:data:`REFERENCES`): the floor that also reads and checks the request as the replay server must
(``floor+read``), and the floor that also spins for :data:`BUSY_US` microseconds (``floor+busy``).

The client is one process of its own (asyncio over raw sockets, uvloop where it imports: the
cheapest client this language has, the same for every target), keeping `conns` connections busy for
`seconds` per round (:data:`ROUND_SECONDS`; aimock :data:`AIMOCK_ROUND_SECONDS` at least); rounds
interleave the targets and the median round's rate is shown, with p50 and p99 of every round's
latencies and the server's CPU per request over every round (its CPU is read in clock ticks, so a sum
over the rounds rather than a median of short rounds). Rates are only comparable within one run: the
machine is shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.serve import bad_requests
from bench.wires import registry

TEXT = ("The replay server answers every request from a recorded turn, byte for byte as the provider "
        "would, and it has to do so quickly: every check and conformance run waits on it. ") * 8
TEXT = TEXT[:1152]
"""48 pieces of 24 characters: with the role chunk, the finish and ``[DONE]``, 51 events."""
CALL_ARGS = '{"path": "src/app.py"}'
_PARAMS = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "read a file", "parameters": _PARAMS}}]
KINDS = ("json", "stream")
CONNS = (1, 8)
ROUND_SECONDS = 0.3
"""Seconds a target is kept busy in one round of a case. The rate is the median of the rounds and the
CPU per request a sum over them, so a round only needs enough requests for its rate (thousands at these
rates); for this module's servers 0.3 s gave the same figures as 0.5 s within their noise between runs."""
AIMOCK_ROUND_SECONDS = 0.5
"""Seconds aimock's rounds last at least. Node pays a fixed CPU cost in each case (its compiler warming
up: about 0.4 s of CPU in the first case), which rounds of 0.3 s spread over fewer requests than rounds of
0.5 s: its CPU per request came out 10 to 30 % higher with them, so its rounds keep their length."""
ROUNDS = 3
"""Interleaved rounds of each case."""


def _user(kind: str) -> str:
    return "perf tool call" if kind == "json" else "perf stream text"


def request_bytes(kind: str) -> bytes:
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": _user(kind)}], "tools": TOOLS,
                       "stream": kind == "stream"}).encode()
    return (b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"authorization: Bearer k\r\ncontent-length: %d\r\n\r\n" % len(body)) + body


def sequence(kind: str) -> Any:
    from bench.catalogue.load import parse_sequence

    turn: dict[str, Any] = ({"finish": "tool_calls", "content": None,
                             "tool_calls": [{"id": "call_perf_1", "name": "read_file", "arguments": CALL_ARGS}]}
                            if kind == "json" else {"finish": "stop", "content": TEXT})
    return parse_sequence({"title": f"make perf: {kind}", "kind": "constructed", "dialect": "openai-chat",
                           "source": "devtools/perf_serve.py", "then": "repeat", "turns": [turn]}, f"perf-{kind}")


# ------------------------------------------------------------------ the servers (child processes)

def _serve_stopbench(kind: str) -> Any:
    from bench.serve import BackgroundServer, Session

    return BackgroundServer(Session(sequence(kind))).start()


BUSY_US = 10.0
"""Microseconds of busy work (a loop reading the clock) the ``floor+busy`` reference adds to a request."""


def read_request(raw: bytes) -> None:
    """Read and check a Chat Completions request body as the replay server does before it answers (the
    body parsed by bench.serve.bad_requests, the conversation read by the wire's reader); RuntimeError
    for one the server refuses."""
    body = bad_requests.parse(raw)
    if not isinstance(body, dict) or bad_requests.problem("openai-chat", body,
                                                          registry.wire("openai-chat").conversation):
        raise RuntimeError("sent a request the replay server refuses")


def _busy(_: bytes) -> None:
    end = time.perf_counter() + BUSY_US / 1e6
    while time.perf_counter() < end:
        pass


REFERENCES: dict[str, tuple[str, Callable[[bytes], None]]] = {
    "floor+busy": (f"the floor that also spins for {BUSY_US:g} µs a request", _busy),
    "floor+read": ("the floor that also reads and checks the request as the replay server does (its body "
                   "parsed by bench.serve.bad_requests, the conversation read by the wire's reader)", read_request),
}
"""The references measured over 8 connections beside the floor: what each adds to it, and that work."""


def floor_app(kind: str, adds: str = "floor") -> Any:
    """The floor's ASGI callable: it reads the request's body and answers the pre-rendered bytes;
    with `adds` one of :data:`REFERENCES`, it also does that reference's work on the body first."""
    from bench.serve.render import Context, render
    from bench.serve.respond import PlanResponse, plan

    if adds != "floor" and adds not in REFERENCES:
        raise ValueError(f"no floor reference {adds!r}: the references are {', '.join(REFERENCES)}")
    work = REFERENCES[adds][1] if adds in REFERENCES else None
    seq = sequence(kind)
    turn = seq.turns[0]
    served = registry.wire("openai-chat")
    ready = plan(render("openai-chat", turn, Context("chatcmpl-stopbench-1-1", "gpt-4o",
                                                     served.finish_for(seq.dialect, turn)), kind == "stream"))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        """Straight to the answer, as the replay server's model calls go (bench.serve.app.ModelCallsFirst)."""
        more = True
        while more:  # a server reads what it is sent
            more = (await receive()).get("more_body", False)
        await PlanResponse(ready, 30.0)(scope, receive, send)

    async def reference(scope: Any, receive: Any, send: Any) -> None:
        """The floor's answer, after the reference's work on the body."""
        assert work is not None
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        work(b"".join(chunks))
        await PlanResponse(ready, 30.0)(scope, receive, send)

    return app if work is None else reference


def _serve_floor(kind: str, adds: str = "floor") -> Any:
    from bench.serve.server import BackgroundUvicorn, uvicorn_config

    return BackgroundUvicorn(uvicorn_config(floor_app(kind, adds)), "floor server", "perf-floor").start()


def handler_cost(kind: str, requests: int = 4000, rounds: int = 7) -> dict[str, float]:
    """Microseconds per request of each target's ASGI app called in this process, with the request's
    messages at hand and every message sent dropped: the code a server runs for a request besides the
    HTTP stack's (median of `rounds`). No sockets and no other process: the steadiest figure of what the
    replay server's own code adds to the floor's."""
    from bench.serve import Session
    from bench.serve.app import create_app

    head, body = request_bytes(kind).split(b"\r\n\r\n", 1)
    headers = [(k.lower(), v) for k, v in (line.split(b": ", 1) for line in head.split(b"\r\n")[1:])]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "root_path": "", "query_string": b"",
             "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
    message = {"type": "http.request", "body": body, "more_body": False}

    async def receive() -> dict[str, Any]:
        return message

    async def send(_: Any) -> None:
        return None

    apps = {"stopbench": create_app(Session(sequence(kind))), "floor": floor_app(kind),
            "floor+read": floor_app(kind, "floor+read")}

    async def serve(app: Any) -> None:
        for _ in range(requests):
            await app(scope, receive, send)

    async def answer(app: Any) -> bytes:
        sent: list[bytes] = []

        async def keep(m: dict[str, Any]) -> None:
            sent.append(m.get("body", b""))

        await app(scope, receive, keep)
        return b"".join(sent)

    loop = _client_loop()
    try:
        for t, app in apps.items():  # every target answers the same thing, as over sockets
            _check(kind, t, loop.run_until_complete(answer(app)))
        times: dict[str, list[float]] = {t: [] for t in apps}
        for _ in range(rounds):
            for t, app in apps.items():
                t0 = time.perf_counter()
                loop.run_until_complete(serve(app))
                times[t].append((time.perf_counter() - t0) / requests * 1e6)
    finally:
        loop.close()
    return {t: statistics.median(v) for t, v in times.items()}


def handler_section() -> list[dict[str, Any]]:
    """Print (and return) the in-process cost of each case (:func:`handler_cost`)."""
    rows = []
    for kind in KINDS:
        cost = handler_cost(kind)
        rows.append({"case": kind, **cost})
        print(f"in process, {kind}: the replay server's app {cost['stopbench']:.1f} us a request, the floor's "
              f"{cost['floor']:.1f} us: the bench's own code adds {cost['stopbench'] - cost['floor']:.1f} us, "
              f"reading and checking the request {cost['floor+read'] - cost['floor']:.1f} us of it", flush=True)
    return rows


LONG_CALLS = 40
"""Tool calls in :func:`long_request`."""


def long_request(calls: int = LONG_CALLS) -> bytes:
    """A Chat Completions request deep into a run: `calls` tool calls, each with a result of about 1 KB."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing test"}]
    for i in range(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod{i}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}",
                         "content": f"def f(x):\n    return x * 2  # line {i}\n" * 30})
    return json.dumps({"model": "gpt-4o", "messages": messages, "tools": TOOLS}).encode()


def reading_cost(repeats: int = 300, rounds: int = 5) -> dict[str, float]:
    """Microseconds the replay server takes to read and check :func:`long_request` (its body parsed by
    bench.serve.bad_requests, the conversation read by the wire's reader), beside orjson's parse alone
    (median of `rounds`)."""
    import orjson

    raw = long_request()

    def timed(work: Any) -> float:
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(repeats):
                work()
            times.append((time.perf_counter() - t0) / repeats * 1e6)
        return statistics.median(times)

    cost = {"bytes": float(len(raw)), "read_us": timed(lambda: read_request(raw)),
            "orjson_us": timed(lambda: orjson.loads(raw))}
    print(f"in process, a request of {len(raw):,} bytes ({LONG_CALLS} tool calls): read and checked in "
          f"{cost['read_us']:.0f} us, orjson's parse alone {cost['orjson_us']:.0f} us", flush=True)
    return cost


def serve_main(target: str, kind: str) -> None:
    """In a child process: start a server, print its port, run until stdin closes."""
    srv = _serve_stopbench(kind) if target == "stopbench" else _serve_floor(kind, target)
    print(srv.port, flush=True)
    sys.stdin.read()
    srv.stop()


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[str]
    port: int
    folder: Path | None = None
    """A temporary folder the server reads (aimock's fixtures), removed when it stops."""
    ends_on_eof: bool = True
    """Whether the server ends when its stdin closes (this module's servers); aimock does not, and is
    sent SIGTERM instead, which it ends on at once."""

    def end(self) -> None:
        """Tell the server to end, without waiting for it."""
        if not self.ends_on_eof and self.proc.poll() is None:
            self.proc.terminate()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def stop(self) -> None:
        """End the server and wait for it (killed after 5 s), then remove its folder."""
        self.end()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def stop_all(servers: dict[str, Server]) -> None:
    """Stop every server: each told to end first, so that they shut down side by side."""
    for srv in servers.values():
        srv.end()
    for srv in servers.values():
        srv.stop()


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds process `pid` has used so far in user and in system mode (every thread; Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(target: str, kind: str, aimock: Path | None) -> Server:
    if target == "aimock":
        assert aimock is not None
        folder = Path(tempfile.mkdtemp(prefix="stopbench-aimock-"))
        fixtures = folder / "fixtures.json"
        fixtures.write_text(json.dumps({"fixtures": [
            {"match": {"userMessage": _user("json")},
             "response": {"toolCalls": [{"name": "read_file", "arguments": CALL_ARGS}]}},
            {"match": {"userMessage": _user("stream")}, "response": {"content": TEXT}}]}), encoding="utf-8")
        port = _free_port()
        proc = subprocess.Popen([shutil.which("node") or "node", str(aimock), "-f", str(fixtures), "-p", str(port),
                                 "-c", "24", "--log-level", "silent"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return Server(target, proc, port, folder, ends_on_eof=False)
            time.sleep(0.1)
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError("aimock did not start")
    proc = subprocess.Popen([sys.executable, "-m", "devtools.perf_serve", "--serve", target, kind],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    assert proc.stdout is not None
    return Server(target, proc, int(proc.stdout.readline()))


def start_all(names: list[str], kind: str, aimock: Path | None) -> dict[str, Server]:
    """Every target's server for `kind`, started side by side (each is a process importing its stack);
    when one does not start, the others are stopped and its error raised."""
    with ThreadPoolExecutor(len(names)) as pool:
        futures = {t: pool.submit(start, t, kind, aimock) for t in names}
    servers: dict[str, Server] = {}
    failed: BaseException | None = None
    for t, future in futures.items():
        try:
            servers[t] = future.result()
        except Exception as exc:
            failed = failed or exc
    if failed is not None:
        stop_all(servers)
        raise failed
    return servers


def aimock_cli(folder: str | None) -> Path | None:
    """The aimock command-line script (its fixture-file CLI) in `folder` (where ``npm install
    @copilotkit/aimock`` ran), or None."""
    if not folder:
        return None
    script = Path(folder) / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
    return script if script.is_file() and shutil.which("node") else None


# ------------------------------------------------------------------ the client (this process)

async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bytes:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    if b"content-length:" in lower:
        size = int(lower.split(b"content-length:")[1].split(b"\r\n")[0])
        body = await reader.readexactly(size)
    else:  # chunked: up to the last chunk
        body = b""
        while not body.endswith(b"\r\n0\r\n\r\n") and body != b"0\r\n\r\n":
            part = await reader.read(65536)
            if not part:
                raise ConnectionError("closed mid-response")
            body += part
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"answered {head[:40]!r}")
    return body


async def _load(port: int, request: bytes, conns: int, seconds: float) -> tuple[int, list[float], bytes]:
    """Requests answered in `seconds` over `conns` connections, every latency, one body."""
    lat: list[float] = []
    sample = b""
    stop = 0.0

    async def worker() -> None:
        nonlocal sample
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            sample = await _one(reader, writer, request)  # a warm-up request, not counted
            while True:  # at least one counted, even when the warm-up outlasted a short round
                t0 = time.perf_counter()
                await _one(reader, writer, request)
                lat.append(time.perf_counter() - t0)
                if time.perf_counter() >= stop:
                    break
        finally:
            writer.close()

    stop = time.perf_counter() + seconds
    await asyncio.gather(*(worker() for _ in range(conns)))
    return len(lat), lat, sample


def _client_loop() -> asyncio.AbstractEventLoop:
    try:
        return importlib.import_module("uvloop").new_event_loop()  # type: ignore[no-any-return]
    except ImportError:
        return asyncio.new_event_loop()


def _check(kind: str, target: str, body: bytes) -> None:
    """Every target answers the same thing: the call, or the whole text."""
    text = body.decode("utf-8", "replace")
    if kind == "json" and "read_file" not in text:
        raise RuntimeError(f"{target} did not answer the tool call: {text[:200]}")
    if kind == "stream" and (text.count("data:") < 40 or "[DONE]" not in text):
        raise RuntimeError(f"{target} did not stream the text: {text[:200]}")


def _ms(values: list[float], q: float) -> float:
    if len(values) < 2:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] * 1000


def server_section(seconds: float = ROUND_SECONDS, rounds: int = ROUNDS,
                   aimock: str | None = None) -> list[dict[str, Any]]:
    """Print (and return) the server table: one row per (case, connections), the targets side by side."""
    from bench.serve.server import fast_stack

    cli = aimock_cli(aimock or os.environ.get("STOPBENCH_AIMOCK"))
    targets = ["stopbench", "floor", *(["aimock"] if cli else [])]
    stack = "uvloop + httptools" if fast_stack() else "asyncio + h11 (uvloop/httptools not installed)"
    length = {t: max(seconds, AIMOCK_ROUND_SECONDS) if t == "aimock" else seconds for t in [*targets, *REFERENCES]}
    print(f"server: {stack}; {rounds} interleaved rounds of {seconds:g} s per target and case"
          + (f" ({length['aimock']:g} s for aimock)" if length.get("aimock", seconds) != seconds else "")
          + ", median round's rate; "
          f"client: one process, raw sockets on {'uvloop' if _client_loop_name() == 'uvloop' else 'asyncio'}")
    if cli is None:
        print("  aimock: not measured (npm install @copilotkit/aimock into a folder, then --aimock FOLDER or "
              "STOPBENCH_AIMOCK=FOLDER)")
    rows: list[dict[str, Any]] = []
    header = f"{'case':8} {'conns':>5} " + " ".join(f"{t + ' req/s':>15} {'p50 ms':>7} {'p99 ms':>7} {'cpu us':>7}"
                                                     for t in targets)
    print(header + f" {'vs floor':>8} {'cpu vs':>8}" + (f" {'vs aimock':>9} {'cpu vs':>9}" if cli else ""))
    print("  (cpu us: the server process's CPU per request over every round; cpu vs: the other's CPU per request over "
          "stopbench's, its capacity ratio, steadier than wall-clock rates on a shared machine)")
    loop = _client_loop()
    try:
        for kind in KINDS:
            servers = start_all([*targets, *REFERENCES], kind, cli)
            try:
                request = request_bytes(kind)
                for conns in CONNS:
                    measured = [*targets, *(REFERENCES if conns == max(CONNS) else ())]
                    rates: dict[str, list[float]] = {t: [] for t in measured}
                    lats: dict[str, list[float]] = {t: [] for t in measured}
                    # CPU seconds (all, in the system) and requests, summed over the rounds: the process's CPU
                    # is read in clock ticks (10 ms), so the sum keeps the per-request figure to a tick in all
                    cpu: dict[str, list[float]] = {t: [0.0, 0.0, 0] for t in measured}
                    for _ in range(rounds):
                        for t in measured:
                            user0, sys0 = cpu_seconds(servers[t].proc.pid)
                            n, lat, body = loop.run_until_complete(_load(servers[t].port, request, conns, length[t]))
                            user1, sys1 = cpu_seconds(servers[t].proc.pid)
                            cpu[t][0] += user1 + sys1 - user0 - sys0
                            cpu[t][1] += sys1 - sys0
                            cpu[t][2] += max(n + conns, 1)
                            _check(kind, t, body)
                            rates[t].append(n / length[t])
                            lats[t] += lat
                    row: dict[str, Any] = {"case": kind, "conns": conns}
                    for t in measured:
                        row[t] = {"rate": statistics.median(rates[t]), "p50_ms": _ms(lats[t], 50),
                                  "p99_ms": _ms(lats[t], 99), "cpu_us": cpu[t][0] / cpu[t][2] * 1e6,
                                  "sys_us": cpu[t][1] / cpu[t][2] * 1e6}
                    cells = [f"{row[t]['rate']:>15,.0f} {row[t]['p50_ms']:>7.2f} {row[t]['p99_ms']:>7.2f} "
                             f"{row[t]['cpu_us']:>7.0f}" for t in targets]
                    row["vs_floor"] = row["stopbench"]["rate"] / row["floor"]["rate"]
                    row["cpu_vs_floor"] = row["floor"]["cpu_us"] / row["stopbench"]["cpu_us"]
                    line = (f"{kind:8} {conns:>5} " + " ".join(cells)
                            + f" {row['vs_floor']:>8.2f} {row['cpu_vs_floor']:>8.2f}")
                    if cli:
                        row["vs_aimock"] = row["stopbench"]["rate"] / row["aimock"]["rate"]
                        row["cpu_vs_aimock"] = row["aimock"]["cpu_us"] / row["stopbench"]["cpu_us"]
                        line += f" {row['vs_aimock']:>9.2f} {row['cpu_vs_aimock']:>9.2f}"
                    print(line, flush=True)
                    for t in REFERENCES:
                        if t in row:
                            print(f"{'':14} {t}: {row[t]['rate']:,.0f} req/s, {row[t]['cpu_us']:.0f} us CPU a request "
                                  f"({row[t]['sys_us']:.0f} in the system; the floor's {row['floor']['sys_us']:.0f}), "
                                  f"{row[t]['rate'] / row['floor']['rate']:.2f} of the floor's rate", flush=True)
                    rows.append(row)
            finally:
                stop_all(servers)
    finally:
        loop.close()
    worst = min(r["vs_floor"] for r in rows)
    print(f"stopbench/floor: {worst:.2f} at worst by rate, {min(r['cpu_vs_floor'] for r in rows):.2f} by CPU per "
          "request (goal: at least 0.8)"
          + (f"; stopbench/aimock: {min(r['vs_aimock'] for r in rows):.2f} at worst by rate, "
             f"{min(r['cpu_vs_aimock'] for r in rows):.2f} by CPU (goal: at least 1)" if cli else "")
          + f"; load average {os.getloadavg()[0]:.1f}")
    return rows


def _client_loop_name() -> str:
    try:
        importlib.import_module("uvloop")
    except ImportError:
        return "asyncio"
    return "uvloop"


def check_cpu(count: int = 6) -> float:
    """``stopbench check``'s own CPU seconds per sequence (its server, the observation, the verdict;
    not the program's), the reference loop over the first `count` shipped OpenAI Chat sequences."""
    from bench.catalogue.load import load_catalogue
    from bench.check.runner import run_all

    seqs = [s for s in load_catalogue(Path("sequences")).sequences if s.dialect == "openai-chat"][:count]
    t = os.times()
    cpu0 = t.user + t.system
    wall0 = time.perf_counter()
    # two at a time: the wall time is mostly the program's own start (its client library's imports); the
    # check process's CPU, the figure, is the same work either way
    runs = run_all(seqs, [sys.executable, "-m", "bench.loops", "reference"], name="reference", jobs=2)
    t = os.times()
    cpu = (t.user + t.system - cpu0) / len(seqs)
    judged = sum(1 for r in runs if r.cell.outcome)
    print(f"check: {cpu * 1000:.1f} ms CPU per sequence in the check process (server, observation, verdict; the "
          f"program's own CPU not counted), the reference loop over {len(seqs)} shipped openai-chat sequences, "
          f"{judged} judged, {time.perf_counter() - wall0:.1f} s wall; load average {os.getloadavg()[0]:.1f}")
    return cpu


def markdown(rows: list[dict[str, Any]], cpu: float, stack: str, load: float, aimock: bool,
             handlers: list[dict[str, Any]] | None = None, reading: dict[str, float] | None = None) -> str:
    """The section as a Markdown report (what docs/reference/performance.md includes)."""
    targets = ["stopbench", "floor", *(["aimock"] if aimock else [])]
    out = ["# The replay server's speed", "",
           "Generated by `make perf` (`python -m devtools.perf --only serve`, devtools/perf_serve.py); do not edit.",
           f"One run on {os.cpu_count()} cores, load average {load:.1f} at the end; server stack: {stack}. Rates are "
           "the median of the interleaved rounds in requests per second, latencies in milliseconds over every round;",
           "compare the ratios, taken in one run, rather than rates across runs. CPU µs is the server process's CPU",
           "time per request over every round, and the CPU ratio the other server's CPU per request over stopbench's:",
           "what each could answer on a core of its own, steadier than the wall-clock rates on a shared machine.",
           "The floor is the same uvicorn configuration and response writer behind a bare ASGI callable that reads",
           "the body and answers pre-rendered bytes (the replay server's model calls skip Starlette's router too).", "",
           "| case | connections | " + " | ".join(f"{t} req/s | p50 | p99 | CPU µs" for t in targets)
           + " | stopbench / floor (rate, CPU)" + (" | stopbench / aimock (rate, CPU) |" if aimock else " |"),
           "| --- | ---: | " + " | ".join("---: | ---: | ---: | ---:" for _ in targets) + " | ---:"
           + (" | ---: |" if aimock else " |")]
    for r in rows:
        cells = " | ".join(f"{r[t]['rate']:,.0f} | {r[t]['p50_ms']:.2f} | {r[t]['p99_ms']:.2f} | {r[t]['cpu_us']:.0f}"
                           for t in targets)
        line = f"| {r['case']} | {r['conns']} | {cells} | {r['vs_floor']:.2f}, {r['cpu_vs_floor']:.2f}"
        out.append(line + (f" | {r['vs_aimock']:.2f}, {r['cpu_vs_aimock']:.2f} |" if aimock else " |"))
    added = [r for r in rows if all(t in r for t in REFERENCES)]
    if added:
        names = [*REFERENCES, "stopbench"]
        described = "; ".join(f"{t}: {what}" for t, (what, _) in REFERENCES.items())
        out += ["", f"What work added to a request costs over {added[0]['conns']} connections, where the floor answers "
                f"fastest: each reference beside the floor ({described}"
                + "), and the replay server. The last column is the time a request that 0.8 of the floor's rate leaves "
                "for everything a server adds to the floor.", "",
                "| case | floor req/s | CPU µs (system) | "
                + " | ".join(f"{t} req/s | CPU µs (system) | of the floor" for t in names)
                + " | 0.8 of the floor leaves µs |",
                "| --- | ---: | ---: | " + " | ".join("---: | ---: | ---:" for _ in names) + " | ---: |"]
        for r in added:
            floor = r["floor"]
            cells = " | ".join(f"{r[t]['rate']:,.0f} | {r[t]['cpu_us']:.0f} ({r[t]['sys_us']:.0f}) | "
                               f"{r[t]['rate'] / floor['rate']:.2f}" for t in names)
            out.append(f"| {r['case']} | {floor['rate']:,.0f} | {floor['cpu_us']:.0f} ({floor['sys_us']:.0f}) | "
                       f"{cells} | {0.25e6 / floor['rate']:.0f} |")
    if handlers:
        out += ["", "The same two answers with no sockets: each target's ASGI app called in one process with the "
                "request at hand,", "microseconds a request (median of 7 rounds): what the replay server's own "
                "code adds to the floor's, and what reading and checking the request adds (floor+read).", "",
                "| case | stopbench's app µs | floor's app µs | added by the bench µs | floor+read's app µs |",
                "| --- | ---: | ---: | ---: | ---: |"]
        out += [f"| {h['case']} | {h['stopbench']:.1f} | {h['floor']:.1f} | {h['stopbench'] - h['floor']:.1f} | "
                f"{h['floor+read']:.1f} |" for h in handlers]
    if reading:
        out += ["", f"A request deep into a run, {reading['bytes']:,.0f} bytes with {LONG_CALLS} tool calls and their "
                f"results (`devtools.perf_serve.long_request`), is read and checked in {reading['read_us']:.0f} µs, "
                f"of which orjson's parse is {reading['orjson_us']:.0f} µs."]
    out += ["", f"`stopbench check`'s own CPU per sequence (server, observation, verdict; not the program's): "
            f"{cpu * 1000:.0f} ms, the reference loop over shipped openai-chat sequences.", ""]
    if not aimock:
        out += ["aimock was not installed for this run (see Performance in the docs for how to add it).", ""]
    return "\n".join(out)


def report(seconds: float = ROUND_SECONDS, rounds: int = ROUNDS, aimock: str | None = None,
           out: Path | None = None) -> None:
    """The server section, printed, and written as Markdown to `out` when given."""
    from bench.serve.server import fast_stack

    rows = server_section(seconds, rounds, aimock)
    handlers = handler_section()
    reading = reading_cost()
    cpu = check_cpu()
    if out is not None:
        stack = "uvloop + httptools" if fast_stack() else "asyncio + h11"
        has_aimock = any("aimock" in r for r in rows)
        out.write_text(markdown(rows, cpu, stack, os.getloadavg()[0], has_aimock, handlers, reading), encoding="utf-8")
        print(f"server section written to {out}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve_main(sys.argv[2], sys.argv[3])
    else:
        import argparse

        parser = argparse.ArgumentParser(prog="python -m devtools.perf_serve", description=__doc__.splitlines()[0])
        parser.add_argument("--seconds", type=float, default=ROUND_SECONDS)
        parser.add_argument("--rounds", type=int, default=ROUNDS)
        parser.add_argument("--aimock", help="a folder where npm install @copilotkit/aimock ran")
        parser.add_argument("--report", type=Path, help="also write the section as Markdown here")
        args = parser.parse_args()
        report(args.seconds, args.rounds, args.aimock, args.report)
