"""`stopbench show SEQUENCE --live NAME` steps through the live cell of reports/live/NAME.json: for
each step the turn served, what the server observed in the next request, the decision it inferred,
how each answered call was known, then the requirements broken (judged against the sequence as it
is now, as `stopbench run` does).

The record is written with check's own writer from observations built here (a step the server could
not read plainly carries its detail), not copied from any output."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from bench.catalogue.document import dump_sequence
from bench.check.report import write_live
from bench.check.runner import LiveRun
from bench.cli import cli
from bench.engine.judge import judge
from bench.serve.observe import Observed, observed_cell
from tests.check.conftest import ANSWER, CALL, small_sequence

CUT = {"finish": "length", "content": "The answer is"}


def _project(tmp_path: Path) -> Path:
    seq = small_sequence("call-then-cut", [CALL, CUT], require={"ok": False})
    dump_sequence(seq, tmp_path / "sequences" / "call-then-cut.yaml")
    observed = [Observed(1, 0, "continue", run=(0,), known=((0, "executed"),), detail="merged two user messages"),
                Observed(2, 1, "stop")]
    cell = observed_cell(seq, "mine@live", observed, True, "answered")
    run = LiveRun(seq, cell.with_violations(judge(seq, cell)), None, 0, tuple(observed), 0.0)
    write_live(tmp_path / "reports", "mine", ["python", "loop.py"], [run])
    return tmp_path


def _show(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["show", "--sequences", str(tmp_path / "sequences"), "--reports",
                                    str(tmp_path / "reports"), *args], catch_exceptions=False)


def test_show_live_steps_through_the_cell_turn_request_decision_and_violations(tmp_path: Path) -> None:
    r = _show(_project(tmp_path), "call-then-cut", "--live", "mine")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "mine@live (reports/live/mine.json: python loop.py): stop:answered@2 ok [read_file] ⚠ reported " \
           "success on a cut-off reply" in out.replace(str(tmp_path) + "/", "")
    assert 'step 1: served turn 0: finish=tool_calls (raw "tool_calls")' in out
    assert "  observed: the next request ran read_file (call 0 executed); the server noted: merged two user " \
           "messages" in out
    assert "  inferred: continue" in out
    assert 'step 2: served turn 1: finish=length (raw "length") content="The answer is"' in out
    assert "  observed: no further request" in out
    assert '  inferred: stop, ok=true, reason "answered"' in out
    assert "violates ok: false at step 2: reported success on a cut-off reply: the loop reported success" in out
    assert out.index("step 1:") < out.index("step 2:") < out.index("violates")


def test_show_live_without_the_record_or_the_cell_is_one_line_and_exit_2(tmp_path: Path) -> None:
    project = _project(tmp_path)
    missing = _show(project, "call-then-cut", "--live", "other")
    assert missing.exit_code == 2 and "no live record" in missing.stderr and "Traceback" not in missing.output
    assert missing.stdout == ""  # nothing shown before the record is known to be there
    dump_sequence(small_sequence("never-run", [ANSWER]), project / "sequences" / "never-run.yaml")
    absent = _show(project, "never-run", "--live", "mine")
    assert absent.exit_code == 2 and "has no cell for never-run" in absent.stderr
