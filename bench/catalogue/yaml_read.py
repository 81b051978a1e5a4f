"""The project's one YAML reader: plain data out of sequence files, golden files and cassettes.

Every YAML file the bench reads goes through :func:`read_yaml` (or :func:`parse_yaml` for text
already in hand). It is PyYAML's safe schema, read strictly:

* only plain data comes out: mappings, lists, strings, numbers, booleans, null, timestamps and
  ``!!binary``; any other tag (``!!python/...``, ``!!set``, ``!!omap``) is refused;
* a key given twice in one mapping is refused, and so is a key that is a list or a mapping
  (``? [a, b]: 1``, ``{[1]: x}``) and the merge key ``<<``;
* aliases (``*name``) are refused in sequence and golden files: a 500-byte "billion laughs"
  would otherwise expand to hundreds of millions of values. Cassettes, which PyYAML-based
  recorders write with aliases (``&id001``), may use them up to :data:`ALIAS_BUDGET` values;
* nesting deeper than :data:`MAX_DEPTH` levels, more than one document, bytes that are not
  UTF-8, a UTF-16 or UTF-32 file and characters YAML does not allow (control characters, lone
  surrogates) are refused (a UTF-8 byte-order mark at the very start is allowed, as YAML allows it);

and every refusal is one :class:`YamlError` line with the line and column, never a traceback.

Speed: the document is built straight from libyaml's event stream (the C parser when PyYAML has
it, else PyYAML's own), without the intermediate node graph ``yaml.load`` composes, and with the
cyclic garbage collector paused (a large file allocates millions of containers, and the
collector's repeated passes over them cost more than the parse), and short plain strings (keys,
finish values) are stored once however often they occur. A 100,000-turn sequence file loads in
under twice the CPU of libyaml's bare event stream and under 150 MB; ``make perf`` prints the figure.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import re
import stat
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any

import yaml
from yaml import events as ev
from yaml.nodes import ScalarNode

from bench.catalogue.files import display_path
from bench.errors import UnusableInput

LOADER: type[yaml.SafeLoader] | type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""The event source: libyaml's C parser where PyYAML was built with it, else the pure-Python one."""

MAX_DEPTH = 100
"""Deepest nesting accepted; the catalogue's files nest five levels at most."""

MAX_BYTES = 256 << 20
"""Largest YAML file read (256 MiB; a 100,000-turn sequence file is about 10 MB)."""

ALIAS_BUDGET = 1_000_000
"""Values that aliases may add by repetition when they are allowed at all (cassettes)."""

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_SHARED_LENGTH = 40
"""Plain strings up to this length are kept once however often they occur (keys, finish values)."""
_OTHER_SCALARS = frozenset({"tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"})


class YamlError(UnusableInput):
    """YAML the bench cannot use. ``detail`` is ``<what>: line L, column C: <problem>`` and
    ``str()`` puts the file in front when the reader was given one."""

    def __init__(self, detail: str, file: str | None = None) -> None:
        self.detail = detail
        self.file = file
        super().__init__(f"{file}: {detail}" if file else detail)


class _Refusal(Exception):
    """A problem at a known place in the text, turned into a YamlError by the caller."""

    def __init__(self, mark: Any, problem: str) -> None:
        super().__init__(problem)
        self.mark = mark
        self.problem = problem


def where(mark: Any) -> str:
    """``line L, column C`` (1-based) of a PyYAML mark."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def read_yaml(path: Path, *, aliases: bool = False, shown: str | None = None) -> Any:
    """Read the YAML file at `path` into plain data; raise YamlError naming `shown` (default:
    the path relative to the working directory) and the line and column of the problem.

    Only a regular file of at most :data:`MAX_BYTES` is read: a FIFO (or a link to one, or to
    ``/dev/zero``) is refused at once instead of blocking or filling memory."""
    name = shown if shown is not None else display_path(path)
    try:
        data = _regular_file_bytes(path)
    except OSError as exc:
        raise YamlError(f"cannot be read: {exc.strerror or exc}", name) from None
    try:
        return parse_yaml(data, aliases=aliases)
    except YamlError as exc:
        raise YamlError(exc.detail, name) from None


def _regular_file_bytes(path: Path) -> bytes:
    """The bytes of `path`, opened without blocking (a FIFO with no writer would block the open) and
    refused unless it is a regular file within :data:`MAX_BYTES`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode)
                    else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a socket")
            raise OSError(errno.EINVAL, f"{kind}, not a regular file")
        if info.st_size > MAX_BYTES:
            raise OSError(errno.EFBIG, f"{info.st_size:,} bytes, more than the {MAX_BYTES:,} a YAML file may hold")
        return fh.read()  # sized by fstat; read(n) would set aside n bytes first


