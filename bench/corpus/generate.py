"""A deterministic production-like corpus: sessions of tool rounds with rare edge cases, as JSON lines.

``make perf`` and the tests need a corpus of a million turns without a production trace at hand.
:func:`corpus_lines` makes one from a seed: sessions of a few to a few hundred turns, mostly tool
rounds ending in an answer, over the models the wires name (:data:`MODELS`), with the edge cases at rates of
the order production traces show (the rates in :data:`RATES` are this project's assumptions, not a
measurement: about one turn in a hundred cut off, erroring or otherwise odd). The same seed gives
the same bytes. Each line is a catalogue sequence document (:mod:`bench.corpus.decode`); a test
checks that every generated line decodes and that the writer of sequences writes the same document.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from bench.engine.model import Finish
from bench.wires.base import Wire
from bench.wires.registry import wire, wires

__all__ = ["MODELS", "RATES", "corpus_lines", "write_json_lines", "write_parquet"]

def _models() -> tuple[tuple[str, str, str, float], ...]:
    """Every wire's :attr:`~bench.wires.base.Wire.corpus_models` as (provider, model, dialect, share): the
    providers in the order of their first wire, each provider's models by share, the largest first."""
    drawn = [(w.provider or w.name, model, w.name, share) for w in wires() for model, share in w.corpus_models]
    providers = list(dict.fromkeys(p for p, *_ in drawn))
    return tuple(sorted(drawn, key=lambda m: (providers.index(m[0]), -m[3])))


MODELS: tuple[tuple[str, str, str, float], ...] = _models()
"""(provider, model, dialect, share of sessions)."""

RATES: dict[str, float] = {
    "length": 0.008,           # a reply cut off at max_tokens (with cut-off call arguments half the time)
    "error": 0.007,            # an error in place of a response
    "content_filter": 0.0005,  # a filtered reply
    "dropped_calls": 0.001,    # tool_calls finish without calls
    "stop_with_calls": 0.002,  # a stop finish carrying calls
    "missing_finish": 0.001,   # no finish sent
    "empty_stop": 0.004,       # a stop with no text and no calls
}
"""Per-turn probability of each edge case inside a session (the last turn is an answer)."""

_FINISHES: tuple[Finish, ...] = ("stop", "length", "content_filter")


def _raws(w: Wire) -> dict[str, str | None]:
    """The raw finish strings a session of `w` is drawn with: the wire's own for each finish, and for
    a turn that calls tools its tool finish, else what it sends calls with."""
    return {"tool_calls": w.raw_for_calls(), **{f: w.default_raw(f) for f in _FINISHES}}


_RAW: dict[str, dict[str, str | None]] = {m[2]: _raws(wire(m[2])) for m in MODELS}
_TOOL_FINISH = frozenset(m[2] for m in MODELS if wire(m[2]).has_tool_finish())
"""The drawn wires with a finish of their own for tool calls; on the others a call says stop."""
_TOOLS = ("read_file", "grep", "edit_file", "run_tests", "list_dir", "bash")
_ERRORS = (("rate_limit", 429, "rate_limit_error"), ("overloaded", 529, "overloaded_error"),
           ("server_error", 500, "server_error"), ("timeout", 504, None), ("context_overflow", 400,
                                                                            "context_length_exceeded"))


def _call(rng: random.Random, j: int, k: int, cut: bool = False) -> dict[str, Any]:
    name = rng.choice(_TOOLS)
    args = f'{{"path": "src/module_{rng.randrange(100)}.py"}}'
    if cut:
        args = args[: rng.randrange(3, len(args) - 2)]
    return {"id": f"call_{j}_{k}", "name": name, "arguments": args}


