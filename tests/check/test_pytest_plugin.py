"""The pytest plugin, run the way a user runs it (pytester): the shipped example test passes, the
catalogue folder comes from the ini option, sequences come by id, path or object, and a broken
requirement fails with the requirement, its step, the served turn and what the loop did."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.catalogue.load import load_catalogue
from bench.check.runner import scripts_tool_results
from tests.helpers import ROOT

pytest_plugins = ["pytester"]

EXAMPLES = ROOT / "examples"


def ini(pytester: pytest.Pytester, folder: Path) -> None:
    pytester.makeini(f"[pytest]\nstopbench_sequences = {folder}\n")


def test_the_example_test_of_a_loop_on_the_openai_client_passes(pytester: pytest.Pytester) -> None:
    for name in ("openai_loop.py", "test_openai_loop.py"):
        shutil.copy(EXAMPLES / name, pytester.path / name)
    ini(pytester, ROOT / "sequences")
    result = pytester.runpytest("-p", "no:cacheprovider", "-q")
    chat = [s for s in load_catalogue(ROOT / "sequences").sequences if s.dialect == "openai-chat"]
    normal = [s for s in chat if "normal" in s.tags]
    scripted = [s for s in chat if scripts_tool_results(s)]
    result.assert_outcomes(passed=len(chat) + len(normal) - len(scripted), xfailed=1, skipped=len(scripted))
    assert len(normal) >= 2 and not [s for s in normal if scripts_tool_results(s)]
    assert {s.id for s in scripted} >= {"chat-polling-progress", "chat-polling-stalls"}


NAIVE_TEST = '''
import openai, pytest
from bench.loops.clients import conversation
from bench.loops.naive import run_naive

@pytest.mark.parametrize("stopbench_sequence", ["truncated"], indirect=True)
def test_naive(stopbench_live):
    client = openai.OpenAI(base_url=stopbench_live.openai_base_url, api_key=stopbench_live.api_key)
    conv = conversation("openai-chat", client, stopbench_live.model, stopbench_live.prompt, stopbench_live.tools)
    result = run_naive(conv, lambda name, args: "ok")
    stopbench_live.assert_meets_requirements(ok=result.ok, reason=result.reason)
'''


def test_a_broken_requirement_fails_with_the_step_the_turn_and_what_the_loop_did(pytester: pytest.Pytester,
                                                                                 catalogue: Path) -> None:
    ini(pytester, catalogue)
    pytester.makepyfile(test_naive=NAIVE_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: loop@live on truncated: reported success on a cut-off reply (breaks `ok: false` at "
        "step 1): the loop reported success (no_tool_calls) on a turn that is not an answer",
        "*served turn 0: finish length (raw 'length'), content 'The answer is'",
        "*the loop: stopped: ok=True, reason 'no_tool_calls'",
    ])
    assert "bench/check/explain.py" not in result.stdout.str()  # __tracebackhide__


def test_the_marker_selects_by_tag_dialect_and_id_from_the_ini_folder(pytester: pytest.Pytester,
                                                                      catalogue: Path) -> None:
    ini(pytester, catalogue)
    pytester.makepyfile(test_sel='''
import pytest

@pytest.mark.stopbench_catalogue()
def test_all(stopbench_sequence):
    pass

@pytest.mark.stopbench_catalogue(ids=["truncated", "answer-once"])
def test_ids(stopbench_sequence):
    pass

@pytest.mark.stopbench_catalogue(dialects=["anthropic"])
def test_none(stopbench_sequence):
    pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    out = result.stdout.str()
    for sid in ("answer-once", "answer-repeat", "call-then-answer", "truncated"):
        assert f"test_all[{sid}]" in out
    assert "test_ids[answer-once]" in out and "test_ids[truncated]" in out and "test_ids[call-then" not in out
    # no anthropic sequence: pytest's empty parameter set, one skipped test, nothing served
    assert "test_none[NOTSET]" in out and "test_none[answer" not in out


def test_a_sequence_comes_by_id_by_path_or_as_an_object(pytester: pytest.Pytester, catalogue: Path) -> None:
    ini(pytester, catalogue)
    pytester.makepyfile(test_kinds=f'''
import pytest
from bench.catalogue.load import parse_sequence

BUILT = parse_sequence({{"title": "t", "kind": "constructed", "dialect": "openai-chat", "source": "a test",
                        "turns": [{{"finish": "stop", "content": "hi"}}]}}, "built-here")

@pytest.mark.parametrize("stopbench_sequence", ["truncated", "{catalogue / 'answer-once.yaml'}", BUILT],
                         indirect=True)
def test_kinds(stopbench_live, stopbench_sequence):
    assert stopbench_live.sequence is stopbench_sequence
    assert stopbench_live.openai_base_url.endswith("/v1")
    assert stopbench_live.cell().outcome == "running"  # nothing asked yet: no step

def test_factory(stopbench_serve):
    a, b = stopbench_serve("truncated"), stopbench_serve("answer-once")
    assert a.url != b.url
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_kinds?truncated?*PASSED*", "*test_kinds?answer-once?*PASSED*",
                                 "*test_kinds?built-here?*PASSED*"])


def test_an_unknown_id_or_a_missing_folder_is_a_usage_error(pytester: pytest.Pytester, catalogue: Path) -> None:
    ini(pytester, catalogue)
    pytester.makepyfile(test_bad='''
import pytest

@pytest.mark.stopbench_catalogue(ids=["no-such"])
def test_x(stopbench_sequence):
    pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    out = result.stdout.str()
    assert f"stopbench_catalogue: no sequence no-such in {catalogue}" in out and "Traceback" not in out


def test_a_loop_started_as_a_subprocess_gets_the_check_variables_from_env(pytester: pytest.Pytester,
                                                                         catalogue: Path) -> None:
    ini(pytester, catalogue)
    pytester.makepyfile(test_sub=f'''
import json, subprocess, sys
import pytest

@pytest.mark.stopbench_catalogue(ids=["answer-once"])
def test_sub(stopbench_live, tmp_path):
    out = tmp_path / "result.json"
    subprocess.run([sys.executable, {str(ROOT / "tests/check/programs/fake_loop.py")!r}, "answer"],
                   env=stopbench_live.env(out), check=True)
    result = json.loads(out.read_text())
    cell = stopbench_live.assert_meets_requirements(ok=result["ok"], reason=result["reason"])
    assert (cell.outcome, cell.reason, cell.n_steps) == ("stopped", "answered", 1)
''')
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
