"""Citations as data (bench.engine.cite): the text is derived from the values, links come only from
a repository at a git ref, and a mistyped range fails when the port is imported."""

from __future__ import annotations

import pytest

from bench import Cite, Cited, Note, Source
from bench.engine.cite import parse_lines

PIN = Source("ex/loop", ref="0123abcd", release="PyPI loop==1.0")
WHEEL = Source("ex/pkg", ref="v2.0", release="PyPI pkg==2.0", tree="src/")
RELEASE = Source(release="PyPI other==3.1")
VERSION = Source("ex/tool", version="0.19.0", release="PyPI sdist")


def urls(c: Cite) -> list[str]:
    return [url for _, url in c.urls()]


def test_line_ranges_are_parsed_into_numbers_and_a_mistyped_one_fails() -> None:
    assert parse_lines("L10-20, L31, L5-L7") == ((10, 20), (31, 31), (5, 7))
    assert parse_lines("") == ()
    for bad in ("10-20", "L20-10", "L1,", "lines 3"):
        with pytest.raises(ValueError):
            PIN.at("a.py", bad)


def test_a_source_reads_as_its_pin_text() -> None:
    assert str(PIN) == "ex/loop@0123abcd (PyPI loop==1.0)"
    assert str(VERSION) == "ex/tool@0.19.0 (PyPI sdist)"
    assert str(RELEASE) == "PyPI other==3.1"
    assert str(PIN.file("src/a.py")) == "ex/loop@0123abcd (PyPI loop==1.0) src/a.py"


def test_a_source_that_cannot_be_pinned_is_refused() -> None:
    with pytest.raises(ValueError):
        Source("ex/loop", ref="abc", version="1.0")
    with pytest.raises(ValueError):
        Source(ref="abc")
    with pytest.raises(ValueError):
        Source("not-a-repo", ref="abc")
    with pytest.raises(ValueError):
        Source("ex/pkg", ref="v1", tree="src")


def test_each_line_range_of_a_git_pinned_place_is_one_link() -> None:
    assert urls(PIN.at("src/a.py", "L10-12, L20")) == [
        "https://github.com/ex/loop/blob/0123abcd/src/a.py#L10-L12",
        "https://github.com/ex/loop/blob/0123abcd/src/a.py#L20",
    ]
    assert urls(PIN.file("src/a.py").at()) == ["https://github.com/ex/loop/blob/0123abcd/src/a.py"]


def test_a_release_path_is_linked_under_the_folder_the_repository_keeps_it_in() -> None:
    assert urls(WHEEL.at("pkg/run.py", "L5")) == ["https://github.com/ex/pkg/blob/v2.0/src/pkg/run.py#L5"]
    assert str(WHEEL.at("pkg/run.py", "L5")) == "ex/pkg@v2.0 (PyPI pkg==2.0) pkg/run.py:L5"


def test_a_release_without_a_git_ref_and_a_note_give_no_link() -> None:
    assert urls(RELEASE.at("other/x.py", "L1-9")) == []
    assert urls(VERSION.at("agent/loop.py", "L1-9")) == []
    assert not hasattr(Note("claude@306444306"), "urls")


def test_the_human_text_names_a_source_once_for_consecutive_places() -> None:
    cited = Cited(PIN.at("src/a.py", "L10-12"), PIN.at("src/b.py", "L3", detail="run"),
                  Note("observed"), RELEASE.at("other/x.py", "L8"), text="the loop stops")
    assert str(cited) == ("ex/loop@0123abcd (PyPI loop==1.0) src/a.py:L10-12, src/b.py:L3 run; observed; "
                          "PyPI other==3.1 other/x.py:L8 - the loop stops")
    assert str(Cited(Note("seed 000, section 1"))) == "seed 000, section 1"


def test_a_cited_needs_a_citation_and_only_citations() -> None:
    with pytest.raises(ValueError):
        Cited(text="prose only")
    with pytest.raises(TypeError):
        Cited("ex/loop@0123abcd a.py:L1", text="a string is not a citation")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Note("  ")
