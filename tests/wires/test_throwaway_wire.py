"""A wire added as a package of its own is served everywhere with no other edit: the replay server, a
sequence file, ``stopbench check`` (the program gets the wire's variables and model), a fault (the wire's
error body and retry hint), the fuzz strategies and the corpus generator each ask the wire.

The throwaway wire (tests/wires/throwaway_wire.py) is installed in a temporary folder as a package with a
``.dist-info`` whose entry point registers it (the group ``stopbench.wires``, :mod:`bench.wires.registry`),
and a fresh Python with that folder on its path runs tests/wires/throwaway_probe.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.wires import registry

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WIRE = "throwaway-json"


def install(site: Path) -> None:
    """The throwaway wire as an installed distribution in `site`: its package and its entry point."""
    package = site / "throwaway_wire"
    package.mkdir(parents=True)
    shutil.copy(HERE / "throwaway_wire.py", package / "__init__.py")
    info = site / "throwaway_wire-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: throwaway-wire\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{WIRE} = throwaway_wire:WIRE\n", encoding="utf-8")


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("throwaway")
    install(work / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work / "site"), str(ROOT)]),
           "THROWAWAY_SEEN": str(work / "seen.json"), "THROWAWAY_REAL_ENDPOINT": "https://throwaway.example"}
    out = subprocess.run([sys.executable, str(HERE / "throwaway_probe.py"), str(work)], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def part(probe: dict[str, Any], name: str) -> dict[str, Any]:
    """What the probe's part `name` found; the test fails with its error when it failed."""
    found: dict[str, Any] = probe[name]
    assert "failed" not in found, found["failed"]
    return found


def test_the_registry_finds_a_wire_registered_by_another_package_after_the_bench_s_own(
        probe: dict[str, Any]) -> None:
    assert probe["names"][-1] == WIRE
    assert WIRE not in registry.names()  # this process has no such package


def test_the_server_answers_on_the_wire_s_path_in_its_shape_streams_and_refuses_in_its_error_body(
        probe: dict[str, Any]) -> None:
    serve = part(probe, "serve")
    status, body = serve["one"]
    assert status == 200 and body["throwaway"]["why"] == "call"
    assert body["throwaway"]["calls"] == [{"ref": "c1", "tool": "read_file", "args": "{}"}]
    assert body["throwaway"]["id"].startswith("tw-")
    status, media, lines = serve["two"]
    assert (status, media.split(";")[0]) == (200, "application/x-ndjson")
    assert json.loads(lines[-1])["throwaway"] | {"id": ""} == {"id": "", "model": "m", "said": "all done",
                                                               "calls": [], "why": "done", "end_turn": None}
    status, body = serve["bad"]
    assert status == 400 and set(body) == {"oops"} and "history" in body["oops"]["why"]
    assert serve["records"] == [WIRE, WIRE, WIRE]
    assert serve["observed"] == ["continue", "stop"]


def test_check_gives_the_program_the_wire_s_variables_and_model_and_removes_what_would_send_it_elsewhere(
        probe: dict[str, Any]) -> None:
    check = part(probe, "check")
    assert check["exit"] == 0, check["output"]
    assert check["cells"] == [["throwaway-rounds", []]]
    seen = check["seen"]
    assert seen["endpoint"].startswith("http://127.0.0.1:") and seen["endpoint"].endswith("/throwaway/v1")
    assert seen["token"] == "sk-stopbench-not-a-real-key"
    assert (seen["model"], seen["dialect"], seen["real_endpoint"]) == ("throwaway-mini-1", WIRE, None)
    assert seen["whys"] == ["call", "done"]


def test_a_status_fault_answers_in_the_wire_s_error_body_with_its_words_headers_and_retry_hint(
        probe: dict[str, Any]) -> None:
    (error,) = part(probe, "check")["seen"]["errors"]
    assert error["status"] == 429
    assert error["body"] == {"oops": {"why": "Throwaway says: slow down.", "what": "slow_down", "wait_s": 1}}
    headers = {k.lower(): v for k, v in error["headers"].items()}
    assert (headers["x-throwaway-quota"], headers["retry-after"]) == ("0", "1")


def test_the_fuzz_strategies_draw_sequences_of_the_wire_with_its_finish_strings_and_end_turn(
        probe: dict[str, Any]) -> None:
    fuzz = part(probe, "fuzz")
    assert fuzz["dialect"] == fuzz["end_turn"] == WIRE
    assert "call" in fuzz["raws"] and set(fuzz["raws"]) <= {"done", "call", "cut", "blocked"}


def test_the_corpus_generator_draws_the_wire_s_model_and_finish_strings_and_the_reader_reads_them_back(
        probe: dict[str, Any]) -> None:
    corpus = part(probe, "corpus")
    assert corpus["lines"] > 0
    assert (corpus["providers"], corpus["models"]) == (["throwaway-labs"], ["throwaway-mini-1"])
    assert {"done", "call"} <= set(corpus["raws"]) <= {"done", "call", "cut", "blocked", "None"}
    assert corpus["read_back"] == [[WIRE, "throwaway-labs"]]
