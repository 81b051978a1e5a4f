"""Run in a fresh Python whose path holds the installed throwaway wire (tests/wires/test_throwaway_wire.py):
asks the registry, the replay server, ``stopbench check`` (with a fault), the fuzz strategies and the
corpus generator for the throwaway wire, and prints what each did as one JSON object.

Usage: python throwaway_probe.py WORKDIR
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner
from hypothesis import find, settings

from bench.catalogue.load import parse_sequence
from bench.cli import cli
from bench.corpus.decode import line_records
from bench.corpus.generate import corpus_lines
from bench.fuzz.strategies import sequences
from bench.serve import BackgroundServer, Session
from bench.wires.registry import names

WIRE = "throwaway-json"
HERE = Path(__file__).resolve().parent
TOOLS = [{"name": "read_file"}]
DOC = {"title": "two rounds on the throwaway wire", "kind": "constructed", "dialect": WIRE, "source": "tests/wires",
       "then": "end", "turns": [
           {"finish": "tool_calls", "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{}"}]},
           {"finish": "stop", "content": "all done"}]}


def serve() -> dict[str, Any]:
    """Two rounds, one streamed, and a malformed request, on the wire's own path."""
    seq = parse_sequence(DOC, "throwaway-rounds")
    out: dict[str, Any] = {}
    with BackgroundServer(Session(seq)) as srv, httpx.Client() as client:
        url = srv.base_url.removesuffix("/v1") + "/throwaway/v1/reply"
        first = [{"who": "user", "said": "go"}]
        one = client.post(url, json={"model": "m", "history": first, "tools": TOOLS})
        out["one"] = (one.status_code, one.json())
        call = one.json()["throwaway"]["calls"][0]
        history = [*first, {"who": "model", "said": "", "calls": [call]},
                   {"who": "tool", "ref": call["ref"], "result": "ok"}]
        two = client.post(url, json={"model": "m", "history": history, "tools": TOOLS, "stream": True})
        out["two"] = (two.status_code, two.headers["content-type"], two.text.splitlines())
        bad = client.post(url, json={"model": "m", "history": 5})
        out["bad"] = (bad.status_code, bad.json())
        out["records"] = [r.wire for r in srv.session.records()]
        out["observed"] = [o.action for o in srv.session.observed()]
    return out


def check(work: Path) -> dict[str, Any]:
    """``stopbench check --faults rate-limited`` of the throwaway program on a sequence file of the wire."""
    folder = work / "sequences"
    folder.mkdir()
    (folder / "throwaway-rounds.yaml").write_text(json.dumps(DOC), encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--sequences", str(folder), "--only-mine", "--dialect", WIRE,
                                 "--faults", "rate-limited", "--reports", str(work / "reports"), "--name", "tw",
                                 "--", sys.executable, str(HERE / "throwaway_program.py")], catch_exceptions=False)
    cells = json.loads((work / "reports" / "live" / "tw.json").read_text())["cells"]
    seen_file = work / "seen.json"
    seen = json.loads(seen_file.read_text(encoding="utf-8")) if seen_file.exists() else {}
    return {"exit": r.exit_code, "output": r.output, "cells": [(c["sequence"], c["violations"]) for c in cells],
            "seen": seen}


def fuzz() -> dict[str, Any]:
    """A generated sequence of the wire with a tool round in it, and a hostile one saying ``end_turn``."""
    quick = settings(database=None, max_examples=300)
    seq = find(sequences(dialect=WIRE, hostile=False), lambda s: any(t.finish == "tool_calls" for t in s.turns),
               settings=quick)
    hostile = find(sequences(dialect=WIRE), lambda s: any(t.end_turn is not None for t in s.turns), settings=quick)
    return {"dialect": seq.dialect, "raws": sorted({str(t.finish_raw) for t in seq.turns}),
            "end_turn": hostile.dialect}


def corpus() -> dict[str, Any]:
    """The generator's lines of the wire, and the same lines read back."""
    lines = [x for x in itertools.islice(corpus_lines(40_000), 300) if f'"dialect":"{WIRE}"'.encode() in x]
    docs = [json.loads(x) for x in lines]
    traced = line_records(b"".join(lines), "generated", 1)
    return {"lines": len(lines), "providers": sorted({d["provider"] for d in docs}),
            "models": sorted({d["model"] for d in docs}),
            "raws": sorted({str(t["finish_raw"]) for d in docs for t in d["turns"]}),
            "read_back": sorted({(t.sequence.dialect, t.provider) for t in traced})}


def main(work: Path) -> None:
    """Each part on its own: one that fails says why in its place, the others still run."""
    result: dict[str, Any] = {"names": list(names())}
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "serve": serve, "check": lambda: check(work), "fuzz": fuzz, "corpus": corpus}
    for part, run in parts.items():
        try:
            result[part] = run()
        except Exception as exc:  # reported, so the test of that part says what broke
            result[part] = {"failed": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
