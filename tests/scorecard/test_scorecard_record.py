"""Recording a framework: check runs its program from its folder with its interpreter and its extra
variables; the record holds the check's cells, the framework, and a reproducing command, no machine path."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.errors import UnusableInput
from bench.scorecard.framework import load_framework
from bench.scorecard.install import install, is_installed
from tests.check.conftest import catalogue  # noqa: F401 (the small catalogue fixture)


def test_record_of_the_fake_framework(fake_framework: tuple[Path, Path], catalogue: Path,  # noqa: F811
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    args = ["scorecard", "record", "fake", "--frameworks", str(frameworks), "--framework-dir", str(fwdir),
            "--records", str(project / "records"), "-s", "answer-once", "-s", "call-then-answer", "-s", "truncated"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = (project / "records" / "fake.json").read_text(encoding="utf-8")
    rec = json.loads(text)
    assert [c["sequence"] for c in rec["cells"]] == ["answer-once", "call-then-answer", "truncated"]
    met = {c["sequence"]: not c["violations"] and c["outcome"] != "crashed" for c in rec["cells"]}
    assert met == {"answer-once": True, "call-then-answer": True, "truncated": False}
    assert rec["framework"]["version"] == "1.0" and rec["reproduce"]["make"] == "make scorecard-fake"
    assert rec["words"] == {"truncated": ["reported success on a cut-off reply"]}
    assert rec["command"][-2:] == ["$FRAMEWORK_DIR/fake/bin/python", "loop.py"]
    assert '"$FRAMEWORK_DIR"/fake/bin/python loop.py' in rec["reproduce"]["check"]
    assert "--bench-tools --timeout 60 --no-report --" in rec["reproduce"]["check"]  # no -j: the machine's
    assert str(fwdir) not in text and str(project) not in text
    assert CliRunner().invoke(cli, args).exit_code == 0  # the same program gives the same bytes
    assert (project / "records" / "fake.json").read_text(encoding="utf-8") == text


def test_record_refuses_a_framework_not_installed(fake_framework: tuple[Path, Path], tmp_path: Path) -> None:
    frameworks, _ = fake_framework
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--frameworks", str(frameworks),
                                      "--framework-dir", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "make framework-install FRAMEWORK=fake" in result.output


def test_install_is_stamped_and_redone_when_the_pins_change(fake_framework: tuple[Path, Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    frameworks, fwdir = fake_framework
    ran: list[list[str]] = []
    monkeypatch.setattr("bench.scorecard.install._run", lambda argv, cwd=None: ran.append(argv))
    fw = load_framework(frameworks / "fake")
    assert is_installed(fwdir, fw) and install(fwdir, fw) is False and ran == []
    data = json.loads((fw.folder / "framework.json").read_text(encoding="utf-8"))
    data["install"] = ["fake==2.0"]
    (fw.folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    fw2 = load_framework(frameworks / "fake")
    assert not is_installed(fwdir, fw2)
    assert install(fwdir, fw2) is True and ran[-1][-1] == "fake==2.0" and is_installed(fwdir, fw2)


@pytest.mark.parametrize(("field", "value", "words"), [
    ("language", "ruby", "language"), ("dialects", ["klingon"], "dialects: unknown klingon"),
    ("name", "other", "must be the folder's name"), ("install", "fake", "install")])
def test_a_bad_framework_json_is_one_line(fake_framework: tuple[Path, Path], field: str, value: object,
                                          words: str) -> None:
    folder = fake_framework[0] / "fake"
    data = json.loads((folder / "framework.json").read_text(encoding="utf-8"))
    data[field] = value
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UnusableInput, match=words):
        load_framework(folder)


def test_verify_reruns_the_sample_and_names_a_moved_cell(fake_framework: tuple[Path, Path], catalogue: Path,  # noqa: F811
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    where = ["--frameworks", str(frameworks), "--framework-dir", str(fwdir), "--records", str(project / "records")]
    assert CliRunner().invoke(cli, ["scorecard", "record", "fake", *where]).exit_code == 0
    sample = ["-s", "answer-once", "-s", "truncated"]
    result = CliRunner().invoke(cli, ["scorecard", "verify", "fake", *sample, *where])
    assert result.exit_code == 0, result.output
    path = project / "records" / "fake.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    for c in rec["cells"]:
        if c["sequence"] == "truncated":
            c["violations"] = []  # as if the committed record said the framework met it
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = CliRunner().invoke(cli, ["scorecard", "verify", "fake", *sample, *where])
    assert result.exit_code == 1
    assert "fake truncated: violations differs from the committed record" in result.output
    assert "1 of 2 cell(s) as recorded" in result.output


def test_update_rerecords_the_sequences_given_and_keeps_the_other_cells(
        fake_framework: tuple[Path, Path], catalogue: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """After a bench fix that changes how a few sequences are served, `record --update -s ...`
    re-runs only those and puts their cells into the committed record, in a whole record's order;
    the reproduce line stays the whole record's."""
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    where = ["--frameworks", str(frameworks), "--framework-dir", str(fwdir), "--records", str(project / "records")]
    assert CliRunner().invoke(cli, ["scorecard", "record", "fake", *where]).exit_code == 0
    path = project / "records" / "fake.json"
    whole = path.read_text(encoding="utf-8")
    rec = json.loads(whole)
    for c in rec["cells"]:
        if c["sequence"] in ("truncated", "answer-once"):
            c["reason"] = "an older bench's"
    rec["cells"] = [c for c in rec["cells"] if c["sequence"] != "answer-repeat"]
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--update", "-s", "truncated",
                                      "-s", "answer-repeat", *where])
    assert result.exit_code == 0, result.output
    updated = json.loads(path.read_text(encoding="utf-8"))
    assert [c["sequence"] for c in updated["cells"]] == ["answer-once", "answer-repeat", "call-then-answer",
                                                         "truncated"]
    reasons = {c["sequence"]: c["reason"] for c in updated["cells"]}
    assert reasons["answer-once"] == "an older bench's" and reasons["truncated"] != "an older bench's"
    assert updated["reproduce"] == json.loads(whole)["reproduce"]


