"""The workflow `stopbench init` writes and the Action (action.yml): stopbench installed from where this copy
came from (PEP 610's direct_url.json), never from an index it is not on; every action pinned by commit; the
least permissions; no persisted credentials; a Python that pip may install into."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from packaging.requirements import Requirement

import bench.cli.init as init_module
from bench.cli import cli
from bench.init_templates.workflow import SLOT, Source, render, source_of
from tests.helpers import ROOT

WORKFLOW = ".github/workflows/stopbench.yml"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
PINNED = re.compile(r"^\s*-?\s*uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}  # v\d+(\.\d+)*$")

VCS = json.dumps({"url": "https://github.com/someone/stopbench", "vcs_info": {"vcs": "git", "commit_id": COMMIT,
                                                                               "requested_revision": "main"}})
WHEEL_FILE = json.dumps({"url": "file:///home/me/stopbench/dist/stopbench-0.1.0-py3-none-any.whl",
                         "archive_info": {"hashes": {"sha256": "ab" * 32}}})


@pytest.mark.parametrize("direct_url,requirement", [
    (VCS, f"stopbench @ git+https://github.com/someone/stopbench@{COMMIT}"),
    (json.dumps({"url": "https://x-token:s3cret@github.com/someone/stopbench",
                 "vcs_info": {"vcs": "git", "commit_id": COMMIT}}),
     f"stopbench @ git+https://github.com/someone/stopbench@{COMMIT}"),
    (json.dumps({"url": "ssh://git@github.com/someone/stopbench.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT},
                 "subdirectory": "tools"}),
     f"stopbench @ git+ssh://git@github.com/someone/stopbench.git@{COMMIT}#subdirectory=tools"),
    (json.dumps({"url": "https://example.org/stopbench-0.1.0-py3-none-any.whl",
                 "archive_info": {"hashes": {"sha256": "ab" * 32}}}),
     f"stopbench @ https://example.org/stopbench-0.1.0-py3-none-any.whl#sha256={'ab' * 32}"),
    (None, "stopbench==0.1.0"),
    (WHEEL_FILE, None),
    (json.dumps({"url": "file:///home/me/stopbench", "dir_info": {"editable": True}}), None),
    (json.dumps({"url": "file:///home/me/stopbench", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}), None),
    ("{not json", None),
], ids=["git-https", "git-credentials-dropped", "git-ssh-subdirectory", "wheel-url", "index", "local-wheel",
        "editable-folder", "local-clone", "unreadable"])
def test_the_requirement_is_where_this_copy_came_from_or_none_when_ci_cannot_reach_it(
        direct_url: str | None, requirement: str | None) -> None:
    assert source_of(direct_url, "0.1.0").requirement == requirement
    if requirement is not None:
        assert Requirement(requirement).name == "stopbench"  # what pip reads (PEP 508)


def test_a_local_clone_is_named_as_one_without_its_path() -> None:
    local = json.dumps({"url": "file:///home/me/src/stopbench", "vcs_info": {"vcs": "git", "commit_id": COMMIT}})
    assert source_of(local, "0.1.0") == Source(None, "a local clone (stopbench)")


def written_workflow(folder: Path, monkeypatch: pytest.MonkeyPatch, direct_url: str | None) -> tuple[str, str]:
    """`stopbench init` in `folder` as a stopbench installed from `direct_url`: the workflow's text, init's stderr."""
    monkeypatch.setattr(init_module, "installed_source", lambda: source_of(direct_url, "0.1.0"))
    result = CliRunner().invoke(cli, ["init", str(folder)])
    assert result.exit_code == 0, result.stderr
    return (folder / WORKFLOW).read_text(encoding="utf-8"), result.stderr


def install_step(text: str) -> tuple[str, dict[str, str]]:
    spec = yaml.safe_load(text)
    step = next(s for s in spec["jobs"]["stopbench"]["steps"] if s.get("name") == "Install stopbench")
    return step["run"], spec["env"]


def run_install(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The workflow's install step run by bash, with `python` a stub that records its arguments."""
    script, env = install_step(text)
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "argv.json"
    stub = bin_dir / "python"
    stub.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n", encoding="utf-8")
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    proc = subprocess.run(["bash", "-e", "-c", script], env={**os.environ, **env,
                          "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
                          capture_output=True, text=True, timeout=60, check=False)
    return proc, json.loads(record.read_text(encoding="utf-8")) if record.exists() else []


def test_the_workflow_installs_stopbench_pinned_from_its_repository_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, said = written_workflow(tmp_path / "project", monkeypatch, VCS)
    proc, argv = run_install(tmp_path, text)
    assert proc.returncode == 0, proc.stderr
    assert argv == ["-m", "pip", "install", f"stopbench @ git+https://github.com/someone/stopbench@{COMMIT}"]
    assert "note:" not in said
    assert said.splitlines()[-1].startswith("next: stopbench pytest tests/test_my_loop.py ")


def test_a_copy_from_a_local_wheel_leaves_stopbench_to_fill_in_and_the_install_step_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, said = written_workflow(tmp_path / "project", monkeypatch, WHEEL_FILE)
    assert install_step(text)[1] == {"STOPBENCH": ""}
    assert "# FILL IN: this stopbench came from a local file (stopbench-0.1.0-py3-none-any.whl)" in text
    assert "/home/me" not in text
    assert ("note: project/.github/workflows/stopbench.yml needs STOPBENCH filled in" in said
            or f"note: {tmp_path}/project/.github/workflows/stopbench.yml needs STOPBENCH filled in" in said), said
    proc, argv = run_install(tmp_path, text)
    assert proc.returncode == 1 and argv == []
    assert "::error file=.github/workflows/stopbench.yml::STOPBENCH (env:, at the top) is empty" in proc.stderr


def test_no_workflow_installs_stopbench_from_an_index_by_name_alone() -> None:
    template = (ROOT / "bench" / "init_templates" / "stopbench.yml").read_text(encoding="utf-8")
    for text in (template, (ROOT / "action.yml").read_text(encoding="utf-8")):
        assert not re.search(r"pip install\s+(-\S+\s+)*['\"]?stopbench\b", text)
    assert template.count(SLOT) == 1


def uses_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\s*-?\s*uses:", line)]


@pytest.mark.parametrize("path", ["bench/init_templates/stopbench.yml", "action.yml"])
def test_every_action_is_pinned_by_a_full_commit_with_its_tag_in_a_comment(path: str) -> None:
    lines = uses_lines((ROOT / path).read_text(encoding="utf-8"))
    assert lines
    assert [line for line in lines if not PINNED.match(line)] == []


def steps(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["jobs"]["stopbench"]["steps"]  # type: ignore[no-any-return]


def test_the_workflow_reads_the_repository_only_keeps_no_credentials_and_sets_up_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = yaml.safe_load(written_workflow(tmp_path, monkeypatch, VCS)[0])
    assert spec["permissions"] == {"contents": "read"}
    checkout = next(s for s in steps(spec) if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    order = [s.get("uses", s.get("name", s.get("run", ""))).split("@")[0] for s in steps(spec)]
    assert order.index("actions/setup-python") < order.index("Install stopbench")


def test_the_action_installs_into_a_virtual_environment_of_its_own() -> None:
    spec = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    install, check = spec["runs"]["steps"][0]["run"], spec["runs"]["steps"][1]["run"]
    assert install.splitlines()[0] == '"$PYTHON" -m venv "$RUNNER_TEMP/stopbench-venv"'
    assert '"$RUNNER_TEMP/stopbench-venv/bin/python" -m pip install' in install
    assert check.startswith('"$RUNNER_TEMP/stopbench-venv/bin/python" ')


def test_a_source_is_rendered_as_one_quoted_yaml_value_under_its_origin() -> None:
    text = render(f"env:\n{SLOT}", Source('stopbench @ https://e.org/a "b".whl', "https://e.org"))
    assert yaml.safe_load(text) == {"env": {"STOPBENCH": 'stopbench @ https://e.org/a "b".whl'}}
