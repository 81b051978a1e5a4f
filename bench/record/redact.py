"""What the recording proxy never writes: credential headers, and secrets in bodies, whole or streamed.

Headers: every credential header (:data:`CREDENTIAL_HEADERS`, and any header whose name says it is a
key, a token, a secret or a signature) is left out of the recording; a ``key`` query parameter
(Gemini's ``?key=AIza...``) is masked in the recorded URI.

Bodies: the patterns (:data:`DEFAULT_PATTERNS` plus the caller's ``--redact``) are applied twice.

1. Over the *reassembled* stream: the string values of a stream's events (SSE ``data:`` JSON, the
   JSON payloads of AWS event-stream messages) are joined per field path, in order, so that a
   secret split across two deltas (``"sk-ant-ap"`` then ``"i03-..."``, cline/cline#9797) is one
   match; each match is mapped back to the pieces it spans: the first piece gets :data:`MASK` where
   the secret began, the others lose their part of it. Only the events that held a secret are
   rewritten, by replacing the JSON string literal in place where it is found once as written,
   else by writing the event's JSON again (compact); every other byte stays as it came.
2. Over the raw text of every body and URI (a secret inside one value, a header echoed in a body,
   a comment line), also as its escapes spell it (JSON ``\\u`` and ``\\/``, URL ``%XX``), and over
   bytes that are not UTF-8 (:meth:`Redactor.data`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MASK = "[REDACTED]"
"""What a secret is replaced with, stretched to the secret's length (:func:`mask`)."""


def mask(length: int) -> str:
    """The mask of a secret of `length` characters: as long as the secret, so that every piece of
    a stream keeps its length and the replay server, cutting the redacted text into its deltas,
    cuts it where the upstream did (``[REDACTED]`` padded with ``*``; only ``*`` when shorter)."""
    if length < len(MASK):
        return "*" * length
    return MASK[:-1] + "*" * (length - len(MASK)) + "]"

DEFAULT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("Anthropic API key", r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    ("OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    ("Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("bearer token", r"(?i:bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*"),
    ("GitHub token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("Slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
)
"""(what it is, pattern): the common key shapes, as their issuers document their prefixes."""

CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie",
    "x-amz-security-token", "x-amz-content-sha256", "x-amz-date", "x-amz-signature", "x-amz-credential",
})
"""Headers never written (AWS SigV4 signs with ``authorization``; its session token and the signed
date and hash travel beside it)."""

_CREDENTIAL_WORDS = re.compile(r"(?:key|token|secret|signature|credential|auth|cookie|session)", re.I)


def is_credential_header(name: str) -> bool:
    """Whether a header is never written: a known credential header or one whose name says it is one."""
    low = name.lower()
    return low in CREDENTIAL_HEADERS or bool(_CREDENTIAL_WORDS.search(low))


