"""Checking an imported sequence against the sequence the replay server served when the file was made.

The production importers' fixtures (tests/importers/fixtures/{otel,claude_code,codex_rollout}/) were
written by real programs talking to the replay server; each HOW.md says which catalogue sequence was
served and which turn answered each request. The tests compare what the importer recovers with those
served turns, field by field, never with the importer's own earlier output.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.catalogue.load import load_catalogue
from bench.engine.model import Sequence, Turn
from bench.serve.render import finish_for
from bench.wires import dialects

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
_CATALOGUE: dict[str, Sequence] = {}


def served(sequence_id: str) -> Sequence:
    """The catalogue sequence the server served (the shipped catalogue, loaded once)."""
    if not _CATALOGUE:
        _CATALOGUE.update((s.id, s) for s in load_catalogue(ROOT / "sequences").sequences)
    return _CATALOGUE[sequence_id]


def _args(raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # cut-off or invalid JSON is compared as the raw string


def assert_turn_recovered(got: Turn, sent: Turn, dialect: str, sent_dialect: str, where: str, *,
                          content: bool = True, usage: bool = True, finish: bool = True) -> None:
    """`got` (imported) says what the server sent as `sent`, on the wire of `dialect`.

    The finish is the raw string the server sent on that wire (:func:`bench.serve.render.finish_for`:
    verbatim on the sequence's own dialect, else the wire's first string for the finish) and its
    canonical reading on that wire; an error turn is compared by kind and status. Tool call
    arguments are compared as JSON values when they parse (an importer that only has the parsed
    object writes it back compactly), else as raw strings. `content=False` and `usage=False` skip
    fields the recording program does not keep, `finish=False` a finish it cannot record (each caller
    says why).
    """
    __tracebackhide__ = True
    if sent.error is not None:
        assert got.error is not None, f"{where}: the served error was not recovered"
        assert got.error.kind == sent.error.kind, f"{where}: error kind {got.error.kind!r}, served {sent.error.kind!r}"
        assert got.error.status == sent.error.status, f"{where}: status {got.error.status}, served {sent.error.status}"
        return
    if finish:
        want_raw = finish_for(dialect, sent_dialect, sent)  # type: ignore[arg-type]
        want = dialects.canonical(dialect, want_raw)  # type: ignore[arg-type]
        assert got.finish == want, f"{where}: finish {got.finish!r}, served {want!r}"
        assert got.finish_raw == want_raw, f"{where}: finish_raw {got.finish_raw!r}, served {want_raw!r}"
    if content:
        assert got.content == sent.content, f"{where}: content {got.content!r}, served {sent.content!r}"
    assert [(c.id, c.name, _args(c.arguments)) for c in got.tool_calls] == [
        (c.id, c.name, _args(c.arguments)) for c in sent.tool_calls], f"{where}: tool calls differ"
    if sent.reasoning is not None:
        assert got.reasoning == sent.reasoning, f"{where}: reasoning {got.reasoning!r}, served {sent.reasoning!r}"
    if sent.steer is not None:
        assert got.steer == sent.steer, f"{where}: steer {got.steer!r}, served {sent.steer!r}"
    if usage and sent.usage is not None:
        assert got.usage == sent.usage, f"{where}: usage {got.usage}, served {sent.usage}"


def assert_sequence_recovered(got: Sequence, sequence_id: str, answered: list[int | None], **skip: set[int]) -> None:
    """Every imported turn against the served turn that answered that request (`answered[i]`, from
    the server's records when the fixture was made; None: a request past the end of a ``then: end``
    sequence, answered 410 ``script_ended``); `skip` maps a field to the turns where the recording
    program drops it (``content={0}``)."""
    __tracebackhide__ = True
    sent = served(sequence_id)
    assert len(got.turns) == len(answered), (
        f"{got.id}: {len(got.turns)} turns imported, the server answered {len(answered)} requests")
    for i, (turn, k) in enumerate(zip(got.turns, answered, strict=True)):
        if k is None:
            assert turn.error is not None and (turn.error.status, turn.error.code) == (410, "script_ended"), (
                f"{got.id} turns[{i}]: the 410 past the end was not recovered")
            continue
        assert_turn_recovered(turn, sent.turns[k], got.dialect, sent.dialect, f"{got.id} turns[{i}]",
                              content=i not in skip.get("content", set()), usage=i not in skip.get("usage", set()),
                              finish=i not in skip.get("finish", set()))


def corpus_on(path: Path, out: Path) -> tuple[int, str, str]:
    """``stopbench corpus PATH --out OUT`` as a user runs it: (exit status, stdout, stderr)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "bench", "corpus", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr
