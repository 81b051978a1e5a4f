"""The fault recipe: its YAML vocabulary, validated as the sequence format is, and the named presets.

A recipe says what goes wrong with the server's answers and how fast they arrive::

    seed: 7                       # the probability draws' seed (check --trials adds the trial index)
    pace: {ttft_ms: 300, tokens_per_second: 40, jitter_ms: 20}
    faults:
      - fault: status             # answer with an HTTP error instead of the turn
        status: 429
        retry_after: 1
        requests: [1]             # the run's first model request only
      - fault: truncate           # end the stream cleanly after 3 frames: no finish, no error event
        after_frames: 3
        probability: 0.5          # on each request, with this probability (seeded)

Validation is strict, like the sequence format's (:mod:`bench.catalogue.load`): an unknown key, a
missing or out-of-range field is one line naming the file and the field
(``faults.yaml: faults[0].truncate.after_frames: ...``) and exit status 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bench.catalogue.files import display_path, what_it_is
from bench.catalogue.load import describe_validation_error, field_path
from bench.catalogue.yaml_read import YamlError, parse_yaml, read_yaml
from bench.errors import UnusableInput

FaultName: TypeAlias = Literal["truncate", "disconnect", "duplicate", "corrupt", "status", "stall"]
"""What a fault does to one answer:

- ``truncate``: the stream ends cleanly after N frames (or N ms): no finish, no error event;
- ``disconnect``: the connection breaks after N frames (or N ms), the body never ends;
- ``duplicate``: one frame is sent twice;
- ``corrupt``: one frame's bytes are garbled (same length; its JSON no longer parses);
- ``status``: an HTTP error status in place of the answer, as the wire's provider sends it, with
  ``Retry-After`` when the recipe gives one;
