"""learn-claude-code's s01 lessons: driven once from checkouts (not in a registry), their record
committed, and CI reusing that record instead of driving them again."""

from __future__ import annotations

import re
from pathlib import Path

from bench.conform.report import conformance_markdown
from bench.conform.runner import DRIVERS, Driver

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ("learn_claude_code_s01", "learn_claude_code_s01_openai")


def test_the_report_says_ci_reuses_a_record_it_does_not_drive_again() -> None:
    reused = Driver("lesson", "lessonport", "x.py", "anthropic", "a checkout", reused="CI reuses this record")
    driven = Driver("pkg", "pkgport", "y.py", "openai-chat", "pip install pkg==1")
    md = conformance_markdown([], [reused, driven], {"lesson": None, "pkg": None}, {"lesson": {}, "pkg": {}})
    assert "`lesson`: CI reuses this record." in md
    assert "`pkg`:" not in md


def test_both_lessons_are_drivers_whose_record_ci_reuses_and_ci_does_not_drive_them() -> None:
    for name in LESSONS:
        assert "CI reuses this committed record" in DRIVERS[name].reused
        assert (ROOT / DRIVERS[name].script).is_file()
    assert {DRIVERS[n].wire for n in LESSONS} == {"anthropic", "openai-chat"}
    py_loops = re.search(r"^PY_LOOPS\s*:=(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert py_loops is not None and not set(py_loops.group(1).split()) & set(LESSONS)
