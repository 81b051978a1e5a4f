"""``--predicate NAME``: the commands that load predicates keep the named ones, one rule for all."""

from __future__ import annotations

from dataclasses import replace

import click
import pytest

from bench import Stop, predicate
from bench.cli._common import named


@predicate()
def _stops(turn, state):  # type: ignore[no-untyped-def]
    return Stop("no_tool_calls", ok=True, rule="done")


first, second = (replace(_stops, name=n) for n in ("first", "second"))


def test_no_name_keeps_every_predicate_and_a_name_keeps_only_it() -> None:
    assert named([first, second], ()) == [first, second]
    assert named([first, second], ("second",)) == [second]


def test_an_unknown_name_is_a_usage_error_listing_the_names_there_are() -> None:
    with pytest.raises(click.UsageError, match=r"no predicate named third; have first, second"):
        named([second, first], ("third", "first"))
