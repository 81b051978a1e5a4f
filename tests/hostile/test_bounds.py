"""Bounded resources: a compressed body is never inflated past its bound, and a long cell's report does
not grow with its steps. Each test measures the peak memory of what it runs (tracemalloc) and checks it."""

from __future__ import annotations

import base64
import dataclasses
import gc
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.engine.discovery import Loaded, load_file
from bench.engine.model import Sequence, Turn
from bench.engine.predicate import Predicate
from bench.engine.replay import replay
from bench.golden.run import Result, run
from bench.importers import import_capture
from bench.report.labels import LIST_RUNS, label, tool_list
from bench.report.page import build_page
from bench.report.page.data import STEPS_DRAWN, TURNS_DRAWN, unfold
from bench.report.write import write_reports
from bench.wires.capture import CaptureError, inflate
from tests.helpers import ROOT, seq, tools

MiB = 1 << 20


def gzip_of_zeros(n_mib: int) -> bytes:
    """A valid gzip member of `n_mib` MiB of zeros, built without holding them: after a full flush the
    compressor's output for the next MiB no longer depends on what came before, so the middle blocks are
    one block repeated; the trailer (CRC-32, size) is computed over the zeros a MiB at a time."""
    block = bytes(MiB)
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    middle = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    assert co.compress(block) + co.flush(zlib.Z_FULL_FLUSH) == middle
    last = (co.compress(block) + co.flush())[:-8]
    crc = 0
    for _ in range(n_mib):
        crc = zlib.crc32(block, crc)
    trailer = crc.to_bytes(4, "little") + ((n_mib * MiB) & 0xFFFFFFFF).to_bytes(4, "little")
    return first + middle * (n_mib - 2) + last + trailer


def test_the_gzip_builder_makes_the_gzip_it_says() -> None:
    import gzip

    assert gzip.decompress(gzip_of_zeros(5)) == bytes(5 * MiB)


def cassette_lines(body: bytes) -> Iterator[str]:
    yield "interactions:\n- request:\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
    yield '    body: \'{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}\'\n'
    yield "    headers: {}\n  response:\n    status: {code: 200, message: OK}\n"
    yield "    headers:\n      Content-Encoding:\n      - gzip\n    body:\n      string: !!binary |\n"
    encoded = base64.b64encode(body)
    for i in range(0, len(encoded), 76):
        yield "        " + encoded[i:i + 76].decode() + "\n"
    yield "version: 1\n"


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    """A 1.4 MB cassette whose response body is gzip of 1 GiB of zeros (the issue's case)."""
    path = tmp_path / "bomb.yaml"
    with path.open("w", encoding="utf-8") as fh:
        fh.writelines(cassette_lines(gzip_of_zeros(1024)))
    assert 1_000_000 < path.stat().st_size < 1_600_000
    return path


def test_a_gzip_bomb_in_a_cassette_is_refused_without_inflating_it(bomb: Path) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(CaptureError) as caught:
            import_capture(bomb, shown="bomb.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bomb.yaml: interactions[0] (cassette line 2).response.body: "), message
    assert "gzip" in message and "inflates" in message, message
    assert peak < 48 * MiB, f"peak {peak / MiB:.1f} MiB"  # the YAML text and its base64 are most of it


def test_a_gzip_bomb_in_a_cassette_ends_import_with_one_line_and_exit_2(bomb: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["import", str(bomb), "--out", str(tmp_path / "out.yaml")])
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "response.body" in lines[0] and "inflates" in lines[0], res.output
    assert not (tmp_path / "out.yaml").exists()


def test_a_gzip_body_within_its_bounds_is_read(tmp_path: Path) -> None:
    words = random.Random(0).choices(["stop", "loop", "tool", "call", "turn", "bench", "a", "the"], k=500_000)
    text = " ".join(words)  # 2.2 MB, past the ratio bound's floor, at a ratio text has (about 4)
    body = b'{"id": "c1", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, ' \
           b'"message": {"role": "assistant", "content": "' + text.encode() + b'"}, "finish_reason": "stop"}]}'
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    path = tmp_path / "fine.yaml"
    path.write_text("".join(cassette_lines(co.compress(body) + co.flush())), encoding="utf-8")
    result = import_capture(path)
    assert result.turns[0].turn.content == text


@pytest.mark.parametrize(("size", "limit", "ratio", "said"), [
    (3 * MiB, 2 * MiB, 10_000, "inflates past 2 MiB"),
    (3 * MiB, 64 * MiB, 100, "inflates past 100 times"),
])
def test_inflate_stops_at_either_bound_and_names_it(size: int, limit: int, ratio: int, said: str) -> None:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = co.compress(bytes(size)) + co.flush()
    with pytest.raises(CaptureError) as caught:
        inflate(packed, "f.yaml", "x.body", limit=limit, ratio=ratio, floor=MiB)
    assert said in str(caught.value) and str(caught.value).startswith("f.yaml: x.body: gzip body "), caught.value


