"""A conformance run over several loops (bench.conform.campaign) and `stopbench conform`'s exit codes:
a run that compared nothing is never clean."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench.cli import cli
from bench.cli import conform as conform_cli
from bench.conform.campaign import (
    DriverRun,
    Plan,
    exit_code,
    load_ports,
    nothing_run,
    plan,
    run_driver,
    select_sequences,
    unavailable,
)
from bench.conform.runner import Driver
from bench.errors import UnusableInput
from tests.serve.serving import make_sequence

ROOT = Path(__file__).resolve().parents[2]
FAKE_SCRIPT = str(ROOT / "tests" / "serve" / "fake_driver.py")
PY = Driver("py", "pyport", FAKE_SCRIPT, "openai-chat", "pip install py==1")
NODE = Driver("nodeloop", "nodeport", "x.mjs", "openai-chat", "npm install nodeloop", interpreter="node")
NO_INTERPRETER = Driver("weird", "weirdport", "x.zz", "openai-chat", "get it", interpreter="no-such-interpreter-zz")
DRIVERS = {d.name: d for d in (PY, NODE)}

SEQ_YAML = """title: {title}
kind: constructed
dialect: {dialect}
source: tests/conform
then: end
turns:
  - finish: stop
    content: answer
"""

PORT = '''"""A port that stops at once."""
from bench import Stop, predicate


@predicate(reasons=["done"], rules={"first": "stops at once"})
def decide(turn, state):
    return Stop("done", ok=True, rule="first")
'''


# ---------------------------------------------------------------- the plan


def test_a_python_loop_is_available_when_its_venv_python_exists(tmp_path: Path) -> None:
    python = tmp_path / "py" / "bin" / "python"
    assert unavailable(PY, python) == f"no Python at {python} (pip install py==1)"
    python.parent.mkdir(parents=True)
    python.write_text("", encoding="utf-8")
    assert unavailable(PY, python) is None


def test_an_interpreter_loop_needs_its_interpreter_on_path_and_its_npm_prefix(tmp_path: Path) -> None:
    why = unavailable(NO_INTERPRETER, tmp_path)
    assert why is not None and why.startswith("no no-such-interpreter-zz on PATH")


def test_with_no_driver_named_the_plan_targets_the_installed_loops_only(tmp_path: Path) -> None:
    (tmp_path / "py" / "bin").mkdir(parents=True)
    (tmp_path / "py" / "bin" / "python").write_text("", encoding="utf-8")
    p = plan([], run_all=False, loop=None, folder=tmp_path, drivers=DRIVERS)
    assert p.targets == ("py",) and not p.explicit and p.blocked == {}
    assert set(p.why_not) == {"nodeloop"}


def test_a_named_driver_that_is_not_installed_is_blocked(tmp_path: Path) -> None:
    p = plan(["py"], run_all=False, loop=None, folder=tmp_path, drivers=DRIVERS)
    assert p.runnable == () and list(p.blocked) == ["py"]
    every = plan([], run_all=True, loop=None, folder=tmp_path, drivers=DRIVERS)
    assert set(every.blocked) == {"py", "nodeloop"}


def test_loop_override_needs_exactly_one_driver(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="exactly one driver"):
        plan([], run_all=False, loop=Path(sys.executable), folder=tmp_path, drivers=DRIVERS)
    p = plan(["py"], run_all=False, loop=Path(sys.executable), folder=tmp_path, drivers=DRIVERS)
    assert p.runnable == ("py",) and p.loops["py"] == Path(sys.executable)


def test_an_unknown_sequence_id_or_an_empty_catalogue_cannot_be_run() -> None:
    one = make_sequence([{"finish": "stop", "content": "x"}], sid="one")
    assert [s.id for s in select_sequences([one], [])] == ["one"]
    with pytest.raises(UnusableInput, match="no sequence \\(and no driver\\) named nope"):
        select_sequences([one], ["nope"])
    with pytest.raises(UnusableInput, match="no usable sequence"):
        select_sequences([], [])


def test_a_port_that_does_not_load_is_an_error_only_for_a_driver_about_to_run(tmp_path: Path) -> None:
    (tmp_path / "pyport.py").write_text("this is not python\n", encoding="utf-8")
    assert load_ports(tmp_path, [], DRIVERS)["py"].predicate is None
    with pytest.raises(UnusableInput, match=r"pyport\.py does not load"):
        load_ports(tmp_path, ["py"], DRIVERS)


def test_a_port_s_not_driven_sequences_are_read_and_never_run(tmp_path: Path) -> None:
    (tmp_path / "pyport.py").write_text(
        "from bench import Decision, State, Stop, Turn, predicate\n"
        "CONFORMANCE_NOT_DRIVEN = {'one': 'the driver cannot inject it'}\n"
        "@predicate(not_driven=CONFORMANCE_NOT_DRIVEN)\n"
        "def decide(turn: Turn, state: State) -> Decision:\n"
        "    return Stop('done', ok=True, rule='r')\n", encoding="utf-8")
    port = load_ports(tmp_path, ["py"], DRIVERS)["py"]
    assert dict(port.not_driven) == {"one": "the driver cannot inject it"}
    one = make_sequence([{"finish": "stop", "content": "x"}], sid="one")
    run = run_driver(PY, [one], Path(sys.executable), port, root=ROOT, timeout=60)
    assert (run.results, dict(run.not_driven)) == ((), {"one": "the driver cannot inject it"})
    assert "1 not driven" in run.summary()


# ---------------------------------------------------------------- the verdict


def _run(results: int, failing: int = 0, driver: Driver = PY) -> DriverRun:
    from bench.conform.runner import ConformResult
    from bench.engine.model import Cell
    res = tuple(ConformResult(f"s{i}", Cell(f"s{i}", "x", "running", ()), None, None, {}, (), 0.0)
                for i in range(results))
    return DriverRun(driver, res, {}, res[:failing])


def test_the_verdict_table() -> None:
    ran = Plan(("py",), True, {}, {})
    assert exit_code(ran, [_run(2)]) == 0
    assert exit_code(ran, [_run(2, failing=1)]) == 1
    assert exit_code(ran, [_run(0)]) == 2, "every sequence skipped: nothing compared"
    assert exit_code(Plan((), False, {}, {"py": "no Python"}), []) == 2, "no loop installed"
    assert exit_code(Plan(("py",), True, {}, {"py": "no Python"}), []) == 2, "the named loop is missing"
    implicit = Plan(("py", "nodeloop"), False, {}, {})
    assert exit_code(implicit, [_run(1), _run(0, driver=NODE)]) == 0, "a loop not asked for may skip everything"
    explicit = Plan(("py", "nodeloop"), True, {}, {})
    assert exit_code(explicit, [_run(1), _run(0, driver=NODE)]) == 2
    assert nothing_run(explicit, [_run(1), _run(0, driver=NODE)]) == (
        "nothing run by nodeloop: every chosen sequence is one it is not run on")


# ---------------------------------------------------------------- the command


def _project(tmp_path: Path, dialect: str = "openai-chat") -> Path:
    (tmp_path / "predicates").mkdir()
    (tmp_path / "predicates" / "pyport.py").write_text(PORT, encoding="utf-8")
    (tmp_path / "sequences").mkdir()
    (tmp_path / "sequences" / "one-answer.yaml").write_text(SEQ_YAML.format(title="one answer", dialect=dialect),
                                                           encoding="utf-8")
    return tmp_path


def _conform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drivers: dict[str, Driver], *args: str) -> Result:
    monkeypatch.setattr(conform_cli, "DRIVERS", drivers)
    return CliRunner().invoke(cli, ["conform", *args, "--conform-dir", str(tmp_path / "loops"),
                                    "--sequences", str(tmp_path / "sequences"),
                                    "--predicates", str(tmp_path / "predicates"),
                                    "--reports", str(tmp_path / "reports")])


def test_conform_with_no_loop_installed_exits_2_and_writes_nothing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    result = _conform(_project(tmp_path), monkeypatch, DRIVERS)
    assert result.exit_code == 2, result.output
    assert "nothing could be run: no original loop is installed" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "reports").exists()


def test_conform_naming_a_loop_that_is_not_installed_exits_2(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    result = _conform(_project(tmp_path), monkeypatch, DRIVERS, "py")
    assert result.exit_code == 2
    assert f"py: cannot run: no Python at {tmp_path / 'loops' / 'py' / 'bin' / 'python'}" in result.stderr


def test_conform_when_every_sequence_is_skipped_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skipper = Driver("py", "pyport", FAKE_SCRIPT, "openai-chat", "x", skip={"gemini": "no Gemini client"})
    result = _conform(_project(tmp_path, dialect="gemini"), monkeypatch, {"py": skipper}, "py", "--python",
                      sys.executable)
    assert result.exit_code == 2, result.output
    assert "nothing could be run: every chosen sequence is one the chosen loops are not run on" in result.stderr


def test_conform_with_a_port_that_does_not_load_exits_2_in_one_line(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    (project / "predicates" / "pyport.py").write_text("import no_such_module_zz\n", encoding="utf-8")
    result = _conform(project, monkeypatch, {"py": PY}, "py", "--python", sys.executable)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(f"the port {project / 'predicates' / 'pyport.py'} does not load")


def test_conform_with_an_unknown_sequence_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _conform(_project(tmp_path), monkeypatch, {"py": PY}, "py", "no-such-seq", "--python", sys.executable)
    assert result.exit_code == 2 and "no sequence (and no driver) named no-such-seq" in result.stderr


def test_conform_that_runs_and_matches_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _conform(_project(tmp_path), monkeypatch, {"py": PY}, "py", "--python", sys.executable)
    assert result.exit_code == 0, result.output
    assert "py: 1 sequence(s) run, 0 not run, 0 differ from the port, 0 of them explained; 0 unexplained" \
        in result.stdout


def test_conform_writes_its_records_and_report_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    (project / "reports" / "conformance.md").mkdir(parents=True)  # a folder where the report should go
    result = _conform(project, monkeypatch, {"py": PY}, "py", "--python", sys.executable)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(project / "reports" / "conformance.md") in result.stderr
    assert not (project / "reports" / "conformance" / "py.json").exists(), "no record without its report"


def test_conform_keeps_each_run_s_wall_time_in_conform_dir_not_in_the_reports(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    result = _conform(project, monkeypatch, {"py": PY}, "py", "--python", sys.executable)
    assert result.exit_code == 0, result.output
    timings = json.loads((project / "loops" / "timings.json").read_text(encoding="utf-8"))
    assert list(timings) == ["py one-answer"] and timings["py one-answer"] > 0
    assert "1 run(s) in" in result.stdout and "slowest:" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[lines.index(next(x for x in lines if x.endswith("slowest:"))) + 1].endswith(" s  py one-answer")
    record = (project / "reports" / "conformance" / "py.json").read_text(encoding="utf-8")
    assert "seconds" not in record and str(timings["py one-answer"]) not in record