- ``stall``: a pause of N seconds before one frame.
"""

FAULTS: tuple[FaultName, ...] = ("truncate", "disconnect", "duplicate", "corrupt", "status", "stall")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True)


class _Where(_Strict):
    requests: list[Annotated[int, Field(ge=1)]] | None = Field(None, min_length=1)
    """Which model requests of a run it applies to (1 is the run's first); absent: every request."""
    probability: float = Field(1.0, ge=0, le=1, allow_inf_nan=False)
    """The chance it applies to a request it may apply to, drawn from the seeded generator."""


class _Cut(_Where):
    after_frames: int | None = Field(None, ge=0)
    """Frames of the answer that go out before the cut (0: none)."""
    after_ms: float | None = Field(None, ge=0, allow_inf_nan=False)
    """Milliseconds after the answer starts at which the cut comes (frames due later are not sent)."""

    @model_validator(mode="after")
    def _one_point(self) -> _Cut:
        if (self.after_frames is None) == (self.after_ms is None):
            raise ValueError("give after_frames or after_ms (one of them)")
        return self


class TruncateIn(_Cut):
    """The stream ends cleanly (a JSON answer: half its body, then the connection breaks)."""

    fault: Literal["truncate"]


class DisconnectIn(_Cut):
    """The connection breaks; the body never ends (a JSON answer: after half its body)."""

    fault: Literal["disconnect"]


class DuplicateIn(_Where):
    """Frame `frame` (1 is the first) is sent twice. A JSON answer (one body) is left as it is."""

    fault: Literal["duplicate"]
    frame: int = Field(1, ge=1)


class CorruptIn(_Where):
    """Frame `frame` (1 is the first; a JSON answer's body is frame 1) is garbled, keeping its length."""

    fault: Literal["corrupt"]
    frame: int = Field(1, ge=1)


class StatusIn(_Where):
    """An HTTP error in place of the answer, in the wire's provider's shape (docs/how-to/faults.md)."""

    fault: Literal["status"]
    status: int = Field(ge=400, le=599)
    retry_after: int | None = Field(None, ge=0)
    """Seconds sent as ``Retry-After`` (Gemini: also a ``google.rpc.RetryInfo`` detail)."""
    message: str | None = None
    """The error's message (default: the provider's words for that status)."""


class StallIn(_Where):
    """A pause before frame `before_frame` (1: before the answer's first byte)."""

    fault: Literal["stall"]
    seconds: float = Field(gt=0, allow_inf_nan=False)
    before_frame: int = Field(1, ge=1)


FAULT_MODELS: tuple[type[BaseModel], ...] = (TruncateIn, DisconnectIn, DuplicateIn, CorruptIn, StatusIn, StallIn)
"""The schema of each fault, in the order of :data:`FAULTS`."""

FaultIn: TypeAlias = Annotated[TruncateIn | DisconnectIn | DuplicateIn | CorruptIn | StatusIn | StallIn,
                               Field(discriminator="fault")]


class PaceIn(_Strict):
    """How fast a stream arrives: the first frame after `ttft_ms`; each later frame as if it carried
    :data:`TOKENS_PER_FRAME` tokens at `tokens_per_second`; each delay moved by up to `jitter_ms`
    either way (seeded). A JSON answer waits `ttft_ms` only."""

    ttft_ms: float = Field(0, ge=0, allow_inf_nan=False)
    tokens_per_second: float | None = Field(None, gt=0, allow_inf_nan=False)
    jitter_ms: float = Field(0, ge=0, allow_inf_nan=False)


class RecipeIn(_Strict):
    """A fault recipe file."""

    seed: int = 0
    """The seed of the probability and jitter draws (``check --trials`` adds the trial index)."""
    pace: PaceIn | None = None
    faults: list[FaultIn] = Field(default_factory=list)


TOKENS_PER_FRAME = 6
"""Tokens one stream frame stands for when pacing by tokens per second: the server streams text in
deltas of 24 characters (:data:`bench.wires.base.CHUNK`), about 6 tokens of English."""

Fault: TypeAlias = TruncateIn | DisconnectIn | DuplicateIn | CorruptIn | StatusIn | StallIn


@dataclass(frozen=True, slots=True)
class Recipe:
    """A validated recipe: its name (a preset's, or the file's path), seed, pacing and faults in order."""

    name: str
    seed: int = 0
    pace: PaceIn | None = None
    faults: tuple[Fault, ...] = ()

    def with_seed(self, seed: int) -> Recipe:
        return Recipe(self.name, seed, self.pace, self.faults)


class RecipeError(UnusableInput):
    """A recipe the bench cannot use; ``str()`` is one line naming the file and the field."""


PRESETS: dict[str, dict[str, Any]] = {
    "cut-after-3": {"faults": [{"fault": "truncate", "after_frames": 3, "requests": [1]}]},
    "disconnect-after-3": {"faults": [{"fault": "disconnect", "after_frames": 3, "requests": [1]}]},
    "rate-limited": {"faults": [{"fault": "status", "status": 429, "retry_after": 1, "requests": [1]}]},
    "overloaded": {"faults": [{"fault": "status", "status": 529, "retry_after": 1, "requests": [1]}]},
    "server-error": {"faults": [{"fault": "status", "status": 500, "requests": [1]}]},
    "duplicate-frame": {"faults": [{"fault": "duplicate", "frame": 2, "requests": [1]}]},
    "corrupt-frame": {"faults": [{"fault": "corrupt", "frame": 2, "requests": [1]}]},
    "stall-5s": {"faults": [{"fault": "stall", "seconds": 5, "before_frame": 2, "requests": [1]}]},
    "slow-stream": {"pace": {"ttft_ms": 400, "tokens_per_second": 60, "jitter_ms": 20}},
    "flaky": {"faults": [{"fault": "truncate", "after_frames": 3, "probability": 0.3}]},
}
"""Named recipes for the common cases (``--faults cut-after-3``): each fault on the run's first
request, but ``flaky`` (a cut on any request with probability 0.3) and ``slow-stream`` (pacing only).
``overloaded`` is Anthropic's 529; on the other wires a 529 is an unknown 5xx, so use
``server-error`` or a recipe with 503 there."""


def parse_recipe(data: Any, name: str) -> Recipe:
    """Validate parsed YAML into a :class:`Recipe`; :class:`RecipeError` names `name` and the field."""
    if not isinstance(data, dict):
        got = "nothing (an empty file)" if data is None else f"{type(data).__name__} {data!r:.60}"
        raise RecipeError(f"{name}: expected a mapping (key: value) at the top level, got {got}")
    try:
        raw = RecipeIn.model_validate(data)
    except ValidationError as exc:
        raise RecipeError(f"{name}: {_describe(exc)}") from None
    return Recipe(name, raw.seed, raw.pace, tuple(raw.faults))


def _describe(exc: ValidationError) -> str:
    """The sequence format's one-line description of a validation error, in the recipe's words."""
    first = exc.errors(include_url=False)[0]
    if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        got = first["input"].get("fault") if isinstance(first["input"], dict) else None
        where = field_path(tuple(first["loc"]))
        names = ", ".join(map(repr, FAULTS))
        problem = "required, but missing" if got is None else f"expected one of {names}, got {got!r}"
        return f"{where}.fault: {problem}"
    plainer = _number_problem(first)
    if plainer is not None:
        return f"{field_path(tuple(first['loc']))}: {plainer}"
    text = describe_validation_error(exc)
    text = text.replace("(not part of the sequence format)", "(not part of the recipe format)")
    return text.replace(": Value error, ", ": ")


_WAITS = frozenset({"seconds", "ttft_ms", "after_ms", "jitter_ms"})
"""The fields that are a wait: an endless one would hold the answer forever."""

_EXPONENT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")
"""A number in exponent form, as YAML 1.2 reads it; YAML 1.1 (PyYAML) needs a dot and a signed
exponent, so it reads ``1e3`` and ``1.0e3`` as strings."""


def _number_problem(error: Any) -> str | None:
    """Plain words for a number the recipe cannot use: one that is not finite (``.inf``, ``.nan``),
    with what it would do, or one YAML read as a string because of how it is written (``1e3``)."""
    value, field = error["input"], next((str(p) for p in reversed(error["loc"]) if isinstance(p, str)
                                         and p not in ("float", "int")), "")
    if error["type"] == "finite_number":
        endless = ": an endless wait, the answer would never come" if field in _WAITS else ""
        return f"{value} is not a finite number{endless}"
    if error["type"] in ("float_type", "int_type") and isinstance(value, str) and _EXPONENT.fullmatch(value):
        mantissa, _, power = value.lower().partition("e")
        number = float(value)
        spelled = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{power if power[0] in '+-' else '+' + power}"
        plain = str(int(number)) if number.is_integer() and abs(number) < 1e16 else repr(number)
        return (f"YAML read {value!r} as a string, not a number (YAML 1.1 wants a dot and a signed exponent): "
                f"write {plain}" + ("" if error["type"] == "int_type" else f" or {spelled}"))
    return None


def load_recipe(spec: str) -> Recipe:
    """A preset by name (:data:`PRESETS`), else the recipe file at path `spec`; a path that is there
    but is not a regular file is named as what it is, and never opened (a FIFO would block)."""
    path = Path(spec)
    if spec in PRESETS and not path.exists():
        return parse_recipe(PRESETS[spec], spec)
    if not path.exists():
        known = ", ".join(PRESETS)
        raise RecipeError(f"{spec}: no such recipe file, nor a preset ({known})")
    if not path.is_file():
        raise RecipeError(f"{spec}: {what_it_is(path)}, not a recipe file")
    shown = display_path(path)
    try:
        data = read_yaml(path, shown=shown)
    except YamlError as exc:
        raise RecipeError(str(exc)) from None
    return parse_recipe(data, shown)


def parse_recipe_text(text: str, name: str = "<recipe>") -> Recipe:
    """A recipe from YAML text (tests, the Python API)."""
    try:
        data = parse_yaml(text)
    except YamlError as exc:
        raise RecipeError(f"{name}: {exc.detail}") from None
    return parse_recipe(data, name)