def test_inflate_reads_every_member_of_a_multi_member_gzip() -> None:
    import gzip

    assert inflate(gzip.compress(b"one ") + gzip.compress(b"two"), "f", "w") == b"one two"


def test_inflate_names_a_broken_gzip_body() -> None:
    import gzip

    with pytest.raises(CaptureError, match=r"^f: w: gzip body: "):
        inflate(gzip.compress(b"some text")[:-6], "f", "w")


# ---------------------------------------------------------------- a long cell

def long_results(steps: int, *turns: Turn) -> tuple[list[Result], list[Sequence], list[Loaded]]:
    """`finish_only` (no cap of its own) on a sequence repeating `turns` for ever, to the safety cap `steps`."""
    loaded = [load_file(ROOT / "predicates" / "finish_only.py")]
    sequence = seq(*(turns or (tools("read_file"),)), then="repeat", sid="loop-forever")
    return list(run([sequence], loaded, None, steps)), [sequence], loaded


def report_peak(tmp: Path, results: list[Result], sequences: list[Sequence], loaded: list[Loaded]) -> int:
    """Peak bytes traced while the three reports of `results` are rendered and written into `tmp`."""
    gc.collect()
    tracemalloc.start()
    try:
        write_reports(tmp, results, [s.id for s in sequences], [p.name for p in loaded], catalogue=sequences,
                      loaded=loaded)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_cell_s_reports_do_not_grow_with_its_steps(tmp_path: Path) -> None:
    """Measured: before, 1.1 KB per step (107 MiB at 100,000 steps, MemoryError at 3,000,000); the page
    now draws a cell's first STEPS_DRAWN steps and says how many it left out."""
    peaks, pages = [], []
    for steps in (20_000, 60_000):
        results, sequences, loaded = long_results(steps)
        assert results[0].cell.outcome == "capped" and results[0].cell.n_steps == steps
        folder = tmp_path / str(steps)
        folder.mkdir()
        peaks.append(report_peak(folder, results, sequences, loaded))
        pages.append((folder / "index.html").read_text(encoding="utf-8"))
        del results
    assert peaks[1] < peaks[0] + 4 * MiB, [p / MiB for p in peaks]  # not 40,000 x 1.1 KB = 42 MiB more
    assert len(pages[1]) < len(pages[0]) + 1000
    raw = pages[1].split('<script type="application/json" id="stopbench-data">', 1)[1].split("</script>", 1)[0]
    (cell,) = unfold(json.loads(raw))["cells"].values()
    assert cell["elided"] == 60_000 - STEPS_DRAWN and len(cell["steps"]) == STEPS_DRAWN


def cycle() -> tuple[Turn, Turn]:
    """Two tool turns that answer each other for ever (the second's continue goes back to the first)."""
    return tools("read_file"), dataclasses.replace(tools("write_file"), after=(("continue", 0),))


def test_a_long_cycle_s_page_is_bounded_too(tmp_path: Path) -> None:
    """Two turns in turn (no run of identical steps to fold): the cap on steps drawn bounds it."""
    results, sequences, loaded = long_results(20_000, *cycle())
    write_reports(tmp_path, results, ["loop-forever"], ["finish_only"], catalogue=sequences, loaded=loaded)
    assert (tmp_path / "index.html").stat().st_size < 400_000


def test_a_long_cell_s_page_is_the_same_bytes_twice(tmp_path: Path) -> None:
    results, sequences, loaded = long_results(5_000)
    assert build_page(results, sequences, loaded) == build_page(results, sequences, loaded)


def test_a_long_replay_keeps_little_per_step() -> None:
    """The replay's own records of a long cell: equal decisions and tool lists shared past the first
    steps (before: 280 bytes a step)."""
    loaded = load_file(ROOT / "predicates" / "finish_only.py")
    assert isinstance(loaded, Predicate)
    sequence = seq(tools("read_file"), then="repeat", sid="loop-forever")
    gc.collect()
    tracemalloc.start()
    try:
        cell = replay(sequence, loaded, 50_000)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert cell.n_steps == 50_000
    assert held / 50_000 < 160, held / 50_000


# ---------------------------------------------------------------- a Parquet corpus that inflates

