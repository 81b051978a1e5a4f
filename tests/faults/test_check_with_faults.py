"""``stopbench check --faults``: the server injects the recipe and the verdict knows it.

The done-when of issue 22 items 3 and 4: a stream cut after 3 frames makes the naive loop fail its
requirement and the reference loop meet it; a 429 with Retry-After is waited out by a loop on the
official ``openai`` client (the wait measured) and judged so, and a loop that resends at once is
shown as not waiting; ``--trials 5`` on a loop with a random component shows pass^5 and the cells
that flip."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner, Result

from bench.catalogue.document import dump_sequence
from bench.cli import cli
from tests.check.conftest import small_sequence

PROGRAMS = Path(__file__).parent / "programs"
LONG = {"finish": "stop", "content": "The failing test was caused by an off-by-one error in the loop bound; "
                                     "it is fixed now."}
SHORT = {"finish": "stop", "content": "Done."}


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)


@pytest.fixture
def sequences(tmp_path: Path) -> Path:
    folder = tmp_path / "sequences"
    for seq in (small_sequence("long-answer", [LONG], require={"stops_within": 2}),
                small_sequence("short-answer", [SHORT], require={"stops_within": 2}),
                small_sequence("answer-ok", [LONG], require={"ok": True})):
        dump_sequence(seq, folder / f"{seq.id}.yaml")
    return folder


@pytest.mark.slow  # two loops on the official client, about 15 s on two loaded cores
def test_a_stream_cut_after_3_frames_fails_the_naive_loop_and_not_the_reference_loop(sequences: Path,
                                                                                    tmp_path: Path) -> None:
    loop = f"{sys.executable} -m bench.loops"
    r = check("--sequences", str(sequences), "-s", "long-answer", "--faults", "cut-after-3",
              "--reports", str(tmp_path / "r"), "-c", f"naive={loop} naive", "-c", f"reference={loop} reference")
    assert r.exit_code == 1, r.output
    assert ("naive@live long-answer: reported success on an answer a fault broke (breaks no_success_on_fault at "
            "step 1): reported success (no_tool_calls) on an answer the fault recipe broke: cut after 3 frames"
            in r.stdout)
    assert "reference@live: 1 of 1 sequence(s) meet their requirements" in r.stdout
    assert "naive@live: 0 of 1 sequence(s) meet their requirements" in r.stdout
    record = json.loads((tmp_path / "r" / "live" / "naive.json").read_text())
    assert record["faults"] == {"recipe": "cut-after-3", "seed": 0}
    (injected,) = record["cells"][0]["injected"]
    assert (injected["step"], injected["kind"]) == (1, "stream_cut")




@pytest.mark.slow  # the official client waits out a 1 s Retry-After, twice over
def test_a_429_with_retry_after_is_waited_out_by_the_openai_client_and_a_hasty_resend_is_shown(
        sequences: Path, tmp_path: Path) -> None:
    program = f"{sys.executable} {PROGRAMS / 'openai_retrying.py'}"
    r = check("--sequences", str(sequences), "-s", "answer-ok", "--faults", "rate-limited",
              "--reports", str(tmp_path / "r"), "-c", f"patient={program}", "-c", f"hasty={program} hasty")
    assert r.exit_code == 1, r.output
    patient = json.loads((tmp_path / "r" / "live" / "patient.json").read_text())["cells"][0]
    hasty = json.loads((tmp_path / "r" / "live" / "hasty.json").read_text())["cells"][0]
    assert patient["violations"] == [] and patient["ok"] is True
    (wait,) = patient["injected"]
    assert (wait["status"], wait["retry_after"]) == (429, 1)
    assert 1.0 <= wait["waited"] < 5.0  # the client slept the Retry-After before it asked again
    assert [d["action"] for d in patient["decisions"]] == ["resend", "stop"]
    assert [(v["requirement"], v["step"]) for v in hasty["violations"]] == [("retry_after", 2)]
    assert hasty["injected"][0]["waited"] < 1.0
    assert "patient@live: 1 of 1 sequence(s) meet their requirements" in r.stdout
    assert ("hasty@live answer-ok: asked again before Retry-After was over (breaks retry_after at step 2): asked "
            "again " in r.stdout)


@pytest.mark.slow  # ten runs of a small program
def test_five_trials_of_a_loop_with_a_coin_show_pass5_and_the_flipping_cell(sequences: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COIN_FILE", str(tmp_path / "coin"))
    junit = tmp_path / "junit.xml"
    r = check("--sequences", str(sequences), "-s", "long-answer", "-s", "short-answer", "--faults", "cut-after-3",
              "--trials", "5", "--reports", str(tmp_path / "r"), "--junit", str(junit), "--name", "coin",
              "-j", "1", "--",  # the coin counts runs in a shared file: one run at a time keeps the count in order
              sys.executable, str(PROGRAMS / "coin_loop.py"))
    assert r.exit_code == 1, r.output
    # the coin (random.Random(run number)) is naive on runs 0, 2, 6 (long-answer's trials 1, 2, 4)
    assert "| long-answer | 2/5 flips |" in r.stdout
    assert "| short-answer | 5/5 |" in r.stdout
    assert "coin@live: pass^5 1 of 2 sequence(s) (50%); 1 flip between trials" in r.stdout
    assert "coin@live long-answer (verdict flips): trial 1: broken, " in r.stdout
    assert "fault seeds by trial: 0, 1, 2, 3, 4 (the recipe's seed + the trial's index)" in r.stdout
    record = json.loads((tmp_path / "r" / "live" / "coin.json").read_text())
    assert [t["trial"] for t in record["trials"]] == [1, 2, 3, 4, 5]
    assert record["pass_k"] == {"k": 5, "passed": {"long-answer": 2, "short-answer": 5}, "pass_k": 1,
                                "sequences": 2, "flipping": ["long-answer"]}
    assert record["trial_seeds"] == [0, 1, 2, 3, 4]
    assert record["cells"] == record["trials"][0]["cells"]
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    names = sorted(c.get("name") or "" for c in cases)
    assert names == sorted(f"{s} [trial {t}]" for s in ("long-answer", "short-answer") for t in range(1, 6))


def test_json_output_prints_one_line_per_cell_and_trial_with_what_was_injected(sequences: Path) -> None:
    from tests.check.conftest import fake

    r = check("--sequences", str(sequences), "-s", "short-answer", "--faults", "slow-stream", "--trials", "2",
              "--no-report", "--json", "--", *fake("answer"))
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["sequence"], x["trial"]) for x in lines] == [("short-answer", 1), ("short-answer", 2)]
    assert all(x["injected"][0]["done"][0].startswith("paced: first frame after 400 ms") for x in lines)
