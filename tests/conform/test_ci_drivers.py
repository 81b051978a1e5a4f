"""What CI drives: every driver of DRIVERS but those whose record is reused, each installed by
`make conformance` from its one pin (bench/conform/pins.py), which its port's PIN agrees with."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.conform.campaign import driven
from bench.conform.pins import PINS, pins_markdown
from bench.conform.runner import DRIVERS, Driver

ROOT = Path(__file__).resolve().parents[2]
PINNED = re.compile(r"[^\s'\"]+?(?:==|@)\d[^\s'\"]*")
"""A pinned requirement: name==version (PyPI) or name@version (npm)."""


def installs(loops: list[str], folder: Path, *, dry: bool = True) -> subprocess.CompletedProcess[str]:
    """`make conformance-installs` for `loops` under CONFORM_DIR `folder`: with `dry`, what it would
    run (make -n)."""
    return subprocess.run(["make", *(["-n"] if dry else []), "--no-print-directory", "conformance-installs",
                           f"CONFORM_LOOPS={' '.join(loops)}", f"CONFORM_DIR={folder}"],
                          cwd=ROOT, capture_output=True, text=True, check=False)


def port_pin(predicate: str) -> str | None:
    """What a port's file declares it read (its ``PIN``, a :class:`bench.Source`) in words, or None."""
    spec = importlib.util.spec_from_file_location(f"_pin_of_{predicate}", ROOT / "predicates" / f"{predicate}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pin = getattr(module, "PIN", None)
    return None if pin is None else " ".join((pin.repo, pin.ref, pin.version, pin.release))


def test_ci_drives_every_driver_but_those_whose_record_is_reused() -> None:
    out = CliRunner().invoke(cli, ["conform", "--list-driven"])
    assert out.exit_code == 0
    assert out.output.split() == [n for n, d in DRIVERS.items() if not d.reused]
    fake = {"a": Driver("a", "a", "a.py", "openai-chat", "x"),
            "b": Driver("b", "b", "b.py", "openai-chat", "x", reused="driven once from a checkout")}
    assert driven(fake) == ["a"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_every_driven_loop_is_installed_from_its_one_pin(tmp_path: Path) -> None:
    assert set(driven(DRIVERS)) <= set(PINS)
    proc = installs(driven(DRIVERS), tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in driven(DRIVERS):
        pin = PINS[name]
        # the prefix ends the path (`{name} ` for npm, `{name}/` for a venv): vercel_ai is not vercel_ai_steps
        lines = [line for line in proc.stdout.splitlines()
                 if (f"{tmp_path}/{name} " in line or f"{tmp_path}/{name}/" in line) and " install " in line]
        assert len(lines) == 1, f"{name}: {lines}"
        assert lines[0].endswith(" " + pin.words()), f"{name}: {lines[0]}"
        assert ("npm install" if pin.registry == "npm" else "pip install") in lines[0]
        assert DRIVERS[name].install == pin.install_line()


def test_the_makefile_and_the_drivers_write_no_pin_of_their_own() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert PINNED.findall(makefile) == []
    runner = (ROOT / "bench/conform/runner.py").read_text(encoding="utf-8")
    assert re.findall(r"[\"'](?:pip|npm) install", runner) == []  # a registry loop's line is its pin's


def test_each_port_s_pin_names_the_release_its_loop_is_installed_at() -> None:
    checked = 0
    for name in driven(DRIVERS):
        pin = port_pin(DRIVERS[name].predicate)
        if pin is None:
            continue
        package = PINS[name].packages[0]
        bare, version = re.split(r"==|@(?=\d)", package.split("/")[-1])
        bare = bare.split("[")[0]
        assert bare in pin and version in pin, f"{name}: the port's PIN {pin!r}, installed: {package}"
        checked += 1
    assert checked >= 9


def test_the_pins_script_prints_a_loop_s_words_and_the_loops_of_a_registry() -> None:
    script = [sys.executable, str(ROOT / "bench/conform/pins.py")]
    run = subprocess.run([*script, "hermes"], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout) == (0, "'hermes-agent[anthropic]==0.19.0'\n")
    run = subprocess.run([*script, "--loops", "npm"], capture_output=True, text=True, check=False)
    assert run.stdout.split() == [n for n, p in PINS.items() if p.registry == "npm"]
    run = subprocess.run([*script, "no_such_loop"], capture_output=True, text=True, check=False)
    assert run.returncode == 2 and "no pin for no_such_loop" in run.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_driver_without_a_pin_stops_the_installs_before_anything_runs(tmp_path: Path) -> None:
    proc = installs(["no_such_loop"], tmp_path, dry=False)  # nothing to install: it only says why it stops
    assert proc.returncode == 2
    assert "the driver no_such_loop (bench/conform/runner.py DRIVERS) has no pin in bench/conform/pins.py" \
        in proc.stderr + proc.stdout


def test_the_docs_table_of_pins_has_a_row_per_pinned_loop_with_every_package() -> None:
    table = pins_markdown().splitlines()
    assert table[:2] == ["| loop | registry | installed | pinned beside |", "| --- | --- | --- | --- |"]
    rows = {line.split(" | ")[0].strip("| `"): line for line in table[2:]}
    assert list(rows) == list(PINS)
    for name, pin in PINS.items():
        assert all(f"`{p}`" in rows[name] for p in (*pin.packages, *pin.beside)), rows[name]
