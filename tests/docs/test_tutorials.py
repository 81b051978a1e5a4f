"""The tutorials work as written for a user who installed the wheel: every shell command of first run, test your
loop and first predicate, run in order from an empty folder, in a fresh environment holding only the wheel and
its declared dependencies (tests/installed.py).

A page's ``sh`` blocks run line by line (a ``\\`` continuation joins lines), unless the line before a block
says ``<!-- not run by the docs tests: why -->`` (the install itself, the whole catalogue). A command must
exit 0, or the status its comment gives (``# exit 1: ...``). A block whose paragraph says ``Save this as
`PATH``` is written to PATH first, as the reader would."""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.site import docs_page
from tests.installed import installed

TUTORIALS = ("tutorials/first-run.md", "tutorials/test-your-loop.md", "tutorials/first-predicate.md")
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
NOT_RUN = "<!-- not run by the docs tests:"
SAVE = re.compile(r"Save this as `([^`]+)`")
EXIT = re.compile(r"\s*exit (\d+)\b")


@dataclass(frozen=True)
class Command:
    line: str
    status: int


@dataclass(frozen=True)
class Save:
    path: str
    text: str


def _before(text: str, at: int) -> tuple[bool, str]:
    """Whether the fence at `at` is marked not run, and the paragraph before it (marker lines left out)."""
    lines = text[:at].rstrip("\n").split("\n")
    marked = lines[-1].startswith(NOT_RUN)
    while lines and (lines[-1].startswith("<!--") or not lines[-1].strip()):
        lines.pop()
    paragraph: list[str] = []
    while lines and lines[-1].strip():
        paragraph.insert(0, lines.pop())
    return marked, " ".join(paragraph)


def _commands(code: str) -> list[Command]:
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        comment = line.partition("  #")[2]
        found = EXIT.match(comment)
        out.append(Command(line, int(found.group(1)) if found else 0))
    return out


def steps(page: str) -> list[Command | Save]:
    """What a reader of `page` (as the site shows it) runs and saves, in order."""
    text = docs_page(page)
    out: list[Command | Save] = []
    for m in FENCE.finditer(text):
        marked, paragraph = _before(text, m.start())
        saved = SAVE.search(paragraph)
        if saved:
            out.append(Save(saved.group(1), m.group(2)))
        elif m.group(1) == "sh" and not marked:
            out.extend(_commands(m.group(2)))
    return out


def test_every_tutorial_has_commands_the_tests_run() -> None:
    for page in TUTORIALS:
        commands = [s for s in steps(page) if isinstance(s, Command)]
        assert commands and all(shlex.split(c.line)[0] == "stopbench" for c in commands), (page, commands)


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: Path(p).stem)
def test_a_tutorial_s_commands_pass_as_written_from_an_empty_folder(page: str, tmp_path: Path) -> None:
    env = installed().env
    for item in steps(page):
        if isinstance(item, Save):
            (tmp_path / item.path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / item.path).write_text(item.text, encoding="utf-8")
            continue
        proc = subprocess.run(["bash", "-c", item.line], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert proc.returncode == item.status, (
            f"{page}: `{item.line}` exited {proc.returncode}, the page says {item.status}:\n"
            f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
