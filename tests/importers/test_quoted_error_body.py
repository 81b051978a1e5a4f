"""A production log that quotes the provider's JSON error body as its error message (Claude Code after the
status, Codex whole): both importers read the body's ``error`` object one way."""

from __future__ import annotations

from bench.importers._jsonl import error_object


def test_the_error_object_of_a_quoted_body_is_read() -> None:
    body = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    assert error_object(body) == {"type": "overloaded_error", "message": "Overloaded"}


def test_text_that_is_not_an_error_body_gives_none() -> None:
    assert error_object("Overloaded") is None
    assert error_object("{not json") is None
    assert error_object('{"message": "no error object"}') is None
    assert error_object('{"error": "a string, not an object"}') is None
    assert error_object("[1, 2]") is None
