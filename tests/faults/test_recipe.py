"""A fault recipe is validated as strictly as a sequence file: one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.faults import FAULTS, PRESETS, RecipeError, load_recipe, parse_recipe_text


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_recipe(name: str) -> None:
    recipe = load_recipe(name)
    assert recipe.name == name
    assert recipe.faults or recipe.pace is not None


def test_cut_after_3_truncates_the_first_request_after_three_frames() -> None:
    (fault,) = load_recipe("cut-after-3").faults
    assert (fault.fault, fault.after_frames, fault.requests) == ("truncate", 3, [1])


@pytest.mark.parametrize(("text", "line"), [
    ("faults:\n - fault: truncate\n   after_frame: 3\n",
     "x.yaml: faults[0].truncate.after_frame: unknown key (not part of the recipe format)"),
    ("faults:\n - fault: truncate\n", "x.yaml: faults[0].truncate: give after_frames or after_ms (one of them)"),
    ("faults:\n - fault: trunc\n",
     "x.yaml: faults[0].fault: expected one of " + ", ".join(map(repr, FAULTS)) + ", got 'trunc'"),
    ("faults:\n - after_frames: 2\n", "x.yaml: faults[0].fault: required, but missing"),
    ("faults:\n - {fault: status, status: 200}\n", "x.yaml: faults[0].status.status: Input should be greater"),
    ("faults:\n - {fault: stall, seconds: 1, probability: 2}\n", "x.yaml: faults[0].stall.probability: "),
    ("faults:\n - {fault: corrupt, requests: [0]}\n", "x.yaml: faults[0].corrupt.requests[0]: "),
    ("pace: {ttft: 3}\n", "x.yaml: pace.ttft: unknown key (not part of the recipe format)"),
    ("[1]\n", "x.yaml: expected a mapping (key: value) at the top level, got list [1]"),
    ("", "x.yaml: expected a mapping (key: value) at the top level, got nothing (an empty file)"),
])
def test_a_bad_recipe_is_one_line_naming_the_file_and_the_field(text: str, line: str) -> None:
    with pytest.raises(RecipeError) as got:
        parse_recipe_text(text, "x.yaml")
    assert str(got.value).startswith(line)
    assert "\n" not in str(got.value)


def test_a_recipe_file_is_named_by_its_path_in_the_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("r.yaml").write_text("faults:\n  - {fault: disconnect, after_ms: -1}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"^r\.yaml: faults\[0\]\.disconnect\.after_ms: "):
        load_recipe("r.yaml")


def test_a_name_that_is_neither_a_file_nor_a_preset_lists_the_presets() -> None:
    with pytest.raises(RecipeError, match=r"^no-such: no such recipe file, nor a preset \(cut-after-3, "):
        load_recipe("no-such")


def test_invalid_yaml_in_a_recipe_names_the_file_and_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("r.yaml").write_text("faults: [\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"^r\.yaml: not valid YAML: line "):
        load_recipe("r.yaml")


def _docs_recipes() -> list[tuple[str, str]]:
    import re

    root = Path(__file__).resolve().parents[2] / "docs"
    found = []
    for page in sorted(root.rglob("*.md")):
        for code in re.findall(r"^```yaml\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M):
            if "faults:" in code or "pace:" in code:
                found.append((str(page.relative_to(root)), code))
    return found


@pytest.mark.parametrize(("page", "code"), _docs_recipes(), ids=lambda v: v if "/" in v else "")
def test_every_recipe_the_docs_show_is_a_valid_recipe(page: str, code: str) -> None:
    assert parse_recipe_text(code, page).faults or parse_recipe_text(code, page).pace is not None


def test_the_docs_show_a_recipe() -> None:
    assert any(page == "how-to/faults.md" for page, _ in _docs_recipes())