def parse_yaml(data: str | bytes, *, aliases: bool = False) -> Any:
    """Parse one YAML document (text or UTF-8 bytes) into plain data; see the module docstring
    for what is refused. An empty document is None."""
    if isinstance(data, bytes):
        _check_utf8(data)
    loader = None
    try:
        loader = LOADER(data)
        with paused_gc():
            return _build(loader, aliases)
    except _Refusal as exc:
        raise YamlError(f"not valid YAML: {where(exc.mark)}: {exc.problem}") from None
    except (yaml.reader.ReaderError, UnicodeEncodeError) as exc:  # a character offset at best, not a line
        raise YamlError(f"not valid YAML: {_unprintable(data, exc)}") from None
    except yaml.YAMLError as exc:
        raise YamlError(f"not valid YAML: {yaml_error_line(exc, data)}") from None
    finally:
        if loader is not None:
            loader.dispose()


_UNPRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character YAML 1.1 does not allow in a stream (control characters, lone surrogates, U+FFFE/FFFF)."""


def _unprintable(data: str | bytes, exc: Exception) -> str:
    """``line L, column C: ...`` for the first character the reader refused."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    found = _UNPRINTABLE.search(text)
    if found is None:
        return str(exc).splitlines()[0]
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return f"line {line}, column {column}: the character U+{ord(found.group()):04X} is not allowed in YAML"


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block. Building and validating a large document
    allocates millions of containers, none of them garbage yet, and the collector's repeated
    passes over them cost several times the work itself; it runs again afterwards as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def yaml_error_line(exc: yaml.YAMLError, text: str | bytes | None = None) -> str:
    """A PyYAML error as one line: ``line L, column C: problem``. Given the document's `text`, a
    problem at a tab says so (PyYAML names it only sometimes): a tab looks like spaces to whoever
    reads the file."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        if text is not None and "tab" not in str(problem) and _char_at(text, mark) == "\t":
            problem = f"{problem}: a tab (YAML indents with spaces only)"
        return f"{where(mark)}: {problem}"
    return str(problem)


def _char_at(text: str | bytes, mark: Any) -> str:
    """The character at PyYAML mark `mark` (0-based line and column) of `text`, or ''."""
    lines = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).split("\n")
    if not 0 <= int(mark.line) < len(lines):
        return ""
    line, column = int(mark.line), int(mark.column)
    return lines[line][column:column + 1]


def _check_utf8(data: bytes) -> None:
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        raise YamlError("not UTF-8 text: it starts with a UTF-32 byte-order mark (save it as UTF-8)")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise YamlError("not UTF-8 text: it starts with a UTF-16 byte-order mark (save it as UTF-8)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[data.rfind(b"\n", 0, exc.start) + 1:exc.start].decode("utf-8", "replace")) + 1
        raise YamlError(f"not UTF-8 text: line {line}, column {column}: byte 0x{data[exc.start]:02x} "
                        f"({exc.reason})") from None


class _Open:
    """A mapping or list being filled, with what it needs for error messages and alias budgets."""

    __slots__ = ("anchor", "key", "size_at_start", "value")

    def __init__(self, value: dict[Any, Any] | list[Any], anchor: str | None, size_at_start: int) -> None:
        self.value = value
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.size_at_start = size_at_start


_NO_KEY: Any = object()
_UNSEEN: Any = object()


def _scalar(loader: Any, value: str, tag: str, event: Any) -> Any:
    """The value of a scalar with a known tag; anything but plain data is refused."""
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return loader.bool_values[value.lower()]
    if tag == _INT or tag in _OTHER_SCALARS:
        constructors: dict[str, Callable[[Any, ScalarNode], Any]] = loader.yaml_constructors
        try:
            return constructors[tag](loader, ScalarNode(tag, value, event.start_mark, event.end_mark, event.style))
        except Exception:  # any failure of PyYAML's constructor is this one problem
            raise _Refusal(event.start_mark, f"{value!r} is not a valid {_short(tag)}") from None
    if tag == _MERGE:
        raise _Refusal(event.start_mark, "merge keys (<<) are not allowed: write the keys out")
    raise _Refusal(event.start_mark, f"the tag {_short(tag)} is not allowed (plain data only)")


def _opened(event: Any, mapping: bool, top: _Open, depth: int, size: int) -> _Open:
    """The mapping or list `event` starts, at `depth` and after `size` values; refused when it has a tag
    other than its own, stands where a mapping key goes, or is nested more than :data:`MAX_DEPTH` deep."""
    tag = event.tag
    if tag is not None and tag != "!" and tag != (_MAP if mapping else _SEQ):
        raise _Refusal(event.start_mark, f"the tag {_short(tag)} is not allowed (plain data only)")
    if top.key is _NO_KEY and type(top.value) is dict:
        raise _Refusal(event.start_mark,
                       f"a mapping key must be a plain value, not a {'mapping' if mapping else 'list'}")
    if depth >= MAX_DEPTH:
        raise _Refusal(event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
    return _Open({} if mapping else [], event.anchor, size)


def _aliased(event: Any, anchored: dict[str, tuple[Any, int]], aliases: bool, extra: int) -> tuple[Any, int]:
    """The value alias `event` repeats and how many values it stands for; refused where aliases are not
    allowed, when it names no finished anchor, or when it would take the values aliases added (`extra`
    so far) over :data:`ALIAS_BUDGET`."""
    if not aliases:
        raise _Refusal(event.start_mark, f"alias *{event.anchor}: aliases are not allowed here (write the value out)")
    if event.anchor not in anchored:
        raise _Refusal(event.start_mark, f"alias *{event.anchor} refers to no finished anchor")
    value, count = anchored[event.anchor]
    if extra + count > ALIAS_BUDGET:
        raise _Refusal(event.start_mark, f"aliases expand to more than {ALIAS_BUDGET:,} values")
    return value, count


def _check_key(value: Any, mapping: Container[Any], event: Any) -> None:
    """Refuse `value` as the next key of `mapping`: one it already has, or one that cannot be a key."""
    try:
        taken = value in mapping
    except TypeError:  # unhashable: only a collection built through an alias gets here
        raise _Refusal(event.start_mark, "a mapping key must be a plain value") from None
    if taken:
        raise _Refusal(event.start_mark, f"duplicate key {value!r}")


def _plain(loader: Any, event: Any, plain: dict[str, Any]) -> Any:
    """The value of a plain untagged scalar not in `plain` yet, its type decided by its text; kept in
    `plain` when short (keys and finish values repeat in every turn)."""
    value = event.value
    tag = loader.resolve(ScalarNode, value, event.implicit)
    known = value if tag == _STR else _scalar(loader, value, tag, event)
    if len(value) <= _SHARED_LENGTH:
        plain[value] = known
    return known


def _counted_scalar(event: Any, value: Any, anchored: dict[str, tuple[Any, int]], size: int) -> int:
    """The values built so far (`size`) with the scalar `event` made (`value`), kept under its anchor:
    where aliases are allowed, what the alias budget counts."""
    if event.anchor is not None:
        anchored[event.anchor] = (value, 1)
    return size + 1


def _closed(done: _Open, anchored: dict[str, tuple[Any, int]], size: int) -> Any:
    """The value of the mapping or list `done` that just ended, after `size` values, kept under its anchor."""
    if done.anchor is not None:
        anchored[done.anchor] = (done.value, size - done.size_at_start)
    return done.value


def _documents_begun(event: Any, documents: int) -> int:
    """How many documents have begun, after the stream or document event `event`; a second is refused."""
    if type(event) is not ev.DocumentStartEvent:
        return documents
    if documents:
        raise _Refusal(event.start_mark, "expected one document, found another (---)")
    return documents + 1


_EVENTS = (ev.ScalarEvent, ev.AliasEvent, ev.StreamEndEvent, ev.MappingStartEvent, ev.SequenceStartEvent,
           ev.MappingEndEvent, ev.SequenceEndEvent)
"""The event classes :func:`_build` tells apart, in the order it takes them into locals."""


def _build(loader: Any, aliases: bool) -> Any:
    """Build the document from the event stream: each value made as its event arrives (scalars here, the
    rest by the functions above) and put into its parent, refusing what the module docstring lists.
    Scalars and placing are inline: they run for every value of a file of millions."""
    get_event = loader.get_event
    scalar_event, alias_event, stream_end, mapping_start, sequence_start, mapping_end, sequence_end = _EVENTS
    plain: dict[str, Any] = {}  # short plain scalar -> its value, one object each (keys repeat in every turn)
    anchored: dict[str, tuple[Any, int]] = {}  # anchor -> (value, how many values it stands for)
    stack: list[_Open] = []
    top = document = _Open([], None, 0)  # top: stack[-1] kept at hand, else the list the document's value goes in
    size = extra = documents = 0  # values built so far (aliases counted as what they repeat); added by aliases
    while True:
        event = get_event()
        cls = type(event)
        if cls is scalar_event:
            value = event.value
            if event.tag is None and event.implicit[0]:  # plain and untagged: its text decides its type
                known = plain.get(value, _UNSEEN)
                value = _plain(loader, event, plain) if known is _UNSEEN else known
            elif event.tag is not None and event.tag != "!":
                value = _scalar(loader, value, event.tag, event)
            if aliases:
                size = _counted_scalar(event, value, anchored, size)
        elif cls is mapping_start or cls is sequence_start:
            top = _opened(event, cls is mapping_start, top, len(stack), size)
            stack.append(top)
            size += 1
            continue
        elif cls is mapping_end or cls is sequence_end:
            value = _closed(stack.pop(), anchored, size)
            top = stack[-1] if stack else document
        elif cls is alias_event:
            value, count = _aliased(event, anchored, aliases, extra)
            size += count
            extra += count
        elif cls is stream_end:
            return document.value[0] if document.value else None
        else:  # StreamStart, DocumentStart, DocumentEnd
            documents = _documents_begun(event, documents)
            continue
        # `value` is complete: put it into its parent
        container = top.value
        if type(container) is list:
            container.append(value)
        elif top.key is _NO_KEY:
            _check_key(value, container, event)
            top.key = value
        else:
            container[top.key] = value
            top.key = _NO_KEY


def _short(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


__all__ = ["ALIAS_BUDGET", "LOADER", "MAX_DEPTH", "YamlError", "parse_yaml", "paused_gc", "read_yaml", "where",
           "yaml_error_line"]
