"""``make perf``'s server section runs offline: without aimock it measures the replay server and the
floor of its stack, every answer checked, and writes its report (devtools/perf_serve.py)."""

from __future__ import annotations

import pytest

from devtools import perf_serve


def test_the_server_section_runs_without_aimock_and_reports_both_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STOPBENCH_AIMOCK", raising=False)
    rows = perf_serve.server_section(seconds=0.1, rounds=1)
    assert [(r["case"], r["conns"]) for r in rows] == [("json", 1), ("json", 8), ("stream", 1), ("stream", 8)]
    for r in rows:
        assert "aimock" not in r and r["stopbench"]["rate"] > 0 and r["floor"]["rate"] > 0
        assert r["stopbench"]["cpu_us"] > 0 and r["vs_floor"] > 0
        assert all((t in r) == (r["conns"] == 8) for t in perf_serve.REFERENCES)
        assert all(r[t]["rate"] > 0 and r[t]["cpu_us"] >= r[t]["sys_us"] >= 0 for t in perf_serve.REFERENCES if t in r)
    page = perf_serve.markdown(rows, 0.1, "asyncio + h11", 1.0, aimock=False)
    assert page.startswith("# The replay server's speed") and "| stream | 8 |" in page and "aimock was not" in page
    lines = page.splitlines()
    head = next(i for i, line in enumerate(lines) if line.endswith("| 0.8 of the floor leaves µs |"))
    added = lines[head + 2]
    assert added.startswith("| json | ")
    floor_rate = next(r for r in rows if r["case"] == "json" and r["conns"] == 8)["floor"]["rate"]
    assert added.endswith(f"| {0.25e6 / floor_rate:.0f} |")


@pytest.mark.parametrize("adds", list(perf_serve.REFERENCES))
def test_a_reference_answers_what_the_floor_answers_after_its_work(adds: str) -> None:
    import asyncio

    def call(app: object, raw: bytes) -> bytes:
        sent: list[bytes] = []
        messages = [{"type": "http.request", "body": raw[:20], "more_body": True},
                    {"type": "http.request", "body": raw[20:], "more_body": False}]

        async def receive() -> dict[str, object]:
            return messages.pop(0)

        async def send(message: dict[str, object]) -> None:
            sent.append(message.get("body", b""))  # type: ignore[arg-type]

        asyncio.run(app({"type": "http", "method": "POST", "path": "/v1/chat/completions"}, receive, send))  # type: ignore[operator]
        return b"".join(sent)

    raw = perf_serve.request_bytes("json").split(b"\r\n\r\n", 1)[1]
    assert call(perf_serve.floor_app("json", adds), raw) == call(perf_serve.floor_app("json"), raw)
    if adds == "floor+read":  # it reads the request: one the server refuses is not answered
        with pytest.raises(RuntimeError, match="refuses"):
            call(perf_serve.floor_app("json", adds), b'{"messages": 5}' + b" " * 30)


def test_the_stream_case_is_51_events_of_the_text() -> None:
    from bench.serve.render import Context, render

    seq = perf_serve.sequence("stream")
    out = render("openai-chat", seq.turns[0], Context("id", "m", "stop"), True)
    assert len(out.frames) == 51 and b"[DONE]" in out.frames[-1]


def test_the_in_process_cost_measures_both_apps_answering_the_request_and_is_in_the_report() -> None:
    costs = {kind: perf_serve.handler_cost(kind, requests=50, rounds=1) for kind in perf_serve.KINDS}
    for cost in costs.values():
        assert cost["stopbench"] > 0 and cost["floor"] > 0 and cost["floor+read"] > 0
    rows = [{"case": "json", "conns": 1, **{t: {"rate": 1.0, "p50_ms": 0.1, "p99_ms": 0.2, "cpu_us": 9.0}
                                             for t in ("stopbench", "floor")}, "vs_floor": 1.0, "cpu_vs_floor": 1.0}]
    handlers = [{"case": kind, **cost} for kind, cost in costs.items()]
    page = perf_serve.markdown(rows, 0.1, "uvloop + httptools", 1.0, aimock=False, handlers=handlers)
    assert "| case | stopbench's app µs | floor's app µs | added by the bench µs | floor+read's app µs |" in page
    assert f"| stream | {costs['stream']['stopbench']:.1f} | {costs['stream']['floor']:.1f} |" in page
    assert page.count(f"| {costs['json']['floor+read']:.1f} |") >= 1


def test_targets_start_side_by_side_and_a_target_that_fails_stops_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[perf_serve.Server] = []
    real_start = perf_serve.start

    def start(target: str, kind: str, aimock: object) -> perf_serve.Server:
        srv = real_start(target, kind, None)
        started.append(srv)
        return srv

    monkeypatch.setattr(perf_serve, "start", start)
    servers = perf_serve.start_all(["floor", "floor+read"], "json", None)
    try:
        assert sorted(servers) == ["floor", "floor+read"] and all(s.proc.poll() is None for s in servers.values())
    finally:
        for srv in servers.values():
            srv.stop()
    started.clear()
    with pytest.raises(ValueError):
        perf_serve.start_all(["floor", "no-such-target"], "json", None)
    assert [s.name for s in started] == ["floor"] and started[0].proc.poll() is not None


def test_the_long_request_is_read_as_the_server_reads_it_and_its_cost_is_in_the_report() -> None:
    from bench.serve import bad_requests

    body = bad_requests.parse(perf_serve.long_request())
    assert len(body["messages"]) == 1 + 2 * perf_serve.LONG_CALLS
    cost = perf_serve.reading_cost(repeats=2, rounds=1)
    assert cost["read_us"] > cost["orjson_us"] > 0 and cost["bytes"] == len(perf_serve.long_request())
    rows = [{"case": "json", "conns": 1, **{t: {"rate": 1.0, "p50_ms": 0.1, "p99_ms": 0.2, "cpu_us": 9.0}
                                             for t in ("stopbench", "floor")}, "vs_floor": 1.0, "cpu_vs_floor": 1.0}]
    page = perf_serve.markdown(rows, 0.1, "uvloop + httptools", 1.0, aimock=False, reading=cost)
    assert f"is read and checked in {cost['read_us']:.0f} µs, of which orjson's parse is {cost['orjson_us']:.0f} µs" \
        in page


def test_a_server_that_does_not_end_when_its_stdin_closes_is_stopped_at_once() -> None:
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE, text=True)
    started = time.perf_counter()
    perf_serve.stop_all({"aimock": perf_serve.Server("aimock", proc, 0, ends_on_eof=False)})
    assert proc.returncode is not None and time.perf_counter() - started < 4  # not the 5 s wait, then a kill
