"""A recipe applied to one answer: pure functions from a delivery plan to the plan as the loop gets it.

:func:`apply` takes the plan the server built for one model request (:class:`bench.serve.respond.Plan`)
and returns the plan to send and what it did (:class:`Injected`), which the server keeps with the
request's record so the judge knows what the loop received (bench/check/faulted.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bench.engine.model import ERROR_KINDS, ErrorKind
from bench.faults._recipe import (
    TOKENS_PER_FRAME,
    CorruptIn,
    DisconnectIn,
    DuplicateIn,
    Fault,
    PaceIn,
    Recipe,
    StallIn,
    StatusIn,
    TruncateIn,
)
from bench.faults._shapes import status_plan
from bench.serve.respond import Frame, Plan


@dataclass(frozen=True, slots=True)
class Injected:
    """What a recipe did to one answer.

    `kind` is set when the turn did not reach the loop whole: what the loop got in place of it, in
    the error vocabulary of sequences (:data:`bench.engine.model.ErrorKind`: ``stream_cut`` for a
    stream that ended without a finish, ``connection_reset`` for a broken connection, ``stream_error``
    for a garbled frame, the status's kind for an HTTP error). The server then answers the loop's next
    request with the same turn again, as a provider answers a retry, and the judge reads the step as
    that error (:mod:`bench.check.faulted`)."""

    done: tuple[str, ...] = ()
    """What was done, one phrase per fault (and the pacing), in order."""
    kind: ErrorKind | None = None
    status: int | None = None
    retry_after: int | None = None
    """Seconds the answer asked the loop to wait (``Retry-After``)."""

    @property
    def replaced(self) -> bool:
        """Whether the loop got something else than the turn (an error, a cut or garbled stream)."""
        return self.kind is not None

    def __bool__(self) -> bool:
        return bool(self.done)

    def describe(self) -> str:
        return "; ".join(self.done)

    def as_json(self) -> dict[str, Any]:
        return {"done": list(self.done), "kind": self.kind, "status": self.status, "retry_after": self.retry_after}

    @staticmethod
    def from_json(data: Any) -> Injected:
        """An :meth:`as_json` form read back (a live record); ValueError when it is not one."""
        if not isinstance(data, dict):
            raise ValueError(f"expected an injected-faults object, got {data!r:.60}")
        kind = data.get("kind")
        if kind is not None and kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        status, wait = data.get("status"), data.get("retry_after")
        return Injected(tuple(str(d) for d in data.get("done", ())), kind,
                        status if isinstance(status, int) else None, wait if isinstance(wait, int) else None)


NOTHING = Injected()


def rng_for(recipe: Recipe, key: str, request_index: int) -> random.Random:
    """The generator for request `request_index` of a run on `key` (a sequence id): seeded by the
    recipe's seed, the key and the index, so a request's draws do not depend on the order runs are
    made in (``--jobs``) nor on what other requests drew."""
    return random.Random(f"{recipe.seed}:{key}:{request_index}")


def inject(recipe: Recipe, plan: Plan, *, wire: str, request_index: int, key: str = "") -> tuple[Plan, Injected]:
    """:func:`apply` with the request's own generator (:func:`rng_for`): what the server (and a
    recording proxy) calls for each model answer."""
    return apply(recipe, plan, request_index=request_index, rng=rng_for(recipe, key, request_index), wire=wire)


def _applies(fault: Fault, request_index: int, draw: float) -> bool:
    if fault.requests is not None and request_index not in fault.requests:
        return False
    return fault.probability >= 1 or draw < fault.probability


def _one_body(plan: Plan) -> bool:
    """A JSON answer (one body with its length), not a stream."""
    return any(k.lower() == "content-length" for k, _ in plan.headers)


def apply(recipe: Recipe, plan: Plan, *, request_index: int, rng: random.Random,
          wire: str) -> tuple[Plan, Injected]:
    """The answer to model request `request_index` (1 is a run's first) as `recipe` delivers it, and
    what it did. `wire` chooses the provider's shape of an HTTP error status. Every fault draws from
    `rng` once whether or not it applies, in the recipe's order, so one fault's chance does not move
    another's."""
    draws = [rng.random() for _ in recipe.faults]
    chosen = [f for f, u in zip(recipe.faults, draws, strict=True) if _applies(f, request_index, u)]
    status = next((f for f in chosen if isinstance(f, StatusIn)), None)
    if status is not None:
        return _status_answer(status, wire)
    delivery = _Delivery(list(plan.frames), plan.end, _one_body(plan))
    if recipe.pace is not None:
        delivery.frames = _paced(delivery.frames, recipe.pace, rng, delivery.one)
        delivery.done.append(_pace_words(recipe.pace))
    for f in chosen:
        delivery.take(f)
    if not delivery.done:
        return plan, NOTHING
    return (Plan(plan.status, plan.headers, tuple(delivery.frames), delivery.end, one_by_one=True),
            Injected(tuple(delivery.done), delivery.kind))


def _status_answer(fault: StatusIn, wire: str) -> tuple[Plan, Injected]:
    """An HTTP error status in place of the answer, in `wire`'s provider's shape."""
    out, error = status_plan(wire, fault.status, fault.retry_after, fault.message)
    wait = f", Retry-After: {fault.retry_after}" if fault.retry_after is not None else ""
    return replace(out, one_by_one=True), Injected((f"HTTP {fault.status}{wait}",), error, fault.status,
                                                   fault.retry_after)


@dataclass(slots=True)
class _Delivery:
    """An answer's frames and end as the faults chosen so far leave them, with what each did (`done`)
    and what the loop gets in place of the turn (`kind`, None while the turn arrives). `one`: the
    answer is one JSON body (:func:`_one_body`), not a stream."""

    frames: list[Frame]
    end: Literal["close", "cut"]
    one: bool
    done: list[str] = field(default_factory=list)
    kind: ErrorKind | None = None

    def take(self, fault: Fault) -> None:
        """Apply one frame fault (a status fault is an answer of its own: :func:`_status_answer`)."""
        if isinstance(fault, StallIn):
            self.stall(fault)
        elif isinstance(fault, DuplicateIn):
            self.duplicate(fault)
        elif isinstance(fault, CorruptIn):
            self.corrupt(fault)
        elif isinstance(fault, (TruncateIn, DisconnectIn)):
            self.cut(fault)

    def stall(self, fault: StallIn) -> None:
        """A pause before the fault's frame, when the answer has that frame."""
        i = fault.before_frame - 1
        if i < len(self.frames):
            self.frames[i] = Frame(self.frames[i].data, self.frames[i].delay + fault.seconds)
            self.done.append(f"stalled {fault.seconds:g} s before frame {fault.before_frame}")

    def duplicate(self, fault: DuplicateIn) -> None:
        """The fault's frame sent twice, when the answer is a stream that has that frame."""
        i = fault.frame - 1
        if not self.one and i < len(self.frames):
            self.frames.insert(i + 1, Frame(self.frames[i].data))
            self.done.append(f"frame {fault.frame} sent twice")

    def corrupt(self, fault: CorruptIn) -> None:
        """The fault's frame garbled (:func:`_garbled`), when the answer has that frame."""
        i = fault.frame - 1
        if i < len(self.frames):
            self.frames[i] = Frame(_garbled(self.frames[i].data), self.frames[i].delay)
            self.done.append(f"frame {fault.frame} garbled")
            self.kind = self.kind or "stream_error"

    def cut(self, fault: TruncateIn | DisconnectIn) -> None:
        """A clean end (truncate) or a broken connection (disconnect, or any cut of one JSON body);
        a clean end that loses only the end marker leaves the loop the whole turn."""
        cut = _cut(self.frames, fault, self.one)
        if cut is None:
            return
        lost = self.frames[len(cut[0]):]
        self.frames, what = cut
        broken = self.one or isinstance(fault, DisconnectIn)
        self.end = "cut" if broken else "close"
        if broken:
            self.kind = "connection_reset"
        elif all(_end_marker(x.data) for x in lost):
            what += "; only the end marker was lost, the turn arrived whole"
        else:
            self.kind = "stream_cut"
        self.done.append(what)


def _paced(frames: list[Frame], pace: PaceIn, rng: random.Random, one: bool) -> list[Frame]:
    """Frames with the pacing's delays added (the first: time to first token; the others: the token
    rate), each moved by the jitter; never below zero."""
    out = []
    for i, f in enumerate(frames):
        base = pace.ttft_ms / 1000 if i == 0 else (
            0.0 if one or pace.tokens_per_second is None else TOKENS_PER_FRAME / pace.tokens_per_second)
        jitter = rng.uniform(-pace.jitter_ms, pace.jitter_ms) / 1000 if pace.jitter_ms else 0.0
        out.append(Frame(f.data, max(0.0, f.delay + base + jitter)))
    return out


def _pace_words(pace: PaceIn) -> str:
    parts = [f"first frame after {pace.ttft_ms:g} ms"]
    if pace.tokens_per_second is not None:
        parts.append(f"{pace.tokens_per_second:g} tokens/s")
    if pace.jitter_ms:
        parts.append(f"jitter ±{pace.jitter_ms:g} ms")
    return "paced: " + ", ".join(parts)


def _cut(frames: list[Frame], fault: TruncateIn | DisconnectIn, one: bool) -> tuple[list[Frame], str] | None:
    """The frames left by a cut and its words, or None when the cut comes after the whole answer."""
    how = "connection broken" if isinstance(fault, DisconnectIn) or one else "stream ended without a finish"
    if one:  # one JSON body: half of it, then the connection breaks (a clean end would be a short body)
        if not frames or not frames[0].data:
            return None
        data = frames[0].data
        return [Frame(data[:len(data) // 2], frames[0].delay)], f"body cut at half its bytes ({how})"
    if fault.after_frames is not None:
        n = fault.after_frames
        if n >= len(frames):
            return None
        return frames[:n], f"cut after {n} frame{'' if n == 1 else 's'} ({how})"
    limit = (fault.after_ms or 0) / 1000
    kept: list[Frame] = []
    at = 0.0
    for f in frames:
        if at + f.delay >= limit:
            kept.append(Frame(b"", limit - at))  # the end comes at the limit, not at the last frame sent
            return kept, f"cut at {fault.after_ms:g} ms, after {len(kept) - 1} frame(s) ({how})"
        at += f.delay
        kept.append(f)
    return None


_END_MARKERS = (b"data: [DONE]", b"event: message_stop\n")
"""Frames that only mark a stream's end after its finish: Chat Completions' ``data: [DONE]``
(https://platform.openai.com/docs/api-reference/chat-streaming) and Anthropic's ``message_stop``
(https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types). A clean cut that loses
only these leaves the loop the whole turn."""


def _end_marker(data: bytes) -> bool:
    return data.startswith(_END_MARKERS)


def _garbled(data: bytes) -> bytes:
    """`data` with the second half of its payload overwritten (same length): its JSON no longer
    parses; an SSE frame keeps its closing blank line, so the client reads it as one bad event."""
    tail = b"\n\n" if data.endswith(b"\n\n") else b""
    body = data[:len(data) - len(tail)]
    mid = len(body) // 2
    return body[:mid] + b"#" * (len(body) - mid) + tail