def _turn(rng: random.Random, dialect: str, j: int, last: bool) -> dict[str, Any]:
    raw = _RAW[dialect]
    usage = {"input_tokens": 1200 + 150 * j, "output_tokens": rng.randrange(20, 400)}
    if last:
        return {"finish": "stop", "finish_raw": raw["stop"], "content": "Done: the tests pass.", "usage": usage}
    r = rng.random()
    case = "tool_round"
    for name, rate in RATES.items():
        if r < rate:
            case = name
            break
        r -= rate
    turn: dict[str, Any]
    if case == "tool_round":
        calls = [_call(rng, j, k) for k in range(1 if rng.random() < 0.85 else rng.randint(2, 4))]
        turn = {"finish": "tool_calls", "finish_raw": raw["tool_calls"],
                "content": None if rng.random() < 0.6 else "Let me look.", "tool_calls": calls}
    elif case == "length":
        turn = {"finish": "length", "finish_raw": raw["length"], "content": "Here is the plan: first"}
        if rng.random() < 0.5:
            turn["tool_calls"] = [_call(rng, j, 0, cut=True)]
    elif case == "error":
        kind, status, code = rng.choice(_ERRORS)
        err: dict[str, Any] = {"kind": kind, "message": f"{kind} ({status})", "status": status}
        if code is not None:
            err["code"] = code
        return {"finish": "error", "finish_raw": None, "content": None, "error": err}
    elif case == "content_filter":
        turn = {"finish": "content_filter", "finish_raw": raw["content_filter"], "content": ""}
    elif case == "dropped_calls":
        # a tool finish without calls; on a wire without a tool finish, an empty stop
        finish = "tool_calls" if dialect in _TOOL_FINISH else "stop"
        turn = {"finish": finish, "finish_raw": raw[finish], "content": ""}
    elif case == "stop_with_calls":
        turn = {"finish": "stop", "finish_raw": raw["stop"], "content": "I'll run it.",
                "tool_calls": [_call(rng, j, 0)]}
    elif case == "missing_finish":
        turn = {"finish": "unknown", "finish_raw": None, "content": "Partial answer"}
    else:  # empty_stop
        turn = {"finish": "stop", "finish_raw": raw["stop"], "content": ""}
    if dialect not in _TOOL_FINISH and turn["finish"] == "tool_calls" and turn.get("tool_calls"):
        turn["finish"] = "stop"  # such a wire says its stop for a call too: the canonical finish is stop
    turn["usage"] = usage
    return turn


def corpus_lines(n_turns: int, seed: int = 14, distinct_turns: int | None = None) -> Iterator[bytes]:
    """JSON lines of sessions totalling at least `n_turns` turns, yielded one line at a time (each
    ending in a newline), then, for the repeats, one copy of all the drawn lines at a time.

    With `distinct_turns`, only the sessions of the first `distinct_turns` turns are drawn; the rest
    repeats them with fresh ids (``sess-<seed>-c<k>-...``), the same frequencies at a tenth of the cost,
    for the million-turn corpus ``make perf`` decodes."""
    rng = random.Random(seed)
    weights = [m[3] for m in MODELS]
    made = 0
    i = 0
    drawn: list[bytes] = []
    limit = n_turns if distinct_turns is None else min(n_turns, distinct_turns)
    while made < limit:
        provider, model, dialect, _ = rng.choices(MODELS, weights)[0]
        length = min(int(rng.expovariate(1 / 20)) + 2, 400)
        turns = [_turn(rng, dialect, j, j == length - 1) for j in range(length)]
        doc = {"id": f"sess-{seed}-{i:07d}", "title": "generated session", "kind": "recorded",
               "dialect": dialect, "source": f"bench.corpus.generate seed {seed}", "then": "end",
               "provider": provider, "model": model, "turns": turns}
        line = orjson.dumps(doc) + b"\n"
        if distinct_turns is not None:
            drawn.append(line)
        yield line
        made += length
        i += 1
    block = made
    prefix = f'"id":"sess-{seed}-'.encode()
    copy = 0
    while made < n_turns and drawn:
        copy += 1
        fresh = f'"id":"sess-{seed}-c{copy}-'.encode()
        yield b"".join(drawn).replace(prefix, fresh)
        made += block


def write_json_lines(path: Path, n_turns: int, seed: int = 14, distinct_turns: int | None = None) -> int:
    """Write :func:`corpus_lines` to `path`; return the bytes written (a generated input, not a report)."""
    size = 0
    with path.open("wb") as fh:
        for chunk in corpus_lines(n_turns, seed, distinct_turns):
            fh.write(chunk)
            size += len(chunk)
    return size


def write_parquet(path: Path, n_turns: int, seed: int = 14, row_group: int = 2000) -> None:
    """The same corpus as Parquet: one row per sequence, the JSON line's keys as nested columns."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    rows = [orjson.loads(line) for line in corpus_lines(n_turns, seed)]
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, path, row_group_size=row_group)
