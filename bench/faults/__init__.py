"""Faults and timing by recipe: what goes wrong with the replay server's answers, and how fast they come.

A recipe (YAML, or a named preset) cuts, breaks, duplicates, garbles or stalls a stream, answers
with an HTTP error status as the wire's provider does (``Retry-After`` included), and paces frames
by time to first token, tokens per second and jitter; each fault at given requests of a run, or
with a seeded probability. :func:`apply` is a pure function over the server's delivery plan
(:class:`bench.serve.respond.Plan`); :func:`inject` is what the server and a recording proxy call per
answer. What was done (:class:`Injected`) is kept with the request's record, and
``stopbench check`` judges the loop knowing it (:mod:`bench.check.faulted`).
"""

from bench.faults._apply import NOTHING, Injected, apply, inject, rng_for
from bench.faults._recipe import (
    FAULTS,
    PRESETS,
    TOKENS_PER_FRAME,
    FaultName,
    Recipe,
    RecipeError,
    load_recipe,
    parse_recipe,
    parse_recipe_text,
)
from bench.faults._shapes import SHAPES, Shape, status_plan
from bench.faults._steps import StepFault, step_faults

__all__ = ["FAULTS", "NOTHING", "PRESETS", "SHAPES", "TOKENS_PER_FRAME", "FaultName", "Injected", "Recipe",
           "RecipeError", "Shape", "StepFault", "apply", "inject", "load_recipe", "parse_recipe", "parse_recipe_text",
           "rng_for", "status_plan", "step_faults"]
