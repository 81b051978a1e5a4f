"""A :class:`~bench.engine.model.Sequence` as the document of its file, written by the project's one YAML writer.

:func:`sequence_data` is the one place that turns a sequence (and :func:`turn_data` a turn) into
the plain data of a catalogue file; every writer of sequences uses it (``stopbench import``,
``stopbench fuzz``'s findings, tests), and :func:`bench.catalogue.yaml_write.dump` writes the text. It is
the inverse of :func:`bench.catalogue.load.parse_sequence`: for every sequence it can load,
``parse_sequence(load_yaml(sequence_to_yaml(s)), s.id, s.path) == s``. Fields at their default
are left out, except the ones whose absence would read differently: ``finish_raw`` is always
written (an absent one is filled in from the dialect table, and ``null`` means none was sent) and
so is ``content`` (``null`` and ``""`` are different answers). Fields are written by name from the
model, so a field added to :class:`~bench.engine.model.Turn` or :class:`~bench.engine.model.Requirement` later
is written without a change here.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from bench.catalogue.files import write_atomically
from bench.catalogue.yaml_write import dump
from bench.engine.model import Requirement, Sequence, Turn, Usage

_ALWAYS = ("finish", "finish_raw")
"""Turn fields written even at their default; ``content`` is written right after them."""

_TURN_ORDER = ("finish", "finish_raw", "finish_detail", "content", "tool_calls", "reasoning", "error", "usage",
               "end_turn")
"""The order of a turn's keys in the hand-written catalogue; fields not listed follow in model order."""


_TURN_FIELDS = sorted((f.name for f in fields(Turn)),
                      key=lambda n: _TURN_ORDER.index(n) if n in _TURN_ORDER else len(_TURN_ORDER))


def turn_data(t: Turn) -> dict[str, Any]:
    """The plain data of one turn, keys in the catalogue's order."""
    out: dict[str, Any] = {}
    for name in _TURN_FIELDS:
        value = getattr(t, name)
        if name in _ALWAYS or name == "content":
            out[name] = value
        elif name == "tool_calls":
            if value:
                out[name] = [{"id": c.id, "name": c.name, "arguments": c.arguments,
                              **({"result": c.result} if c.result is not None else {})} for c in value]
        elif name == "error":
            if value is not None:
                err: dict[str, Any] = {"kind": value.kind}
                if value.status is not None:
                    err["status"] = value.status
                if value.code is not None:
                    err["code"] = value.code
                if value.message:
                    err["message"] = value.message
                if value.context_window is not None:
                    err["context_window"] = value.context_window
                out[name] = err
        elif name == "usage":
            if value is not None:
                out[name] = _usage(value)
        elif name == "after":
            if value:
                out[name] = dict(value)
        elif value is not None:
            out[name] = value
    return out


def _usage(u: Usage) -> dict[str, int]:
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}


def _require(r: Requirement) -> dict[str, Any]:
    """Every requirement field not at its default, in declaration order (tuples as lists)."""
    out: dict[str, Any] = {}
    for f in fields(r):
        value = getattr(r, f.name)
        if value != f.default:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def sequence_data(seq: Sequence) -> dict[str, Any]:
    """The plain data of a sequence file (everything but the id, which is the file's stem, and
    the path, which is where the file is)."""
    doc: dict[str, Any] = {"title": seq.title, "kind": seq.kind, "dialect": seq.dialect, "source": seq.source}
    if seq.tags:
        doc["tags"] = list(seq.tags)
    if seq.max_tokens is not None:
        doc["max_tokens"] = seq.max_tokens
    doc["then"] = seq.then
    if not seq.require.is_empty():
        doc["require"] = _require(seq.require)
    doc["turns"] = [turn_data(t) for t in seq.turns]
    return doc


def sequence_to_yaml(seq: Sequence) -> str:
    """The text of `seq`'s file: :func:`sequence_data` through the project's YAML writer."""
    return dump(sequence_data(seq))


def dump_sequence(seq: Sequence, path: Path) -> Path:
    """Write `seq` to `path` atomically. The catalogue will give it the file's stem as id."""
    write_atomically(path, sequence_to_yaml(seq))
    return path
