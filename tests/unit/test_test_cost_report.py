"""`make test-cost`'s report (devtools/perf_tests.py): the sentence the README repeats, and its block."""

from __future__ import annotations

from datetime import date

import pytest

from devtools.perf_tests import README_BEGIN, README_END, Run, markdown, summary, with_readme_block

LINES = [{"id": "tests/serve/test_a.py::t", "wall": 2.0, "cpu": 1.5, "load": 1.2},
         {"id": "tests/serve/test_a.py::u", "wall": 1.0, "cpu": 0.5, "load": 2.6},
         {"id": "tests/test_top.py::v", "wall": 4.0, "cpu": 3.0, "load": 1.9}]


def test_a_clean_clone_run_says_make_test_its_pytest_share_the_venv_and_the_load() -> None:
    run = Run(LINES, pytest_wall=300.0, command="make test", venv=48.0, make_test=360.0)
    assert summary(run, 2) == ("On a clean clone and 2 cores, `make test` took 6.0 minutes (pytest 5.0 minutes "
                               "of it), after 0.8 minutes for the dev venv, at a load average of 1 to 3 (median 2).")


def test_a_pytest_only_run_names_its_command_and_no_clone() -> None:
    run = Run(LINES, pytest_wall=90.0, command="pytest -n 2")
    assert summary(run, 2).startswith("`pytest -n 2` took 1.5 minutes on 2 cores")


def test_the_report_opens_with_the_sentence_and_sums_the_folders_most_cpu_first() -> None:
    run = Run(LINES, pytest_wall=300.0, command="make test", venv=48.0, make_test=360.0)
    lines = markdown(run, date(2026, 12, 5), 2).splitlines()
    assert lines[2] == summary(run, 2)
    assert lines[-2:] == ["| test_top.py | 1 | 3 | 4 |", "| serve | 2 | 2 | 3 |"]


def test_the_readme_block_is_replaced_whole_and_a_readme_without_one_is_refused() -> None:
    readme = f"before\n{README_BEGIN}\nold sentence\n{README_END}\nafter\n"
    assert with_readme_block(readme, "new.") == f"before\n{README_BEGIN}\nnew.\n{README_END}\nafter\n"
    with pytest.raises(ValueError, match=r"README\.md: no block"):
        with_readme_block("no block here\n", "new.")