def parquet_bomb(path: Path, rows: int, value_bytes: int) -> None:
    """A corpus Parquet file of `rows` sequences whose one turn's content is the same `value_bytes`
    string: a dictionary column (one value, `rows` indices), so neither the test nor the file holds the
    rows x value_bytes a reader decoding it to plain strings makes."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    content = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["x" * value_bytes]))
    finish = pa.array(["stop"] * rows)
    turns = pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()),
                                     pa.StructArray.from_arrays([finish, finish, content],
                                                                ["finish", "finish_raw", "content"]))
    table = pa.table({"id": [f"s{i}" for i in range(rows)], "title": ["t"] * rows, "kind": ["recorded"] * rows,
                      "dialect": ["openai-chat"] * rows, "source": ["x"] * rows, "then": ["end"] * rows,
                      "turns": turns})
    pq.write_table(table, path, compression="zstd", row_group_size=rows)


@pytest.mark.parametrize(("rows", "value_bytes"), [(1024, MiB), (8192, 512 << 10)])
def test_a_parquet_corpus_that_inflates_past_its_bound_is_one_line_and_exit_2(tmp_path: Path, rows: int,
                                                                               value_bytes: int) -> None:
    """1 GiB and 4 GiB of strings from files of a few KB: refused before (the first, by the row group's
    own sizes) or while (the second: its dictionary page is small) the rows are decoded, in a child
    limited to 3 GiB of address space (pyarrow's threads reserve some)."""
    parquet_bomb(tmp_path / "bomb.parquet", rows, value_bytes)
    assert (tmp_path / "bomb.parquet").stat().st_size < 200_000
    (tmp_path / "predicates").mkdir()
    shutil.copy(ROOT / "predicates" / "finish_only.py", tmp_path / "predicates")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    res = subprocess.run([sys.executable, "-m", "bench", "corpus", "--no-entry-points", "--predicates", "predicates",
                          "bomb.parquet", "--out", "rep"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         check=False, env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=limit)
    assert "Traceback" not in res.stderr and res.returncode == 2, (res.returncode, res.stderr[-800:])
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("bomb.parquet: row group 1: ") and " inflate " in lines[0], lines


def test_a_sequence_of_many_turns_draws_a_bounded_page(tmp_path: Path) -> None:
    """50,000 turns (before: every one on the page, 61 MB at 1,000,000): the first TURNS_DRAWN turns
    and those the drawn steps use are drawn, the others counted."""
    turns = [tools("read_file")] * 49_999 + [Turn(finish="stop", finish_raw="stop", content="done")]
    sequence = seq(*turns, sid="many-turns")
    loaded = [load_file(ROOT / "predicates" / "finish_only.py")]
    results = list(run([sequence], loaded, None, 60_000))
    assert results[0].cell.n_steps == 50_000
    page = build_page(results, [sequence], loaded)
    assert len(page) < 800_000, len(page)
    data = json.loads(page.split('<script type="application/json" id="stopbench-data">', 1)[1].split("</script>", 1)[0])
    drawn = data["sequences"][0]
    assert len(drawn["turns"]) == TURNS_DRAWN and drawn["n_turns"] == 50_000
    assert drawn["turns_elided"] == 50_000 - TURNS_DRAWN


def test_a_long_cell_s_page_draws_its_elisions_in_a_browser(tmp_path: Path) -> None:
    """The drill-down of a 3,000-step cell on a 3,000-turn sequence, in headless Chromium: the steps and
    turns tables end with the rows saying what was left out, the stepper counts every turn, no script error."""
    from tests.page.test_browser import CHROMIUM_FLAGS, by, errors, find_browser, no_browser

    found = find_browser()
    if found is None:
        no_browser("no chromium and chromedriver on the PATH")
    selenium = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    sequence = seq(*([tools("read_file")] * 2_999 + [Turn(finish="stop", finish_raw="stop", content="done")]),
                   sid="many-turns")
    loaded = [load_file(ROOT / "predicates" / "finish_only.py")]
    write_reports(tmp_path, list(run([sequence], loaded, None, 5_000)), ["many-turns"], ["finish_only"],
                  catalogue=[sequence], loaded=loaded)
    assert found is not None
    opts = selenium.ChromeOptions()
    opts.binary_location = found[0]
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = selenium.Chrome(service=Service(found[1]), options=opts)
    try:
        drv.get((tmp_path / "index.html").as_uri())
        drv.find_element(by("ID"), "cell-many-turns--finish_only").click()
        assert len(drv.find_elements(by("CSS_SELECTOR"), "#drill-steps tbody tr")) == STEPS_DRAWN + 1
        assert drv.find_element(by("ID"), "drill-elided").text.startswith(
            f"… {3_000 - STEPS_DRAWN} more step(s), not drawn")
        assert drv.find_element(by("ID"), "drill-turns-elided").text.startswith(
            f"… {3_000 - TURNS_DRAWN} more turn(s), not drawn")
        drv.find_element(by("ID"), "drill-walk").click()
        assert "3000 turn(s)" in drv.find_element(by("ID"), "st-body").text
        assert errors(drv) == []
    finally:
        drv.quit()


def test_a_long_cycle_s_label_is_bounded(tmp_path: Path) -> None:
    """Two tools in turn for 20,000 steps: no run to fold, so the label (the matrix cell's title, the
    page's drill-down, decision-table.md) writes the first LIST_RUNS runs and counts the rest (before:
    every name, 1 MB at 100,000 steps, twice on the page)."""
    results, _, _ = long_results(20_000, *cycle())
    assert results[0].cell.tools_run[:4] == ("read_file", "write_file", "read_file", "write_file")
    text = label(results[0].cell)
    assert len(text) < 30_000, len(text)
    assert text.endswith(f",… {20_000 - LIST_RUNS} more run(s)]"), text[-80:]
    assert tool_list(["a", "a", "b"]) == "[a x2,b]"  # a short list as before
