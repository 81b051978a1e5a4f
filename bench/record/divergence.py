"""Where a loop's requests first differ from a recording's (``stopbench diff``).

A recording (``NAME-<k>.yaml`` and its ``NAME-<k>.cassette``, :mod:`bench.record.recording`) is
served to the loop by ``stopbench check``'s machinery (:func:`bench.check.runner.run_program`, the
replay server and its process reaper); the loop's model requests are then compared, in order, with
the recorded ones. Both sides are normalised the same way before they are compared: the body parsed
as JSON and written with sorted keys and an indent, the loop's redacted with the recording's
patterns (a recording holds no secret, so a request carrying one would differ by it alone), and the
ids the replay server gives its replies (``...stopbench-RUN-N``, which name the server's run and
request number) written as ``stopbench-RUN-N``. The first request that differs is reported with both
sides, as a unified diff; a loop that sent fewer or more requests than the recording differs at the
first request one side lacks.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.catalogue.yaml_read import YamlError, read_yaml
from bench.errors import UnusableInput
from bench.importers.cassette import dialect_of_uri
from bench.record.redact import Redactor
from bench.wires.registry import wire

_SERVED_ID = re.compile(r"stopbench-\d+-\d+")


@dataclass(frozen=True, slots=True)
class Request:
    """One model request: its path and its body (parsed JSON, or the text when it is not JSON)."""

    path: str
    body: Any


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first request (1-based) where the two sides differ; a side that has no such request is None."""

    number: int
    recorded: Request | None
    loop: Request | None

    def diff(self, rx: Redactor | None = None) -> str:
        """Both sides as a unified diff of their normalised forms (recording first)."""
        left = normalised(self.recorded, None).splitlines(keepends=True)
        right = normalised(self.loop, rx).splitlines(keepends=True)
        lines = difflib.unified_diff(left, right, fromfile=f"recorded request {self.number}",
                                     tofile=f"the loop's request {self.number}", n=3)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def cassette_of(sequence_file: Path) -> Path:
    """The cassette a recorded sequence file was built from (beside it, same stem)."""
    return sequence_file.with_suffix(".cassette")


def recorded_requests(cassette: Path) -> list[Request]:
    """The model requests a recording's cassette holds, in order (side requests left out)."""
    try:
        data = read_yaml(cassette, aliases=True)
    except YamlError as exc:
        raise UnusableInput(f"{cassette}: {exc.detail}") from None
    except OSError as exc:
        raise UnusableInput(f"{cassette}: cannot read it ({exc.strerror or exc})") from None
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list):
        raise UnusableInput(f"{cassette}: not a recording's cassette (no 'interactions' list)")
    out: list[Request] = []
    for inter in interactions:
        req = inter.get("request") if isinstance(inter, dict) else None
        if not isinstance(req, dict) or not isinstance(req.get("uri"), str):
            continue
        path = urlsplit(req["uri"]).path
        out.append(Request(path, _parsed(req.get("body"))))
    return [r for r in out if is_model_path(r.path)]


def is_model_path(path: str) -> bool:
    dialect = dialect_of_uri(path)
    return dialect is not None and wire(dialect).route(path) == "model"


def _parsed(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return body
    return body


def normalised(request: Request | None, rx: Redactor | None) -> str:
    """A request as the comparison sees it: its path, then its body as sorted, indented JSON, the
    replay server's reply ids generalised, redacted with `rx` when given."""
    if request is None:
        return "(no such request)\n"
    text = request.body if isinstance(request.body, str) else json.dumps(request.body, sort_keys=True, indent=2,
                                                                         ensure_ascii=False)
    text = _SERVED_ID.sub("stopbench-RUN-N", f"POST {request.path}\n{text}\n")
    return rx.text(text) if rx is not None else text


def first_divergence(recorded: list[Request], loop: list[Request], rx: Redactor | None) -> Divergence | None:
    """The first request where the loop's differ from the recorded ones, or None when they agree."""
    for n in range(max(len(recorded), len(loop))):
        mine = recorded[n] if n < len(recorded) else None
        theirs = loop[n] if n < len(loop) else None
        if mine is None or theirs is None or normalised(mine, None) != normalised(theirs, rx):
            return Divergence(n + 1, mine, theirs)
    return None
