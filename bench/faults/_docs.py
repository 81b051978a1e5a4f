"""The fault recipe's tables for the docs site, made from the code (``docs/_hooks/site.py`` puts them in)."""

from __future__ import annotations

import json
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from bench.faults._recipe import FAULT_MODELS, PRESETS, PaceIn, RecipeIn, parse_recipe
from bench.faults._shapes import SHAPES
from bench.wires.capture import error_kind


def presets_markdown() -> str:
    """A table of the named presets: name, the recipe it stands for (as flow YAML), what it does."""
    rows = ["| preset | recipe |", "| --- | --- |"]
    for name, data in PRESETS.items():
        parse_recipe(data, name)  # a preset that no longer validates stops the build
        rows.append(f"| `{name}` | `{json.dumps(data, separators=(', ', ': '))}` |")
    return "\n".join(rows) + "\n"


def shapes_markdown() -> str:
    """A table of the HTTP error statuses a ``status`` fault sends per wire with the provider's shape:
    the error type or code, its kind (what a loop's error handling reads), the message, the headers."""
    rows = ["| wire | status | error type or code | kind | message | headers besides `retry-after` |",
            "| --- | --- | --- | --- | --- | --- |"]
    for wire, table in SHAPES.items():
        for status, shape in sorted(table.items()):
            code = f"`{shape.code}`" if shape.code else "(from the status)"
            headers = ", ".join(f"`{k}: {v}`" for k, v in shape.headers) or ""
            rows.append(f"| {wire} | {status} | {code} | `{error_kind(status, shape.code)}` | {shape.message} | "
                        f"{headers} |")
    return "\n".join(rows) + "\n"


def _type(annotation: Any) -> str:
    """A field's type in the YAML's words: ``int``, ``list of int``, ``float or null``, a literal's value."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type(args[0])
    if origin is Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (Union, UnionType):
        return " or ".join(_type(a) for a in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if annotation is type(None):
        return "`null`"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"`{annotation.__name__.removesuffix('In').lower()}`"
    return f"`{getattr(annotation, '__name__', annotation)}`"


def _limits(info: Any) -> str:
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "length at least"}
    out = [f"{words[k]} {getattr(m, k)}" for m in info.metadata for k in words if getattr(m, k, None) is not None]
    if any(getattr(m, "allow_inf_nan", None) is False for m in info.metadata):
        out.append("finite")
    return "; ".join(out)


def _rst(text: str) -> str:
    """A docstring on one line in Markdown: ``:data:`X``` and ````x```` as `` `x` ``."""
    return re.sub(r":\w+:`", "`", " ".join(text.split())).replace("``", "`")


def recipe_markdown() -> str:
    """The recipe format: the top level, the pacing and each fault, with their fields, from the schema."""
    parts = []
    models: tuple[type[BaseModel], ...] = (RecipeIn, PaceIn, *FAULT_MODELS)
    for model in models:
        name = model.__name__.removesuffix("In")
        title = f"`fault: {name.lower()}`" if model in FAULT_MODELS else f"`{name.lower()}`"
        if model is RecipeIn:
            title = "the file (top level)"
        doc = _rst(model.__doc__ or "")
        rows = ["| field | type | default | constraints | meaning |", "| --- | --- | --- | --- | --- |"]
        for field, info in model.model_fields.items():
            if field == "fault":
                continue
            value = None if info.is_required() else info.get_default(call_default_factory=True)
            default = "required" if info.is_required() else f"`{json.dumps(value)}`"
            kind = "list of faults (below)" if field == "faults" else _type(info.annotation)
            about = _rst(info.description or "")
            rows.append(f"| `{field}` | {kind} | {default} | {_limits(info)} | {about} |")
        parts.append(f"#### {title}\n\n{doc}\n\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)