@dataclass(frozen=True, slots=True)
class Redactor:
    """The patterns a recording is redacted with; :func:`redactor` builds one."""

    patterns: tuple[re.Pattern[str], ...]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The stretches of `text` any pattern matches, as written or once its escapes are undone
        (:func:`unescaped`: a key sent as ``\\u0073\\u006b...`` or ``%73%6b...``), merged where they
        overlap, in order."""
        found = [(m.start(), m.end()) for p in self.patterns for m in p.finditer(text) if m.end() > m.start()]
        if _ESCAPE.search(text):
            shadow = _ESCAPE.sub(_char, text)
            hits = [(m.start(), m.end()) for p in self.patterns for m in p.finditer(shadow) if m.end() > m.start()]
            if hits:  # mapped back to `text` only then: the map costs more than the reading
                where = unescaped(text)[1]
                found += [(where(start), where(end)) for start, end in hits]
        found.sort()
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def text(self, text: str) -> str:
        """`text` with every secret replaced by :data:`MASK`."""
        return self.pieces([text])[0]

    def pieces(self, parts: Sequence[str]) -> list[str]:
        """`parts` (the pieces of one text, in order) redacted over their concatenation: each secret
        is replaced by its :func:`mask`, and each piece gets the stretch of the mask that covers its
        own stretch of the secret, so every piece keeps its length."""
        joined = "".join(parts)
        spans = self.spans(joined)
        if not spans:
            return list(parts)
        chars = list(joined)
        for start, end in spans:
            chars[start:end] = mask(end - start)
        masked = "".join(chars)
        out: list[str] = []
        offset = 0
        for part in parts:
            out.append(masked[offset:offset + len(part)])
            offset += len(part)
        return out

    def data(self, data: bytes) -> bytes:
        """`data` with every secret masked, as bytes: read as UTF-8 with each byte that is not kept as
        itself (``surrogateescape``), so every other byte comes back as it was."""
        text = data.decode("utf-8", "surrogateescape")
        out = self.text(text)
        return data if out == text else out.encode("utf-8", "surrogateescape")


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\(/)|%([0-9a-fA-F]{2})")
"""A JSON ``\\uXXXX`` or ``\\/`` escape, or a URL's ``%XX``: the ways a client may write a key's characters."""


def _char(m: re.Match[str]) -> str:
    """The character an escape (:data:`_ESCAPE`) stands for."""
    hexa, slash, pct = m.groups()
    return "/" if slash is not None else chr(int(hexa or pct, 16))


def unescaped(text: str) -> tuple[str, Callable[[int], int]]:
    """`text` with its escapes (:data:`_ESCAPE`) undone, and the map from a position in it back to
    `text` (an escaped character's position is its escape's start; the end of one is its escape's end)."""
    out: list[str] = []
    marks: list[tuple[int, int]] = [(0, 0)]  # (position in the unescaped text, position in `text`)
    done = shown = 0
    for m in _ESCAPE.finditer(text):
        out.append(text[done:m.start()])
        shown += m.start() - done
        marks.append((shown, m.start()))
        out.append(_char(m))
        shown += 1
        marks.append((shown, m.end()))
        done = m.end()
    out.append(text[done:])
    keys = [s for s, _ in marks]

    def where(pos: int) -> int:
        i = bisect.bisect_right(keys, pos) - 1
        at, raw = marks[i]
        return raw + (pos - at)

    return "".join(out), where


def redactor(extra: Iterable[str] = (), *, defaults: bool = True) -> Redactor:
    """A redactor with the default key shapes (unless `defaults` is false) and the `extra` patterns
    (Python regular expressions). Raises ``re.error`` for a pattern that does not compile."""
    sources = [p for _, p in DEFAULT_PATTERNS] if defaults else []
    sources += list(extra)
    return Redactor(tuple(re.compile(p) for p in sources))


# ---------------------------------------------------------------- JSON values of a stream


def _leaves(value: Any, path: str, out: list[tuple[str, list[Any], Any]]) -> None:
    """Every string of `value` as (path, container, key) so it can be set again."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                out.append((f"{path}.{key}", [value], key))
            else:
                _leaves(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                out.append((f"{path}[{i}]", [value], i))
            else:
                _leaves(item, f"{path}[{i}]", out)


def redact_values(values: Sequence[Any], rx: Redactor, group: Callable[[int], str] = lambda i: "") -> set[int]:
    """Redact the JSON values of one stream in place, over their strings joined per field path (and
    per `group` of the value's index, e.g. a Bedrock event type); the indices of the values changed."""
    groups: dict[str, list[tuple[int, list[Any], Any]]] = {}
    for i, value in enumerate(values):
        found: list[tuple[str, list[Any], Any]] = []
        _leaves(value, "", found)
        for path, holder, key in found:
            groups.setdefault(f"{group(i)}{path}", []).append((i, holder, key))
    changed: set[int] = set()
    for members in groups.values():
        parts = [holder[0][key] for _, holder, key in members]
        redacted = rx.pieces(parts)
        for (i, holder, key), before, after in zip(members, parts, redacted, strict=True):
            if after != before:
                holder[0][key] = after
                changed.add(i)
    return changed


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def rewrite_json(raw: str, before: Any, after: Any) -> str:
    """The JSON text `raw` (which parsed as `before`) made to say `after`: each changed string
    literal replaced where it occurs once as ``json.dumps`` writes it, so the rest keeps its bytes;
    else the whole value written again (compact)."""
    old: list[tuple[str, list[Any], Any]] = []
    new: list[tuple[str, list[Any], Any]] = []
    _leaves(before, "", old)
    _leaves(after, "", new)
    text = raw
    for (_, h1, k1), (_, h2, k2) in zip(old, new, strict=True):
        a, b = h1[0][k1], h2[0][k2]
        if a == b:
            continue
        for lit_a, lit_b in ((json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)),
                             (json.dumps(a), json.dumps(b))):
            if text.count(lit_a) == 1:
                text = text.replace(lit_a, lit_b)
                break
        else:
            return compact(after)
    try:
        if json.loads(text) == after:
            return text
    except ValueError:
        pass
    return compact(after)


# ---------------------------------------------------------------- server-sent events

_BLOCKS = re.compile(r"(\r\n\r\n|\n\n|\r\r)")


def redact_sse(text: str, rx: Redactor) -> str:
    """An SSE (or JSON-lines) stream's text redacted over its reassembled values, then as raw text;
    the framing (blank lines, event names, comments, line endings) is kept byte for byte."""
    blocks = _BLOCKS.split(text)  # block, separator, block, separator, ...
    where: list[tuple[int, int, str, str]] = []  # (block index, line index, prefix, JSON text)
    plain: list[tuple[int, int, str, str]] = []  # the same for data that is not JSON
    values: list[Any] = []
    split_blocks: list[list[str]] = []
    for b, block in enumerate(blocks):
        lines = block.splitlines(keepends=True)
        split_blocks.append(lines)
        if b % 2:
            continue
        for n, line in enumerate(lines):
            data = _data(line.rstrip("\r\n"))
            if data is None:
                continue
            prefix, body = data
            value = _json(body)
            if value is None:
                plain.append((b, n, prefix, body))
                continue
            where.append((b, n, prefix, body))
            values.append(value)
    originals = [json.loads(body) for *_, body in where]
    changed = redact_values(values, rx)
    for i in changed:
        b, n, prefix, body = where[i]
        _set_line(split_blocks, b, n, prefix + rewrite_json(body, originals[i], values[i]))
    for (b, n, prefix, body), after in zip(plain, rx.pieces([body for *_, body in plain]), strict=True):
        if after != body:  # data that is no JSON, reassembled across its events like the values above
            _set_line(split_blocks, b, n, prefix + after)
    joined = "".join("".join(lines) if b % 2 == 0 else blocks[b] for b, lines in enumerate(split_blocks))
    return rx.text(joined)


_FIELDS = ("event:", "id:", "retry:", ":")
"""The SSE lines that carry no data."""


def _data(line: str) -> tuple[str, str] | None:
    """A line's data and the prefix before it (``data:`` and its space; none for a JSON line), or
    None for a line that carries none (an event name, an id, a comment, a blank line)."""
    if line.startswith("data:"):
        prefix = "data: " if line.startswith("data: ") else "data:"
        return prefix, line[len(prefix):]
    if not line or line.startswith(_FIELDS):
        return None
    return "", line


def _json(body: str) -> Any:
    """The JSON object or array `body` holds, or None."""
    if not body.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _set_line(blocks: list[list[str]], b: int, n: int, text: str) -> None:
    """Line `n` of block `b` made to say `text`, its line ending kept."""
    line = blocks[b][n]
    blocks[b][n] = text + line[len(line.rstrip("\r\n")):]


# ---------------------------------------------------------------- JSON arrays and cut-off ends

_DECODER = json.JSONDecoder()
_BETWEEN = re.compile(r"[\s,]*")


def array_items(text: str) -> tuple[list[tuple[int, int, Any]], int]:
    """The whole items of the JSON array `text` holds (each its start, end and value), read one by one
    so that an array cut off gives the items before the cut, and where the whole items end (after the
    array's ``]``, or after its last whole item)."""
    start = text.find("[") + 1
    items: list[tuple[int, int, Any]] = []
    end = i = start
    while True:
        found = _BETWEEN.match(text, i)
        i = found.end() if found else i
        if i >= len(text):
            return items, end
        if text[i] == "]":
            return items, i + 1
        try:
            value, after = _DECODER.raw_decode(text, i)
        except ValueError:
            return items, end
        items.append((i, after, value))
        end = i = after


def redact_array(text: str, rx: Redactor) -> str:
    """A JSON array of stream chunks (Gemini's ``streamGenerateContent`` without SSE) redacted over its
    items' reassembled values, each changed item rewritten in place, then as raw text."""
    items, _ = array_items(text)
    values = [value for *_, value in items]
    before = json.loads(json.dumps(values))
    changed = redact_values(values, rx)
    out: list[str] = []
    done = 0
    for k in sorted(changed):
        start, end, _ = items[k]
        out += [text[done:start], rewrite_json(text[start:end], before[k], values[k])]
        done = end
    out.append(text[done:])
    return rx.text("".join(out))


def incomplete_json(line: str) -> bool:
    """Whether a stream's line is data that begins a JSON value and does not end it (cut off)."""
    data = _data(line)
    return data is not None and data[1].lstrip().startswith(("{", "[")) and _json(data[1]) is None
