"""Hypothesis profiles for the whole suite, and the `slow` marker.

``ci`` (the default, and what ``make test`` sets): derandomized, no example database, a bounded
number of examples, no deadline, so the property suite is the same on every run and stays well
under a minute on a 2-core machine. ``long`` (``make fuzz``): many more examples, random, with the
local example database, for hunting on a developer's machine. Choose with HYPOTHESIS_PROFILE.
"""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.installed import close_run, open_run

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=40,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")

# Tests build their own sequences/, predicates/ and expected/ in temporary folders and read them alone:
# the shipped ones are added to a user's own only where a test asks for it (tests/cli/test_shipped_folders.py,
# tests/install/). In the repository itself the default folders are the shipped ones either way.
os.environ.setdefault("STOPBENCH_ONLY_MINE", "1")


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the test modules, what they load at import, the libraries) moves to the
    collector's permanent generation: it is not garbage, and the full collections the tests cause need
    not walk it again."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """The objects alive before the test moved to the collector's permanent generation, where they stay.

    The corpus decoder runs a full collection after every block it reads, so memory stays flat on a large
    corpus; a test that reads hundreds of small shards would otherwise pay for walking everything the
    suite holds at that point, hundreds of times over. The code under test runs unchanged: its
    collections still run, over the objects the test itself makes. Nothing is unfrozen afterwards: that
    would thaw what collection froze too."""
    gc.freeze()
    yield


# ---------------------------------------------------------------- the `slow` marker

SLOW: dict[str, str] = {
    "tests/corpus/test_corpus_command.py::test_a_local_dask_cluster_of_two_workers_gives_the_local_report_bit_for_bit":
        "starts a local dask cluster",
    "tests/test_mutation.py": "its set-up makes every mutant of every port (20 s of CPU) for each test to pick from",
    "tests/check/test_pytest_plugin.py::test_the_example_test_of_a_loop_on_the_openai_client_passes":
        "runs pytest in a subprocess on a loop over the catalogue",
    "tests/check/test_live_fuzz.py::test_the_in_process_helper_finds_the_naive_loop_and_passes_the_reference_loop":
        "fuzzes two live loops",
    "tests/scorecard/test_scorecard_record.py::test_record_of_the_fake_framework":
        "records a fake framework with stopbench check",
    "tests/scorecard/test_scorecard_record.py::test_verify_reruns_the_sample_and_names_a_moved_cell":
        "records a fake framework, then re-runs its sample",
    "tests/scorecard/test_scorecard_record.py::test_update_rerecords_the_sequences_given_and_keeps_the_other_cells":
        "records a fake framework, then records it again",
    "tests/scorecard/test_scorecard_footing.py::test_changed_runs_only_the_new_and_edited_sequences_and_gives_a_whole_records_bytes":
        "records a fake framework, then its changed sequences",
    "tests/scorecard/test_scorecard_footing.py::test_changed_says_which_verdicts_moved":
        "records a fake framework, then its changed sequences",
    "tests/check/test_check_surfaces.py::test_claude_on_a_gateway_is_judged_as_on_messages_a_call_run_from_a_cut_reply_breaks":
        "runs stopbench check on a gateway's official Claude client, two sequences",
    "tests/unit/test_yaml_read.py::test_every_shipped_yaml_file_reads_as_pyyaml_safe_load_reads_it":
        "reads every shipped YAML file twice, with both readers",
    "tests/conform/test_parallel_runs.py": "drives loops in subprocesses, a timed-out run waiting for its timeout",
    "tests/conform/test_interpreter_drivers.py::test_a_loop_without_a_cap_ends_capped_like_its_port_at_the_safety_cap":
        "a driven loop making 200 requests",
    "tests/conform/test_virtual_clock.py::test_a_budgeted_back_off_makes_the_same_requests_on_the_virtual_clock":
        "loops sleeping on the real clock, to compare with the virtual one",
    "tests/conform/test_virtual_clock.py::test_a_sleep_longer_than_the_timeout_ends_in_time_on_the_virtual_clock":
        "loops sleeping on the real clock, to compare with the virtual one",
    "tests/conform/test_timings.py::test_runs_start_longest_first_by_the_last_timings": "drives loops in subprocesses",
    "tests/conform/test_ci_drivers.py::test_every_driven_loop_is_installed_from_its_one_pin":
        "make -n of every driven loop's install",
    "tests/conform/test_report.py::test_the_report_is_the_same_text_for_the_same_records":
        "drives a loop in subprocesses twice",
    "tests/record/test_record_cli.py::test_diff_compares_every_request_of_a_run_past_the_servers_body_budget":
        "records and diffs a run past the server's body budget",
    "tests/record/test_record_cli.py::test_record_stopped_right_after_the_last_answer_of_a_large_conversation_keeps_every_exchange":
        "records a large conversation through the proxy",
    "tests/docs/test_build.py::test_the_site_builds_strict_with_every_generated_page": "mkdocs builds the whole site",
    "tests/conform/test_reuse.py::test_a_full_drive_keys_every_row_and_marks_none_reused":
        "drives loops in subprocesses, a full drive then CI runs",
    "tests/conform/test_reuse.py::test_an_unchanged_tree_drives_only_the_rotating_sample_and_reuses_the_rest":
        "drives loops in subprocesses, a full drive then CI runs",
    "tests/conform/test_reuse.py::test_a_changed_port_file_drives_its_loop_s_pairs_only":
        "drives loops in subprocesses, a full drive then CI runs",
    "tests/conform/test_reuse.py::test_a_row_without_a_key_is_driven_again":
        "drives loops in subprocesses, a full drive then CI runs",
    "tests/conform/test_reuse.py::test_a_changed_sequence_file_drives_its_pairs_only":
        "drives loops in subprocesses, a full drive then CI runs",
    "tests/serve/test_journal.py::test_memory_after_100000_requests_is_within_a_tenth_of_memory_after_1000":
        "serves 100,000 requests (the ASGI app without sockets, about 30 s)",
    "tests/serve/test_perf_serve.py::test_the_server_section_runs_without_aimock_and_reports_both_targets":
        "starts four server processes and loads each",
    "tests/install/test_wheel.py": "builds the wheel, installs it into a fresh environment and runs the commands "
                                   "from an empty folder (ci/wheel_smoke.py)",
    "tests/docs/test_tutorials.py::test_a_tutorial_s_commands_pass_as_written_from_an_empty_folder":
        "runs a tutorial's commands in the installed wheel's fresh environment (made once per session, "
        "tests/installed.py)",
}
"""Tests of ten seconds or more on two loaded cores, or of five seconds of CPU or more with the processes they
wait for (the measurement in docs/reference/development.md), each with why: marked `slow`, so
``pytest -m "not slow"`` is a quick pass while working; `make test` and CI run everything. A key is a test file
(when every test of it is slow) or a test's node id (parameters left out); one that names nothing is warned
about."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SLOW`; a key whose file was collected but that matches no test is stale."""
    matched: set[str] = set()
    files: set[str] = set()
    for item in items:
        path, _, name = item.nodeid.partition("::")
        files.add(path)
        for key in (path, f"{path}::{name.split('[')[0]}"):
            if key in SLOW:
                item.add_marker(pytest.mark.slow)
                matched.add(key)
    stale = sorted(k for k in SLOW if k.split("::")[0] in files and k not in matched)
    if stale and not config.getoption("keyword") and not config.getoption("markexpr"):
        warnings.warn(pytest.PytestConfigWarning(
            f"tests/conftest.py SLOW names tests that do not exist (renamed?): {', '.join(stale)}"), stacklevel=1)


# ---------------------------------------------------------------- the installed wheel, once per run


def pytest_configure(config: pytest.Config) -> None:
    """The folder the run's processes (pytest-xdist's workers too) share the installed wheel's environment in."""
    open_run()


def pytest_unconfigure(config: pytest.Config) -> None:
    close_run()
