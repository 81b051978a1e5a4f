"""Conformance rows keyed by what they depend on (bench/conform/keys.py), and CI driving only the pairs
whose key moved plus a rotating sample, reusing the rest (bench/conform/reuse.py, `--reuse-unchanged`)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.cli import conform as conform_cli
from bench.conform.keys import SERVER_SOURCES, UNKEYED_IMPORTS, KeySources, script_closure
from bench.conform.pins import Pin
from bench.conform.report import read_record
from bench.conform.reuse import choose, rotating_sample, stale
from bench.conform.runner import DRIVERS, Driver
from bench.engine.discovery import load_file
from bench.engine.predicate import Predicate

ROOT = Path(__file__).resolve().parents[2]
A, B = (Driver(name, f"{name}port", "tests/conform/echo_driver.py", "openai-chat", "nothing to install",
               interpreter=sys.executable) for name in ("a", "b"))
TOOLS = [f"t{i}" for i in range(4)]

SEQ = """title: answers {tool}
kind: constructed
dialect: openai-chat
source: tests/conform
then: end
turns:
  - finish: stop
    content: calls-{tool}
"""

PORT = '''"""Stops at once."""
from bench import Stop, predicate


@predicate(reasons=["done"], rules={"first": "stops at once"})
def decide(turn, state):
    return Stop("done", ok=True, rule="first")
'''


def project(tmp_path: Path) -> Path:
    for folder in ("sequences", "predicates", "reports", "loops/a", "loops/b"):
        (tmp_path / folder).mkdir(parents=True)
    for tool in TOOLS:
        (tmp_path / "sequences" / f"calls-{tool}.yaml").write_text(SEQ.format(tool=tool), encoding="utf-8")
    for port in ("aport", "bport"):
        (tmp_path / "predicates" / f"{port}.py").write_text(PORT, encoding="utf-8")
    return tmp_path


def conform(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.setattr(conform_cli, "DRIVERS", {"a": A, "b": B})
    result = CliRunner().invoke(cli, ["conform", "a", "b", *args, "--jobs", "4",
                                      "--conform-dir", str(folder / "loops"),
                                      "--sequences", str(folder / "sequences"),
                                      "--predicates", str(folder / "predicates"),
                                      "--reports", str(folder / "reports")])
    assert result.exit_code == 0, result.output
    return result


def driven(folder: Path) -> set[tuple[str, str]]:
    """The (loop, sequence) pairs the echo driver ran since the last call (its logs, then cleared)."""
    out: set[tuple[str, str]] = set()
    for loop in ("a", "b"):
        log = folder / "loops" / loop / "runs"
        if log.exists():
            lines = log.read_text(encoding="utf-8").split()
            assert len(lines) == len(set(lines)), "a pair driven twice"
            out |= {(loop, seq) for seq in lines}
            log.unlink()
    return out


def rows(folder: Path, loop: str) -> dict[str, dict[str, object]]:
    record = read_record(folder / "reports", loop)
    assert record is not None
    return record["sequences"]


ALL = {(loop, f"calls-{t}") for loop in ("a", "b") for t in TOOLS}


@pytest.fixture(scope="module")
def fully_driven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project every pair of which a full drive (no --reuse-unchanged) drove once, shared by the tests."""
    folder = project(tmp_path_factory.mktemp("keyed"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        conform(folder, monkeypatch)
    assert driven(folder) == ALL
    return folder


@pytest.fixture
def keyed(fully_driven: Path, tmp_path: Path) -> Path:
    """A copy of the fully driven project, for one test to change."""
    return Path(shutil.copytree(fully_driven, tmp_path / "project"))


def keys_of(folder: Path) -> dict[tuple[str, str], str]:
    return {(loop, s): str(row["key"]) for loop in ("a", "b") for s, row in rows(folder, loop).items()}


def test_a_full_drive_keys_every_row_and_marks_none_reused(keyed: Path) -> None:
    keys = keys_of(keyed)
    assert set(keys) == ALL and len(set(keys.values())) == len(ALL)
    assert not any("reused" in r for loop in ("a", "b") for r in rows(keyed, loop).values())


def test_an_unchanged_tree_drives_only_the_rotating_sample_and_reuses_the_rest(
        keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = keys_of(keyed)
    # no sample: nothing driven, every row reused with its key, exit 0
    out = conform(keyed, monkeypatch, "--reuse-unchanged", "--sample", "0").output
    assert driven(keyed) == set()
    assert f"{len(ALL)} pair(s): 0 driven (none), {len(ALL)} reused with their key unchanged" in out
    assert all(row["reused"] is True and row["key"] == keys[("a", s)] for s, row in rows(keyed, "a").items())
    md = (keyed / "reports" / "conformance.md").read_text(encoding="utf-8")
    assert f"same (reused: key {keys[('b', 'calls-t3')]})" in md
    # the sample only, and its rows are no longer marked reused
    out = conform(keyed, monkeypatch, "--reuse-unchanged", "--sample", "3", "--sample-seed", "9").output
    sample = set(rotating_sample(keys, 3, 9).pairs)
    assert len(sample) == 3 and driven(keyed) == sample
    assert "3 driven (3 sample)" in out and "sample slice 1 of 3" in out
    assert {(loop, s) for loop in ("a", "b") for s, r in rows(keyed, loop).items() if "reused" not in r} == sample


def test_a_changed_port_file_drives_its_loop_s_pairs_only(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = keyed / "predicates" / "aport.py"
    port.write_text(port.read_text(encoding="utf-8") + "# a comment moves the port file's key\n", encoding="utf-8")
    out = conform(keyed, monkeypatch, "--reuse-unchanged", "--sample", "0").output
    assert driven(keyed) == {p for p in ALL if p[0] == "a"}
    assert f"{len(TOOLS)} driven ({len(TOOLS)} key changed)" in out and "[driven: key changed (port)]" in out


def test_a_row_without_a_key_is_driven_again(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record_file = keyed / "reports" / "conformance" / "b.json"
    record = json.loads(record_file.read_text(encoding="utf-8"))
    del record["sequences"]["calls-t1"]["key"]
    record_file.write_text(json.dumps(record), encoding="utf-8")
    out = conform(keyed, monkeypatch, "--reuse-unchanged", "--sample", "0").output
    assert driven(keyed) == {("b", "calls-t1")} and "1 driven (1 no key)" in out


def test_a_changed_sequence_file_drives_its_pairs_only(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seq = keyed / "sequences" / "calls-t2.yaml"
    seq.write_text(seq.read_text(encoding="utf-8").replace("title: answers", "title: says"), encoding="utf-8")
    conform(keyed, monkeypatch, "--reuse-unchanged", "--sample", "0")
    assert driven(keyed) == {("a", "calls-t2"), ("b", "calls-t2")}


def test_every_pair_is_in_exactly_one_slice_of_the_rotating_sample() -> None:
    pairs = [(f"loop{i % 7}", f"seq{i}") for i in range(103)]
    slices = [rotating_sample(pairs, 10, seed) for seed in range(100, 111)]
    assert {s.slices for s in slices} == {11}
    seen = [p for s in slices for p in s.pairs]
    assert sorted(seen) == sorted(pairs)
    assert rotating_sample(pairs, 10, 5).pairs == rotating_sample(pairs, 10, 5 + 11).pairs
    assert {p[0] for p in rotating_sample(pairs, 10, 0).pairs} != {"loop0"}, "a slice mixes loops"


def test_a_row_is_reused_only_when_it_was_run_its_key_is_the_same_and_it_passes() -> None:
    good = {"port": "p", "original": "p", "key": "k1"}
    assert stale(good, "k1", {}, "s") is None
    assert stale(good, "k2", {}, "s") == "key changed"
    assert stale({**good, "key": None}, "k1", {}, "s") == "no key"
    assert stale(None, "k1", {}, "s") == "no record"
    assert stale({"not_run": "skipped"}, "k1", {}, "s") == "no record"
    assert stale({**good, "driver_error": "exited 1"}, "k1", {}, "s") == "failing"
    assert stale({**good, "difference": "step 1: ..."}, "k1", {}, "s") == "failing"
    assert stale({**good, "difference": "step 1: ..."}, "k1", {"s": "why"}, "s") is None
    choice = choose({("x", "s"): "k2"}, {"x": {"sequences": {"s": good}}}, {}, {"x": ["pin"]},
                    rotating_sample([], 0, 0))
    assert choice.drive == {("x", "s"): "key changed (pin)"} and choice.reuse == {}


# ---------------------------------------------------------------- what the keys cover, on the real project


def test_a_driver_s_files_are_its_script_and_what_it_imports_from_beside_it() -> None:
    names = {str(p.relative_to(ROOT)) for p in script_closure(ROOT / DRIVERS["corecoder"].script)}
    assert names == {"conformance/drivers/corecoder_driver.py", "conformance/drivers/stopbench_driver.py"}
    names = {str(p.relative_to(ROOT)) for p in script_closure(ROOT / DRIVERS["claude_code"].script)}
    assert names == {"conformance/drivers/claude_code_driver.mjs", "conformance/drivers/lib/stub_tools.mjs"}
    names = {str(p.relative_to(ROOT)) for p in script_closure(ROOT / DRIVERS["vercel_ai_steps"].script)}
    assert "conformance/drivers/vercel_ai_driver.mjs" in names


def test_a_loop_s_pin_is_part_of_its_key() -> None:
    x, z = Driver("x", "x", "x.mjs", "openai-chat", "i"), Driver("z", "z", "z.py", "openai-chat", "i")
    pins = {"x": Pin("npm", ("a@1", "b@2")), "z": Pin("pypi", ("p[q]==3",))}
    before = KeySources(ROOT, ROOT / "predicates", pins=pins)
    after = KeySources(ROOT, ROOT / "predicates", pins={**pins, "x": Pin("npm", ("a@1", "b@3"))})
    assert after.pin(x) != before.pin(x)
    assert after.pin(z) == before.pin(z)
    beside = KeySources(ROOT, ROOT / "predicates", pins={**pins, "z": Pin("pypi", ("p[q]==3",), beside=("r==1",))})
    assert beside.pin(z) != before.pin(z)


def test_a_shared_rules_module_is_part_of_the_port_of_every_loop_that_loads_it(tmp_path: Path) -> None:
    folder = tmp_path / "predicates"
    folder.mkdir()
    for name in ("vercel_ai", "vercel_ai_steps", "_vercel_ai", "pi"):
        (folder / f"{name}.py").write_text((ROOT / "predicates" / f"{name}.py").read_text(encoding="utf-8"),
                                           encoding="utf-8")
    ports = {n: load_file(folder / f"{n}.py") for n in ("vercel_ai", "vercel_ai_steps", "pi")}
    assert all(isinstance(p, Predicate) for p in ports.values())
    before = KeySources(ROOT, folder)
    parts = {n: before.port(DRIVERS[n]) for n in ports}
    shared = folder / "_vercel_ai.py"
    shared.write_text(shared.read_text(encoding="utf-8") + "\n# moved\n", encoding="utf-8")
    after = KeySources(ROOT, folder)
    moved = {n for n in ports if after.port(DRIVERS[n]) != parts[n]}
    assert moved == {"vercel_ai", "vercel_ai_steps"}


def test_the_server_s_imports_are_keyed_or_said_why_not() -> None:
    keyed = {str(p.relative_to(ROOT)) for name in SERVER_SOURCES
             for p in ((ROOT / name).rglob("*.py") if (ROOT / name).is_dir() else [ROOT / name])}
    assert all((ROOT / name).exists() for name in SERVER_SOURCES), "a keyed server source has moved"
    imported: set[str] = set()
    for name in keyed:
        text = (ROOT / name).read_text(encoding="utf-8")
        for line in text.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("from", "import") and words[1].split(".")[0] == "bench":
                module = words[1]
                if words[0] == "from" and module == "bench" and len(words) >= 4:
                    module = f"bench.{words[3].rstrip(',')}"
                imported.add(module)

    def file_of(module: str) -> str | None:
        base = ROOT / module.replace(".", "/")
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return str(path.relative_to(ROOT))
        return None

    loose = sorted(m for m in imported if m not in UNKEYED_IMPORTS and file_of(m) not in keyed
                   and file_of(m) is not None)
    assert loose == [], f"the server imports {loose}: add them to SERVER_SOURCES or UNKEYED_IMPORTS with why"


def test_a_change_in_one_wire_s_package_drives_only_the_loops_that_speak_that_wire(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in SERVER_SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, root / name)
    chat_only = Driver("c", "reference", "x.py", "openai-chat", "pip install c")
    gemini_too = Driver("g", "reference", "x.py", "openai-chat", "pip install g", wires={"gemini": "gemini"})
    before = KeySources(root, ROOT / "predicates")
    parts = {d.name: before.parts(d)["server"] for d in (chat_only, gemini_too)}
    render = root / "bench" / "wires" / "gemini" / "render.py"
    render.write_text(render.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    after = KeySources(root, ROOT / "predicates")
    assert after.parts(chat_only)["server"] == parts["c"]
    assert after.parts(gemini_too)["server"] != parts["g"]
    shared = root / "bench" / "wires" / "base.py"
    shared.write_text(shared.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert KeySources(root, ROOT / "predicates").parts(chat_only)["server"] != parts["c"]


def test_a_driver_key_on_the_virtual_clock_ignores_the_bytecode_a_run_leaves_beside_the_clock(tmp_path: Path) -> None:
    # a clean clone has no conformance/clock/python/__pycache__; a checkout that ran a loop does, and its
    # .pyc differs by machine (source mtime): the key must be the same on both
    root = tmp_path / "root"
    shutil.copytree(ROOT / "conformance", root / "conformance", ignore=shutil.ignore_patterns("__pycache__"))
    driver = DRIVERS["pi"]
    clean = KeySources(root, ROOT / "predicates").driver(driver)
    cache = root / "conformance" / "clock" / "python" / "__pycache__"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "sitecustomize.cpython-311.pyc").write_bytes(b"\x00bytecode of this machine")
    assert KeySources(root, ROOT / "predicates").driver(driver) == clean
    (root / "conformance" / "clock" / "python" / "sitecustomize.py").write_text("# a changed clock\n")
    assert KeySources(root, ROOT / "predicates").driver(driver) != clean
