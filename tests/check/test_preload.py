"""``check --preload``: a Python program's imports are loaded once and each run is a fork, with the
verdicts of a plain run; a run's crash, exit status, signal, folder, environment and module state are its
own; a program that is not Python is refused; what a module reads from the environment at import it reads
in the preloading process (a base URL that leads nowhere), as docs/check.md says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.check.preload import NOWHERE, Zygote, python_target, zygote_env
from bench.cli import cli
from tests.check.conftest import ANSWER, FAKE, fake, small_sequence

PROGRAMS = FAKE.parent

EACH_ITS_OWN = f"""
import json, os, signal, sys
sys.path.insert(0, {str(PROGRAMS)!r})
from chat import post, result
post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
     {{"model": "m", "messages": [{{"role": "user", "content": "x"}}]}})
seen = (f"cwd={{os.getcwd()}} leak={{os.environ.get('LEAK')}} module={{getattr(json, 'LEAK', None)}} "
        f"argv={{sys.argv[1:]}}")
os.chdir("/")
os.environ["LEAK"] = "1"
json.LEAK = True
how = os.environ["STOPBENCH_SEQUENCE"]
if how == "truncated":
    os.kill(os.getpid(), signal.SIGKILL)
if how == "answer-repeat":
    sys.exit(5)
if how == "call-then-answer":
    raise RuntimeError("boom in the program")
result({{"ok": True, "reason": seen}})
"""


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)


def cells(r: Result) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    return {str(row.pop("sequence")): {k: v for k, v in row.items() if k != "seconds"} for row in rows}


@pytest.fixture
def each_its_own(tmp_path: Path) -> list[str]:
    script = tmp_path / "each_its_own.py"
    script.write_text(EACH_ITS_OWN, encoding="utf-8")
    return [sys.executable, str(script), "an-argument"]


@pytest.mark.parametrize("mode", [("tools", "ok"), ("answer",), ("exit", "4")], ids=lambda m: m[0])
def test_preloading_gives_the_verdicts_of_a_plain_run(catalogue: Path, mode: tuple[str, ...]) -> None:
    plain = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--", *fake(*mode))
    preloaded = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "2", "--preload", "--",
                      *fake(*mode))
    assert plain.exit_code == preloaded.exit_code, preloaded.output
    if mode[0] == "answer":  # its final text is the environment it saw: the server's ports differ
        for row in (*cells(plain).values(), *cells(preloaded).values()):
            row.pop("decisions")
    assert cells(plain) == cells(preloaded) and len(cells(plain)) == 4


def test_a_crash_an_exit_or_a_signal_in_a_preloaded_run_is_that_runs_own(catalogue: Path, tmp_path: Path,
                                                                         each_its_own: list[str]) -> None:
    plain = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--", *each_its_own)
    r = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--preload", "--", *each_its_own)
    got = cells(r)
    assert got["truncated"]["reason"] == "killed by SIGKILL"
    assert got["answer-repeat"]["reason"] == "exit 5"
    assert got["call-then-answer"]["reason"] == "exit 1"
    assert got["answer-once"]["ok"] is True and got == cells(plain)


def test_each_run_has_its_own_folder_environment_arguments_and_modules(catalogue: Path, tmp_path: Path,
                                                                       each_its_own: list[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run changes its folder, environment and an imported module; -j 1, so one run follows
    another from the same preloaded process: none sees what the one before did."""
    monkeypatch.chdir(tmp_path)
    r = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--preload", "-s", "answer-once",
              "--", *each_its_own)
    again = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--preload", "-s",
                  "answer-once", "-s", "truncated", "--", *each_its_own)
    assert r.exit_code == 0, r.output
    assert cells(r)["answer-once"]["reason"] == f"cwd={tmp_path} leak=None module=None argv=['an-argument']"
    assert cells(again)["answer-once"] == cells(r)["answer-once"]


