"""The one atomic write: whole files with a plain write's permissions, sets of files all or none,
and one line naming the path when a folder cannot be written."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.catalogue.files import UnwritableOutput, write_all_or_nothing, write_atomically


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_new_file_gets_the_mode_a_plain_write_gives_under_the_umask(tmp_path: Path, umask: None) -> None:
    write_atomically(tmp_path / "new.md", "text\n")
    with open(tmp_path / "plain.md", "w", encoding="utf-8") as fh:
        fh.write("text\n")
    assert mode(tmp_path / "new.md") == mode(tmp_path / "plain.md") == 0o640


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    path = tmp_path / "golden.yaml"
    path.write_text("old\n", encoding="utf-8")
    path.chmod(0o664)
    write_atomically(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert mode(path) == 0o664


def test_text_is_written_as_utf8_with_newlines_untouched_and_no_temporary_file_left(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "folder" / "x.yaml"
    write_atomically(path, "é\r\nline\n")
    assert path.read_bytes() == "é\r\nline\n".encode()
    assert leftovers(path.parent) == []


def test_a_set_is_written_whole(tmp_path: Path) -> None:
    write_all_or_nothing({tmp_path / "a.md": "A", tmp_path / "b.csv": "B"})
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "A"
    assert (tmp_path / "b.csv").read_text(encoding="utf-8") == "B"
    assert leftovers(tmp_path) == []


def test_a_rename_failing_half_way_puts_the_old_set_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("old A", encoding="utf-8")
    (tmp_path / "b.csv").write_text("old B", encoding="utf-8")
    real_replace = os.replace
    calls = []

    def failing_replace(src: str | Path, dst: str | Path) -> None:
        calls.append(Path(dst).name)
        if Path(dst).name == "c.html":
            raise PermissionError(13, "Permission denied", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(UnwritableOutput) as info:
        write_all_or_nothing({tmp_path / "a.md": "new A", tmp_path / "b.csv": "new B", tmp_path / "c.html": "C"})
    assert calls[:3] == ["a.md", "b.csv", "c.html"]  # the first two were replaced before the failure
    assert "c.html" in str(info.value) and "Permission denied" in str(info.value)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "old A"
    assert (tmp_path / "b.csv").read_text(encoding="utf-8") == "old B"
    assert not (tmp_path / "c.html").exists()
    assert leftovers(tmp_path) == []


def test_a_folder_that_refuses_new_files_leaves_the_old_set_and_names_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("old A", encoding="utf-8")

    def refused(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(UnwritableOutput) as info:
        write_all_or_nothing({tmp_path / "a.md": "new A"})
    assert str(info.value) == f"{tmp_path}: cannot write {tmp_path / 'a.md'}: Permission denied"
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "old A"


def test_a_file_where_the_folder_should_be_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("reports").write_text("not a folder", encoding="utf-8")
    with pytest.raises(UnwritableOutput) as info:
        write_all_or_nothing({Path("reports/decision-table.md"): "x", Path("reports/cells.csv"): "y"})
    assert str(info.value) == "reports: is a file, not a folder (cannot write reports/decision-table.md)"
    assert Path("reports").read_text(encoding="utf-8") == "not a folder"


def test_a_folder_where_a_file_should_be_is_named_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("reports/cells.csv").mkdir(parents=True)
    with pytest.raises(UnwritableOutput) as info:
        write_all_or_nothing({Path("reports/decision-table.md"): "x", Path("reports/cells.csv"): "y"})
    assert str(info.value) == "reports/cells.csv: is a folder, not a file; cannot write it"
    assert not Path("reports/decision-table.md").exists()
    assert leftovers(Path("reports")) == []


def test_a_single_file_whose_rename_fails_keeps_its_old_contents(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "golden.yaml"
    path.write_text("old\n", encoding="utf-8")

    def failing_replace(src: str | Path, dst: str | Path) -> None:
        raise PermissionError(1, "Operation not permitted", str(dst))

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(UnwritableOutput):
        write_atomically(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert leftovers(tmp_path) == []
