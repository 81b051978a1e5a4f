"""`stopbench check` on small loop programs written apart from the bench, as a user would write them
(tests/check/programs/kept/), each verdict checked by hand against its sequence's ``require:``.

They were written and run in a temporary folder before any of them was added here, not tuned to
pass: one of them (bad_request_no_tools.py) found a bench fault (the words of a broken requirement
named the scripted turn, not the one served), fixed with its own test in test_requirement_words.

- rename_ids.py renumbers every call id before sending the history back: its results are matched
  by position, every call known as run.
- refuse_words.py refuses calls that change things in its own words, in a tool result without
  ``is_error``: with the bench's tools in use and no execution of the call, the call failed.
- bad_request.py sends ``{"messages": 5}`` after a reply with calls: the provider's 400 is noted on
  the step, the run is judged (not a crash), the report written; bad_request_no_tools.py also
  offers no tools at first, so the calls are withheld and it reports success on an empty reply.
- leaves_children.py leaves a helper running in a session of its own: it is ended with the run.
- no_cap.py asks for ever on a repeating sequence: capped, ``stops_within`` broken.
- responses_chain.py carries its conversation by ``previous_response_id`` only: it is followed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench.cli import cli
from tests.helpers import ROOT

KEPT = Path(__file__).parent / "programs" / "kept"


def check(tmp_path: Path, program: str, *ids: str) -> tuple[int, str, dict[str, dict[str, Any]]]:
    """Run check on `program` over the shipped sequences `ids`: exit code, stdout, cells by sequence."""
    args = ["check", "--sequences", str(ROOT / "sequences"), "--reports", str(tmp_path), "--name", "kept"]
    for i in ids:
        args += ["-s", i]
    r = CliRunner().invoke(cli, [*args, "--", sys.executable, str(KEPT / program)], catch_exceptions=False)
    cells = json.loads((tmp_path / "live" / "kept.json").read_text(encoding="utf-8"))["cells"]
    return r.exit_code, r.stdout, {c["sequence"]: c for c in cells}


def broken(cell: dict[str, Any]) -> list[str]:
    return [v["requirement"] for v in cell["violations"]]


def test_renamed_call_ids_are_matched_and_the_verdicts_stand(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "rename_ids.py", "chat-tool-rounds", "chat-length-text-cut")
    assert code == 0, out
    rounds = cells["chat-tool-rounds"]
    assert (rounds["outcome"], rounds["ok"], rounds["tools_run"]) == ("stopped", True, ["read_file", "edit_file",
                                                                                         "run_tests"])
    assert [d.get("known") for d in rounds["decisions"][:3]] == [[[0, "executed"]]] * 3
    cut = cells["chat-length-text-cut"]  # it reports ok only on 'stop': the cut-off reply is not success
    assert (cut["ok"], cut["reason"], broken(cut)) == (False, "length", [])


def test_a_call_refused_in_the_loops_own_words_is_failed_not_run(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "refuse_words.py", "anthropic-tool-use-rounds")
    assert code == 0, out
    cell = cells["anthropic-tool-use-rounds"]
    assert (cell["tools_run"], cell["tools_failed"], cell["ok"]) == (["read_file"], ["bash"], True)
    assert cell["decisions"][1]["known"] == [[0, "executed"]]  # known: bash never reached the tool endpoint


def test_a_mistyped_request_is_the_providers_400_noted_and_judged(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "bad_request.py", "chat-tool-rounds")
    assert code == 1 and "Traceback" not in out
    cell = cells["chat-tool-rounds"]
    assert (cell["outcome"], cell["ok"], cell["reason"]) == ("stopped", False, "http 400")
    assert broken(cell) == ["ok: true"]  # it gave up openly (ok false): its unanswered call is not dropped
    assert "a request was refused: messages: expected an array, got 5" in out


def test_success_on_the_reply_served_without_calls_is_named_as_served(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "bad_request_no_tools.py", "chat-tool-rounds")
    assert code == 1
    assert broken(cells["chat-tool-rounds"]) == ["answer_on: [3]"]
    assert "tool calls withheld: the request offered no tools" in out
    assert "reported success on an empty reply" in out and "still calls tools" not in out


def test_a_helper_left_in_its_own_session_is_ended_with_the_run(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids.txt"
    monkeypatch.setenv("KEPT_PIDS", str(pids))
    code, out, cells = check(tmp_path, "leaves_children.py", "chat-tool-rounds")
    assert code == 0, out
    assert broken(cells["chat-tool-rounds"]) == []
    pid = int(pids.read_text(encoding="utf-8").split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_loop_without_a_cap_is_capped_and_breaks_stops_within(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "no_cap.py", "chat-repeat-same-call")
    cell = cells["chat-repeat-same-call"]
    assert code == 1
    assert (cell["outcome"], broken(cell)) == ("capped", ["stops_within: 10"])
    assert "capped@200 [bash ×200]" in out


def test_a_conversation_carried_by_previous_response_id_is_followed(tmp_path: Path) -> None:
    code, out, cells = check(tmp_path, "responses_chain.py", "responses-function-call-rounds")
    assert code == 0, out
    cell = cells["responses-function-call-rounds"]
    assert (cell["ok"], cell["tools_run"], cell["steps"]) == (True, ["shell", "shell"], 3)
