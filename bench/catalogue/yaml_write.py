"""The project's one YAML writer: plain data in, deterministic text out, read back exactly.

Every file the bench writes as YAML (golden files, catalogue sequences, imported captures) goes
through :func:`dump`, so the files share one layout and a change to one value changes only its
own lines:

* mappings in block style, keys in the order given (the caller decides the order);
* a short list of scalars on one line (``tools_run: [bash, read_file]``), anything longer or
  nested as an indented block list (``  - ...``);
* no line is ever folded at a width: a long one-line string stays on one line, so editing one
  word never reflows a paragraph;
* a string with line breaks becomes a literal block (``|``) where that reads back unchanged,
  so an edited paragraph diffs line by line; otherwise (trailing spaces, tabs, control
  characters) it is double-quoted with escapes;
* NEL, LS, PS and CR are always double-quoted: YAML 1.1 folds them into a space or a newline in
  every other style;
* strings that would read back as something else (``yes``, ``null``, ``0x1``, ``: x``, ``# x``)
  are quoted; no anchors or aliases are written, even when one object appears twice.

``load(dump(doc)) == doc`` for every document of str, int, float (not NaN), bool, None, list and
dict with scalar keys; ``tests/properties/test_yaml_write.py`` checks it with hypothesis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

__all__ = ["LINE_BREAKS", "dump"]

LINE_BREAKS = frozenset("\x85\u2028\u2029\r")
"""YAML 1.1 line breaks other than \\n: only a double-quoted scalar reads them back unchanged."""

FLOW_LIST_LIMIT = 80
"""A list of scalars whose items take at most this many characters is written on one line."""

_NO_FOLD = 1 << 30
"""The emitter's line width: never reached, so no scalar is folded across lines."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper with the layout described in the module docstring."""

    def ignore_aliases(self, data: Any) -> bool:
        """Never write an anchor: a repeated object is written out again, so each value is local."""
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        """Indent block lists under their key (``key:\\n  - item``), as the hand-written catalogue does."""
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    """Double quotes for the line breaks only they keep; a literal block for multi-line text (the
    emitter falls back to double quotes when a block would not read back); otherwise plain when
    the plain scalar reads back as this string, else quoted."""
    if LINE_BREAKS.intersection(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


def _is_short_scalar_list(items: list[Any] | tuple[Any, ...]) -> bool:
    if not items:
        return True
    size = 0
    for item in items:
        if isinstance(item, (dict, list, tuple)):
            return False
        if isinstance(item, str) and ("\n" in item or LINE_BREAKS.intersection(item)):
            return False
        size += len(str(item)) + 2
    return size <= FLOW_LIST_LIMIT


def _represent_list(dumper: yaml.SafeDumper, data: list[Any] | tuple[Any, ...]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_is_short_scalar_list(data))


def _represent_dict(dumper: yaml.SafeDumper, data: Mapping[Any, Any]) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(tuple, _represent_list)
_Dumper.add_representer(dict, _represent_dict)


def dump(doc: Any) -> str:
    """`doc` (plain data: dicts, lists, tuples, str, int, float, bool, None) as YAML text.

    Deterministic: the same document always gives the same bytes, and mapping keys keep the
    order they have in `doc`. Tuples are written as lists.
    """
    text: str = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=_NO_FOLD,
                          default_flow_style=False, line_break="\n")
    return text