def test_modules_the_first_runs_import_late_are_loaded_for_the_runs_after(catalogue: Path, tmp_path: Path) -> None:
    """An SDK imports much of itself when its client is built: the first runs say what they imported,
    and the preloading process loads it for the later ones (-j 1: the runs come one after another)."""
    (tmp_path / "late.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "lazy.py").write_text(
        f"import os, sys\nsys.path.insert(0, {str(PROGRAMS)!r})\nfrom chat import post, result\n"
        "def build():\n    import late\n\nloaded = 'late' in sys.modules\nbuild()\n"
        "post(os.environ['OPENAI_BASE_URL'] + '/chat/completions', {'model': 'm', 'messages': []})\n"
        "result({'ok': True, 'reason': f'late loaded before: {loaded}'})\n", encoding="utf-8")
    r = check("--sequences", str(catalogue), "--json", "--no-report", "-j", "1", "--preload", "--", sys.executable,
              str(tmp_path / "lazy.py"))
    reasons = [json.loads(line)["reason"] for line in r.stdout.splitlines()]
    assert reasons[0] == "late loaded before: False" and reasons[-1] == "late loaded before: True", reasons


def test_a_module_run_with_dash_m_is_preloaded_from_its_packages_main(catalogue: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "loop_pkg").mkdir()
    (tmp_path / "loop_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "loop_pkg" / "__main__.py").write_text(EACH_ITS_OWN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = ["--sequences", str(catalogue), "--json", "--no-report", "-s", "answer-once", "-s", "truncated", "--",
            sys.executable, "-m", "loop_pkg", "an-argument"]
    preloaded = check(*argv[:-5], "--preload", *argv[-5:])
    assert cells(preloaded)["answer-once"]["reason"] == f"cwd={tmp_path} leak=None module=None argv=['an-argument']"
    assert cells(preloaded) == cells(check(*argv))
    target = python_target([sys.executable, "-m", "loop_pkg"])
    assert target is not None
    with Zygote(target, cwd=tmp_path, env=zygote_env(small_sequence("s", [ANSWER]), None)) as zygote:
        assert {"json", "signal"} <= set(zygote.loaded)  # the imports of loop_pkg/__main__.py ...
        assert zygote.failed == ["chat"]  # ... found on a path the program adds as it runs: left to each run


def test_a_program_that_is_not_python_is_refused_with_one_line(catalogue: Path) -> None:
    r = check("--sequences", str(catalogue), "--no-report", "--preload", "--", "sh", "-c", "exit 0")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "--preload runs Python programs" in r.stderr


def test_preloading_is_refused_for_live_fuzzing_with_one_line(catalogue: Path) -> None:
    r = check("--fuzz", "1", "--preload", "--", *fake("answer"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--preload" in r.stderr


def test_a_preloaded_program_that_dies_at_import_stops_the_check_with_its_error_once(catalogue: Path,
                                                                                     tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import not_a_module_anywhere\n", encoding="utf-8")
    r = check("--sequences", str(catalogue), "--no-report", "--preload", "--", sys.executable, str(script))
    assert r.exit_code == 2, r.output
    assert r.output.count("No module named 'not_a_module_anywhere'") == 1


def test_a_module_that_reads_the_environment_at_import_reads_the_preloading_processs(
        catalogue: Path, tmp_path: Path) -> None:
    """The documented limit: the base URL read at import leads nowhere; the run's own is in os.environ."""
    (tmp_path / "settings.py").write_text("import os\nBASE = os.environ['OPENAI_BASE_URL']\n", encoding="utf-8")
    (tmp_path / "reads.py").write_text(
        f"import os, sys\nsys.path.insert(0, {str(PROGRAMS)!r})\nimport settings\nfrom chat import post, result\n"
        "post(os.environ['OPENAI_BASE_URL'] + '/chat/completions', {'model': 'm', 'messages': []})\n"
        "result({'ok': True, 'reason': settings.BASE})\n", encoding="utf-8")
    argv = ["--sequences", str(catalogue), "--json", "--no-report", "-s", "answer-once", "--", sys.executable,
            str(tmp_path / "reads.py")]
    assert cells(check(*argv[:-3], "--preload", *argv[-3:]))["answer-once"]["reason"] == f"{NOWHERE}/v1"
    assert cells(check(*argv))["answer-once"]["reason"] != f"{NOWHERE}/v1"
