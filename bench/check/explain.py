"""A broken requirement told as a person reads it: which requirement, at which step, the turn the
server served there, and what the loop did with it."""

from __future__ import annotations

from bench.model import Cell, Sequence, Step, Turn


def _short(text: str | None, n: int = 80) -> str:
    if text is None:
        return "null"
    text = text.replace("\n", "\\n")
    return repr(text if len(text) <= n else text[:n] + "...")


def turn_text(turn: Turn, index: int) -> str:
    """One served turn on one line: finish (and raw), content, calls, error."""
    parts = [f"turn {index}: finish {turn.finish} (raw {turn.finish_raw!r})", f"content {_short(turn.content)}"]
    if turn.tool_calls:
        parts.append("calls " + ", ".join(f"{c.name}({_short(c.arguments, 40)})" for c in turn.tool_calls))
    if turn.error is not None:
        status = f" {turn.error.status}" if turn.error.status is not None else ""
        parts.append(f"error {turn.error.kind}{status}: {_short(turn.error.message, 60)}")
    if turn.end_turn is not None:
        parts.append(f"end_turn {turn.end_turn}")
    return ", ".join(parts)


def step_text(step: Step) -> str:
    """What the loop did after one turn."""
    d = step.decision
    if d.action == "stop":
        return f"stopped: ok={d.ok}, reason {d.reason!r}"
    tools = ""
    if step.tools_run:
        tools += f", ran {', '.join(step.tools_run)}"
    if step.tools_failed:
        tools += f", answered {', '.join(step.tools_failed)} with an error"
    message = f", said {_short(d.message, 60)}" if d.message else ""
    return f"{d.action}{tools}{message}"


def explain(sequence: Sequence, cell: Cell) -> str | None:
    """Why `cell` fails `sequence` (its first broken requirement, or why it has no verdict), or None."""
    if cell.outcome == "crashed":
        return f"{cell.predicate} on {sequence.id}: no verdict: {cell.error}"
    if not cell.violations:
        return None
    v = cell.violations[0]
    lines = [f"{cell.predicate} on {sequence.id} breaks `{v.requirement}`"
             + (f" at step {v.step}" if v.step is not None else "") + f": {v.detail}"]
    step = next((s for s in cell.steps if s.step == v.step), None)
    if step is not None:
        lines.append(f"  served {turn_text(sequence.turns[step.turn], step.turn)}")
        lines.append(f"  the loop: {step_text(step)}")
    ending = (f"stopped at step {cell.n_steps} (ok={cell.ok}, reason {cell.reason!r})" if cell.outcome == "stopped"
              else f"{cell.outcome} after {cell.n_steps} step(s)")
    lines.append(f"  path: {' -> '.join(s.decision.action for s in cell.steps) or '(no request)'}; {ending}")
    if len(cell.violations) > 1:
        lines.append("  also broken: " + ", ".join(x.requirement for x in cell.violations[1:]))
    return "\n".join(lines)


def assert_meets_requirements(sequence: Sequence, cell: Cell) -> None:
    """Raise AssertionError with :func:`explain`'s text when the cell breaks a requirement or crashed."""
    __tracebackhide__ = True
    why = explain(sequence, cell)
    if why is not None:
        raise AssertionError(why)