def test_update_needs_sequences_and_a_record(fake_framework: tuple[Path, Path], catalogue: Path,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    frameworks, fwdir = fake_framework
    project = catalogue.parent
    monkeypatch.chdir(project)
    where = ["--frameworks", str(frameworks), "--framework-dir", str(fwdir), "--records", str(project / "records")]
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--update", *where])
    assert result.exit_code == 2 and "--update re-records the sequences given with -s" in result.output
    result = CliRunner().invoke(cli, ["scorecard", "record", "fake", "--update", "-s", "truncated", *where])
    assert result.exit_code == 2 and "no record to update" in result.output


def test_a_framework_that_asks_for_the_virtual_clock_is_checked_on_it(fake_framework: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    """smolagents backs off 120 to 240 s on the real clock after a 429 (Retrying, wait 60 x 2 x (1 +
    jitter)): within --timeout 120 its chat-transient-errors-after-tools run had no verdict. Its
    framework.json asks for check's --virtual-clock, and the record's reproduce line says so."""
    from bench.scorecard.record import check_argv
    folder = fake_framework[0] / "fake"
    data = json.loads((folder / "framework.json").read_text(encoding="utf-8"))
    assert "--virtual-clock" not in check_argv(load_framework(folder), fake_framework[1], tmp_path, jobs=2, timeout=60)
    data["virtual_clock"] = True
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    fw = load_framework(folder)
    argv = check_argv(fw, fake_framework[1], tmp_path, jobs=2, timeout=60)
    assert argv[argv.index("--bench-tools") - 1] == "--virtual-clock"
    assert fw.metadata()["virtual_clock"] is True
    data["virtual_clock"] = "yes"
    (folder / "framework.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UnusableInput, match="virtual_clock"):
        load_framework(folder)


def test_a_capped_run_keeps_one_request_past_its_steps() -> None:
    """How many requests a loop that never stops gets in between the cap and being stopped is the
    machine's timing (201, 202 and 205 seen for one program): the record keeps the one past the cap."""
    from bench.scorecard.record import steady
    from tests.scorecard.conftest import cell
    capped = {**cell("s"), "outcome": "capped", "steps": 200, "requests": 205}
    assert steady(capped)["requests"] == 201 and steady({**capped, "requests": 201}) == {**capped, "requests": 201}
    stopped = {**cell("s"), "steps": 3, "requests": 7}
    assert steady(stopped) == stopped


SLEEPER = '''
import os, pathlib, time
pathlib.Path({pids!r}, str(os.getpid())).write_text("")
time.sleep(120)
'''


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _running_with(text: str) -> list[int]:
    """The processes still running whose command line holds `text`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in line and _alive(int(proc.name)):
            found.append(int(proc.name))
    return found


def test_sigterm_ends_a_recording_with_one_line_and_no_program_left_running(
        fake_framework: tuple[Path, Path], catalogue: Path, tmp_path: Path) -> None:  # noqa: F811
    frameworks, fwdir = fake_framework
    project, pids = catalogue.parent, tmp_path / "pids"
    pids.mkdir()
    (frameworks / "fake" / "loop.py").write_text(SLEEPER.format(pids=str(pids)), encoding="utf-8")
    command = [sys.executable, "-m", "bench", "scorecard", "record", "fake", "--frameworks", str(frameworks),
               "--framework-dir", str(fwdir), "--records", str(project / "records"), "-j", "2",
               "-s", "answer-once", "-s", "truncated"]
    recording = subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline and recording.poll() is None:
        time.sleep(0.05)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 2, "the two runs did not start"
    recording.send_signal(signal.SIGTERM)
    _, err = recording.communicate(timeout=60)
    assert recording.returncode == 2, err
    assert err.strip().splitlines()[-1] == "interrupted (SIGTERM): the framework's runs ended, nothing written"
    assert "Traceback" not in err
    assert [pid for pid in started if _alive(pid)] == []
    assert _running_with(str(fwdir)) == []  # the check, whose command names the program, ended too
    assert not (project / "records").exists() or list((project / "records").iterdir()) == []
