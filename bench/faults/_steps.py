"""What was injected into a run's answers, by observed step, read from the server's records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from bench.faults._apply import Injected


@dataclass(frozen=True, slots=True)
class StepFault:
    """What was injected into the answer of one observed step, and how long the loop took to ask again."""

    step: int
    injected: Injected
    waited: float | None = None
    """Seconds from this answer to the loop's next model request (None: it sent none)."""

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, **self.injected.as_json(),
                "waited": None if self.waited is None else round(self.waited, 3)}

    @staticmethod
    def from_json(data: Any) -> StepFault:
        if not isinstance(data, dict) or not isinstance(data.get("step"), int):
            raise ValueError(f"expected an injected-faults step, got {data!r:.60}")
        waited = data.get("waited")
        return StepFault(data["step"], Injected.from_json(data),
                         float(waited) if isinstance(waited, (int, float)) else None)


class _Recorded(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def at(self) -> float: ...
    @property
    def injected(self) -> Injected | None: ...


def step_faults(records: Iterable[_Recorded]) -> tuple[StepFault, ...]:
    """The faults of a run's model requests, by observed step (the n-th model request is step n, as
    :meth:`bench.serve.app.Session.observed` counts them)."""
    model = [r for r in records if r.kind in ("model", "past_end")]
    out: list[StepFault] = []
    for k, rec in enumerate(model):
        if rec.injected:
            waited = model[k + 1].at - rec.at if k + 1 < len(model) else None
            out.append(StepFault(k + 1, rec.injected, waited))
    return tuple(out)
