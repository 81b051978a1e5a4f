"""Fault recipes a careless or hostile user writes: a wait that never ends, a number YAML read as a
string, a ``--faults`` path that is no file. Each is refused in one line naming the file and the
field, with the reason, and exit 2, before anything is served; nothing that is not a regular file is
opened (a FIFO would block the open)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.faults import RecipeError, load_recipe, parse_recipe_text
from tests.hostile.test_one_line import one_line, stopbench

ENDLESS = [("faults: [{fault: stall, seconds: .inf}]", "faults[0].stall.seconds"),
           ("pace: {ttft_ms: .inf}", "pace.ttft_ms"),
           ("faults: [{fault: truncate, after_ms: .inf}]", "faults[0].truncate.after_ms"),
           ("faults: [{fault: disconnect, after_ms: .Inf}]", "faults[0].disconnect.after_ms")]


def refusal(text: str) -> str:
    with pytest.raises(RecipeError) as caught:
        parse_recipe_text(text, "r.yaml")
    return str(caught.value)


@pytest.mark.parametrize(("text", "field"), ENDLESS)
def test_an_endless_wait_is_refused_with_the_reason(text: str, field: str) -> None:
    assert refusal(text) == f"r.yaml: {field}: inf is not a finite number: an endless wait, the answer would never come"


@pytest.mark.parametrize("text", ["pace: {tokens_per_second: .inf}", "pace: {jitter_ms: .nan}",
                                  "faults: [{fault: stall, seconds: 1, probability: .nan}]"])
def test_any_number_that_is_not_finite_is_refused(text: str) -> None:
    assert "is not a finite number" in refusal(text)


@pytest.mark.parametrize(("text", "write"), [("pace: {ttft_ms: 1e3}", "write 1000 or 1.0e+3"),
                                             ("faults: [{fault: stall, seconds: 2.5e1}]", "write 25 or 2.5e+1"),
                                             ("faults: [{fault: truncate, after_frames: 3E0}]", "write 3")])
def test_a_number_yaml_read_as_a_string_is_said_to_be_and_how_to_write_it(text: str, write: str) -> None:
    line = refusal(text)
    assert "YAML read" in line and "as a string" in line and line.endswith(write), line


def test_the_suggested_spelling_is_read_as_the_number() -> None:
    recipe = parse_recipe_text("pace: {ttft_ms: 1.0e+3}")
    assert recipe.pace is not None and recipe.pace.ttft_ms == 1000.0


def test_an_endless_stall_ends_check_in_one_line_before_any_run(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(ENDLESS[0][0] + "\n", encoding="utf-8")
    line = one_line(stopbench(tmp_path, "check", "--faults", "r.yaml", "--", "python", "-c", "open('ran', 'w')"))
    assert line.startswith("--faults: r.yaml: faults[0].stall.seconds: inf is not a finite number")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(("make", "said"), [("folder", "is a folder, not a recipe file"),
                                            ("fifo", "is not a regular file (a FIFO)")])
def test_a_recipe_path_that_is_not_a_file_is_named_as_what_it_is(tmp_path: Path, make: str, said: str) -> None:
    path = tmp_path / "r.yaml"
    path.mkdir() if make == "folder" else os.mkfifo(path)
    with pytest.raises(RecipeError) as caught:
        load_recipe(str(path))  # a FIFO opened for reading would block here, with no writer
    assert said in str(caught.value)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_as_a_recipe_is_a_device_in_one_line(tmp_path: Path) -> None:
    line = one_line(stopbench(tmp_path, "check", "--faults", "/dev/zero", "--", "python", "-c", "pass"))
    assert line == "--faults: /dev/zero: is not a regular file (a device), not a recipe file"
