"""Every requirement kind has its words (bench.check.explain.REQUIREMENTS), and the docs' page of
requirement kinds is the table generated from them when the site is built, so neither can drift from
`bench.engine.model.Requirement`."""

from __future__ import annotations

from dataclasses import fields

from bench.check.explain import REQUIREMENTS, requirements_markdown, violation_words
from bench.engine.model import Cell, Decision, Requirement, Step, Violation
from tests.check.conftest import small_sequence
from tests.docs.site import docs_page
from tests.helpers import ROOT

PAGE = "reference/requirements.md"


def test_every_field_of_requirement_has_words_and_nothing_else_does() -> None:
    assert list(REQUIREMENTS) == [f.name for f in fields(Requirement)]


def test_every_kind_is_written_as_its_field_in_the_readme_table() -> None:
    for kind, words in REQUIREMENTS.items():
        assert words.example.split(":")[0] == kind


def test_the_docs_page_shows_the_generated_table_and_no_copy_of_it() -> None:
    source = (ROOT / "docs" / PAGE).read_text(encoding="utf-8")
    assert "<!-- generate: requirements -->" in source, f"docs/{PAGE} no longer asks for the generated table"
    assert "| requirement |" not in source, f"docs/{PAGE} holds a typed copy of the table"
    assert requirements_markdown() in docs_page(PAGE), f"docs/{PAGE} as built does not show the table"


def test_a_broken_requirement_is_said_in_words_naming_the_turn_served() -> None:
    seq = small_sequence("cut", [{"finish": "length", "content": "The README desc"}], require={"ok": False})
    cell = Cell("cut", "mine@live", "stopped", (Step(1, 0, Decision("stop", "observed", ok=True)),), "done", True)
    assert violation_words(Violation("ok: false", 1, "..."), seq, cell) == "reported success on a cut-off reply"
    assert violation_words(Violation("ok: true", 1, "...")) == "did not end with success"
    assert violation_words(Violation("stops_within: 3", 4, "...")) == "did not stop within 3 requests"
    assert violation_words(Violation("no_malformed_runs", 1, "...")) == (
        "ran a tool call whose arguments are not valid JSON")


def test_a_requirement_the_table_does_not_know_is_shown_as_written() -> None:
    assert violation_words(Violation("something_new: 2", None, "...")) == "something_new: 2"


def test_a_reply_marked_not_final_is_named_so() -> None:
    seq = small_sequence("not-final", [{"finish": "stop", "content": "Let me check.", "end_turn": False}],
                         dialect="openai-responses")
    cell = Cell("not-final", "mine@live", "stopped", (Step(1, 0, Decision("stop", "observed", ok=True)),), "done",
                True)
    assert violation_words(Violation("answer_on: [2]", 1, "..."), seq, cell) == (
        "reported success on a reply marked not final (end_turn: false)")


def test_a_broken_requirement_names_the_turn_as_served_not_as_scripted() -> None:
    """A request that offered no tools is served the turn without its calls (bench.wires.withhold):
    a loop that reported success on that reply did not report success "on a reply that still calls
    tools" (it got none); the words name what it got."""
    from bench.wires.withhold import WITHHELD

    seq = small_sequence("calls-then-answer", [
        {"finish": "tool_calls", "content": "", "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{}"}]},
        {"finish": "stop", "content": "Done."}], require={"answer_on": [1]})
    stop = Step(1, 0, Decision("stop", "observed", reason="answered", ok=True), note=WITHHELD)
    cell = Cell(seq.id, "mine@live", "stopped", (stop,), reason="answered", ok=True)
    words = violation_words(Violation("answer_on: [1]", 1, "..."), seq, cell)
    assert words == "reported success on an empty reply"
    unmarked = Cell(seq.id, "mine@live", "stopped", (Step(1, 0, stop.decision),), reason="answered", ok=True)
    assert violation_words(Violation("answer_on: [1]", 1, "..."), seq, unmarked) == \
        "reported success on a reply that still calls tools"
