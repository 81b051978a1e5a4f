"""Re-run a recorded framework on a few sequences and compare with its committed record.

The check is re-run exactly as the record was made (:func:`bench.scorecard.record.run_record`,
into a temporary file); every cell of the sample must be the committed record's cell for that
sequence, whole (path, tools, verdict, violations). A difference is named with the first field
that differs, so CI says what moved: the framework (a new pin), the bench, or the program.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.conform.reuse import default_seed, rotating_sample
from bench.errors import UnusableInput
from bench.scorecard.framework import Framework
from bench.scorecard.record import run_record


@dataclass(frozen=True, slots=True)
class Difference:
    sequence: str
    field: str
    committed: Any
    now: Any


def first_difference(committed: dict[str, Any], now: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first field (sorted) in which two cells differ, with both values; None when equal."""
    for key in sorted(set(committed) | set(now)):
        if committed.get(key) != now.get(key):
            return key, committed.get(key), now.get(key)
    return None


SHOWN_ONLY = ("texts",)
"""Decision fields that show what the loop sent without deciding the verdict (the start of each
result's text): left out of the comparison, so a record made before they were kept still verifies."""


ONE_ROUND = ("calls_run", "calls_failed", "run", "failed", "known")
"""Decision fields listing one turn's calls in the order the bench's tools saw them: a loop that runs a
turn's calls concurrently (LlamaIndex's agents, for one) makes that order a race, so they are compared as sets."""


CLIENTS_ID = re.compile(r"(unknown call id|under the client's id) '[^']*'")
"""A decision's detail quoting a call id the bench did not serve: the client made it up, and many make
it up at random (Google ADK's ``adk_tool_call_<uuid>``), so its value is not compared."""


def _decision(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: sorted(v, key=repr) if k in ONE_ROUND and isinstance(v, list) else v
           for k, v in d.items() if k not in SHOWN_ONLY}
    detail = d.get("detail")
    if isinstance(detail, str):
        out["detail"] = CLIENTS_ID.sub(r"\1 '…'", detail)
    return out


def comparable(cell: dict[str, Any]) -> dict[str, Any]:
    """`cell` without the decision fields of :data:`SHOWN_ONLY`, each turn's calls in a fixed order
    (:data:`ONE_ROUND`), ids the client made up masked (:data:`CLIENTS_ID`), and the tools the whole run
    ran or failed sorted (their order is the same race)."""
    decisions = [_decision(d) for d in cell.get("decisions") or []]
    ran = {k: sorted(cell[k]) for k in ("tools_run", "tools_failed") if isinstance(cell.get(k), list)}
    return {**cell, **ran, "decisions": decisions}


NEVER_STOPPED = ("capped", "running")
"""Outcomes of a loop that did not stop: ended by the bench's request cap, or still asking past the
requests its sequence allows when the time limit ended it. Which of the two, and how many requests it
made, depends on the machine's speed, not on the loop."""

_SPEED_BOUND = ("outcome", "error", "requests", "steps", "tools_run", "tools_failed", "reminders", "resends",
                "tokens", "violations", "decisions")


def never_stopped(cell: dict[str, Any]) -> bool:
    """Whether `cell` is a loop that did not stop (:data:`NEVER_STOPPED`)."""
    return cell.get("outcome") in NEVER_STOPPED


def reached_alike(cell: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The part of never-stopped `cell` that does not depend on speed, cut to the steps that both it
    and `other` reached: those decisions, the requirements broken, and every field that is not counted
    along the path."""
    reached = min(len(cell.get("decisions") or []), len(other.get("decisions") or []))
    return {**{k: v for k, v in cell.items() if k not in _SPEED_BOUND},
            "decisions": [_decision(d) for d in (cell.get("decisions") or [])[:reached]],
            "broken": sorted({v["requirement"] for v in cell.get("violations") or []})}


def compare_cells(committed: dict[str, Any], now: dict[str, Any]) -> list[Difference]:
    """Each cell of `now` (a record of a sample) against the cell of the same sequence in `committed`
    (:func:`comparable`: the result texts shown are not compared). When neither loop stopped, the two
    are compared on :func:`reached_alike`: the same path as far as both went, the same requirements
    broken, whether the cap or the time limit ended them."""
    by_id = {c["sequence"]: c for c in committed["cells"]}
    out: list[Difference] = []
    for cell in now["cells"]:
        old = by_id.get(cell["sequence"])
        if old is None:
            out.append(Difference(cell["sequence"], "(not in the committed record)", None, cell["outcome"]))
            continue
        if never_stopped(old) and never_stopped(cell):
            diff = first_difference(reached_alike(old, cell), reached_alike(cell, old))
        else:
            diff = first_difference(comparable(old), comparable(cell))
        if diff is not None:
            out.append(Difference(cell["sequence"], *diff))
    return out


def verify(fw: Framework, framework_dir: Path, project: Path, record_path: Path, ids: Sequence[str], *,
           jobs: int = 2, timeout: float = 60.0) -> list[Difference]:
    """Re-run `fw` on `ids` and compare with the record at `record_path`. Raises :class:`UnusableInput`
    when there is no record or an id is not in it."""
    try:
        committed = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnusableInput(f"{record_path}: no record to compare with: {exc}") from None
    missing = sorted(set(ids) - {c["sequence"] for c in committed["cells"]})
    if missing:
        raise UnusableInput(f"{record_path}: no cell for {', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix=f"stopbench-verify-{fw.name}-") as tmp:
        out = Path(tmp) / f"{fw.name}.json"
        run_record(fw, framework_dir, project, jobs=jobs, timeout=timeout, ids=ids, out=out)
        now = json.loads(out.read_text(encoding="utf-8"))
    return compare_cells(committed, now)


def rotating_ids(record_path: Path, size: int, project: Path) -> tuple[list[str], str]:
    """A rotating slice of about `size` of the sequences recorded at `record_path`, with where its seed came
    from: the commit count of `project`'s history (the day when git cannot say), so consecutive CI runs
    re-run every recorded sequence in turn (:func:`bench.conform.reuse.rotating_sample`)."""
    try:
        committed = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnusableInput(f"{record_path}: no record to compare with: {exc}") from None
    seed, source = default_seed(project)
    name = record_path.stem
    sample = rotating_sample(((name, c["sequence"]) for c in committed["cells"]), size, seed, source)
    return [seq for _, seq in sample.pairs], sample.describe()
