"""Write a :class:`~bench.model.Sequence` as catalogue YAML that :mod:`bench.catalogue` reads back.

The writer is the inverse of :func:`bench.catalogue.parse_sequence`: for every sequence it can
load, ``parse_sequence(load_yaml(sequence_to_yaml(s)), s.id, s.path) == s``. Fields at their
default are left out, except the ones whose absence would read differently: ``finish_raw`` is
always written (an absent one is filled in from the dialect table, and ``null`` means none was
sent) and so is ``content`` (``null`` and ``""`` are different answers).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from bench.golden import write_atomically
from bench.model import Requirement, Sequence, Turn


class _Flow(dict[str, Any]):
    """A mapping written on one line (a tool call), as the hand-written catalogue does."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes :class:`_Flow` mappings in flow style and everything else in blocks."""


def _represent_flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


class _FlowList(list[Any]):
    """A list written on one line (tags)."""


def _represent_flow_list(dumper: yaml.SafeDumper, data: _FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


LINE_BREAKS = frozenset("\x85\u2028\u2029\r")
"""YAML 1.1 line breaks other than \\n: only a double-quoted scalar reads them back unchanged."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    """Strings with a YAML 1.1 line break other than \\n (NEL, LS, PS, CR) are double-quoted, where
    they are escaped: plain and single-quoted styles would read them back as a space or a newline."""
    if LINE_BREAKS.intersection(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_Flow, _represent_flow)
_Dumper.add_representer(_FlowList, _represent_flow_list)


def _turn(t: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"finish": t.finish, "finish_raw": t.finish_raw}
    if t.finish_detail is not None:
        out["finish_detail"] = t.finish_detail
    out["content"] = t.content
    if t.tool_calls:
        out["tool_calls"] = [_Flow(id=c.id, name=c.name, arguments=c.arguments) for c in t.tool_calls]
    if t.reasoning is not None:
        out["reasoning"] = t.reasoning
    if t.error is not None:
        err: dict[str, Any] = {"type": t.error.type}
        if t.error.message:
            err["message"] = t.error.message
        if t.error.status is not None:
            err["status"] = t.error.status
        out["error"] = err
    if t.usage is not None:
        out["usage"] = {"input_tokens": t.usage.input_tokens, "output_tokens": t.usage.output_tokens}
    if t.end_turn is not None:
        out["end_turn"] = t.end_turn
    if t.steer is not None:
        out["steer"] = t.steer
    return out


def _require(r: Requirement) -> dict[str, Any]:
    """Every requirement field not at its default, in declaration order (tuples as lists), so a
    field added to :class:`Requirement` later is written without a change here."""
    out: dict[str, Any] = {}
    for f in fields(r):
        value = getattr(r, f.name)
        if value != f.default:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def sequence_data(seq: Sequence) -> dict[str, Any]:
    """The plain data of a sequence file (everything but the id, which is the file's stem)."""
    doc: dict[str, Any] = {"title": seq.title, "kind": seq.kind, "dialect": seq.dialect, "source": seq.source}
    if seq.tags:
        doc["tags"] = _FlowList(seq.tags)
    doc["then"] = seq.then
    if not seq.require.is_empty():
        doc["require"] = _require(seq.require)
    doc["turns"] = [_turn(t) for t in seq.turns]
    return doc


def sequence_to_yaml(seq: Sequence) -> str:
    """Deterministic catalogue YAML for `seq`: keys in the catalogue's order, one flow mapping
    per tool call, unicode kept readable."""
    text: str = yaml.dump(sequence_data(seq), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=False)
    return text


def dump_sequence(seq: Sequence, path: Path) -> Path:
    """Write `seq` to `path` atomically. The catalogue will give it the file's stem as id."""
    write_atomically(path, sequence_to_yaml(seq))
    return path
