"""Properties of termination predicates, checked on generated sequences, and the runner behind
``stopbench fuzz``.

Two kinds of property:

* for every predicate (``scope="every"``): the replay ends, the predicate never crashes, every
  decision is well formed with a declared rule, every stop reason is declared, no tool call is run
  or failed that the turn did not carry, the same sequence gives the same cell, and turns appended
  after the one where the loop stopped change nothing;
* for the reference loop (``scope="reference"``, the predicate named :data:`REFERENCE`): it never
  reports success on a truncated, filtered, errored or dropped-call turn, it never throws away a
  tool call a turn carries, it stops within its own cap, and it stops only with reasons it
  enumerates.

The test suite asserts each property only where it is meant to hold; ``stopbench fuzz`` checks all
of them on every predicate and reports where a loop breaks one as a finding about that loop.

A check takes a predicate and an example (a sequence, plus turns to append for the append
property) and returns None when the property holds or a one-paragraph explanation when not.
"""

from __future__ import annotations

import hashlib
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from random import Random
from typing import Literal

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky, NoSuchExample, Unsatisfiable

from bench import strategies as bs
from bench.dialects import DIALECTS
from bench.discovery import Broken, Loaded
from bench.judge import first_dropped_calls
from bench.model import ACTIONS, Cell, Decision, Dialect, Requirement, Sequence, Turn
from bench.predicate import Predicate, State
from bench.replay import DEFAULT_SAFETY_CAP, replay
from bench.sequence_io import dump_sequence, sequence_to_yaml

REFERENCE = "reference"
"""The column name of the bench's reference loop (predicates/reference.py): the one predicate the
reference properties are asserted for."""

TIME_LIMIT = 5.0
"""Seconds one replay may take before the property `ends` calls it a hang (where a timer can be set)."""

Scope = Literal["every", "reference"]
Example = tuple[Sequence, tuple[Turn, ...]]
"""A generated sequence and the turns the append property adds after the loop's stop."""

_BAD_FINISHES = frozenset({"length", "content_filter", "error"})


# ---------------------------------------------------------------- tracing one replay


class Hang(BaseException):
    """Raised by the timer inside a replay that takes too long (a BaseException, so that the
    replay's own ``except Exception`` does not turn it into a crashed cell)."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"the replay took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(slots=True)
class Trace:
    """One replay with what the bench saw of each decision before the replay validated it."""

    cell: Cell | None
    raised: str | None = None
    hung: str | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)

    def note(self, prop: str, text: str) -> None:
        self.problems.setdefault(prop, []).append(text)


def trace(seq: Sequence, pred: Predicate, safety_cap: int = DEFAULT_SAFETY_CAP,
          time_limit: float | None = None) -> Trace:
    """Replay `seq` through `pred`, recording exceptions and malformed decisions by property.
    The replay is given `time_limit` seconds (default :data:`TIME_LIMIT`) where a timer can be set."""
    t = Trace(cell=None)
    original = pred.decide

    def decide(turn: Turn, state: State) -> Decision:
        try:
            decision = original(turn, state)
        except Exception as exc:
            t.raised = f"step {state.step}: {type(exc).__name__}: {exc}"
            raise
        _inspect(decision, turn, pred, state.step, t)
        return decision

    probe = replace(pred, decide=decide)
    try:
        with _time_limit(TIME_LIMIT if time_limit is None else time_limit):
            t.cell = replay(seq, probe, safety_cap)
    except Hang as exc:
        t.hung = str(exc)
    return t


def _inspect(d: object, turn: Turn, pred: Predicate, step: int, t: Trace) -> None:
    where = f"step {step}"
    if not isinstance(d, Decision):
        t.note("well-formed", f"{where}: returned {type(d).__name__} {d!r:.60}, not a Decision")
        return
    if d.action not in ACTIONS:
        t.note("well-formed", f"{where}: action {d.action!r} is not one of {', '.join(ACTIONS)}")
    if not isinstance(d.rule, str) or not d.rule:
        t.note("well-formed", f"{where}: rule {d.rule!r} is not a rule id")
    elif pred.rules and d.rule not in pred.rules:
        t.note("well-formed", f"{where}: rule {d.rule!r} is not declared (declared: {', '.join(sorted(pred.rules))})")
    if d.action == "stop":
        if not isinstance(d.ok, bool):
            t.note("well-formed", f"{where}: stop with ok={d.ok!r}, not True or False")
        if not isinstance(d.reason, str) or not d.reason:
            t.note("declared-reasons", f"{where}: stop without a reason ({d.reason!r})")
        elif pred.reasons and d.reason not in pred.reasons:
            t.note("declared-reasons", f"{where}: stop reason {d.reason!r} is not declared "
                                       f"(declared: {', '.join(pred.reasons)})")
    n = len(turn.tool_calls)
    chosen: dict[str, tuple[int, ...]] = {}
    for what in ("run", "failed"):
        sel = getattr(d, what)
        if sel == "all":
            chosen[what] = tuple(range(n))
            continue
        if not isinstance(sel, tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in sel):
            t.note("well-formed", f"{where}: {what}={sel!r:.40} is neither 'all' nor a tuple of call indices")
            chosen[what] = ()
            continue
        outside = [i for i in sel if not 0 <= i < n]
        if outside:
            t.note("no-phantom-tools", f"{where}: {what} names call(s) {outside} but the turn carries {n} "
                                       f"tool call(s)")
        if len(set(sel)) != len(sel):
            t.note("well-formed", f"{where}: {what} names a call twice: {sel}")
        chosen[what] = sel
    both = set(chosen["run"]) & set(chosen["failed"])
    if both:
        t.note("well-formed", f"{where}: call(s) {sorted(both)} both run and failed")


# ---------------------------------------------------------------- the properties


Check = Callable[[Predicate, Example, int], str | None]


@dataclass(frozen=True, slots=True)
class Property:
    """A statement about a predicate's cells, checked on generated examples."""

    name: str
    statement: str
    scope: Scope
    check: Check
    require: Callable[[Sequence], Requirement] = lambda seq: Requirement()
    """The `require:` block a saved counterexample gets (empty when no requirement follows)."""
    declared: Callable[[Predicate], str | None] = lambda pred: None
    """The part of the property that the predicate's declarations alone break (no sequence needed)."""

    def holds_for(self, pred_name: str) -> bool:
        """Whether this property is meant to hold for that predicate (asserted by the tests)."""
        return self.scope == "every" or pred_name == REFERENCE


def _problems(prop: str) -> Check:
    def check(pred: Predicate, ex: Example, cap: int) -> str | None:
        t = trace(ex[0], pred, cap)
        found = t.problems.get(prop)
        return "; ".join(found[:3]) if found else None
    return check


def _never_crashes(pred: Predicate, ex: Example, cap: int) -> str | None:
    t = trace(ex[0], pred, cap)
    return f"the predicate raised at {t.raised}" if t.raised else None


def _ends(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    t = trace(seq, pred, cap)
    if t.hung:
        return f"the replay did not end: {t.hung}"
    cell = t.cell
    assert cell is not None
    n = cell.n_steps
    if cell.outcome == "crashed":
        if t.raised or t.problems:
            return None  # never-crashes, well-formed, declared-reasons or no-phantom-tools says why
        return f"the cell crashed for no reason the bench could see: {cell.error}"
    if cell.outcome == "stopped" and (not cell.steps or cell.steps[-1].decision.action != "stop"):
        return "outcome stopped, but the last step is not a stop"
    if cell.outcome == "capped" and n != cap:
        return f"outcome capped after {n} steps, but the safety cap is {cap}"
    if cell.outcome == "running" and (seq.then != "end" or n != len(seq.turns)):
        return f"outcome running after {n} steps with then: {seq.then} and {len(seq.turns)} turn(s)"
    return None


def _deterministic(pred: Predicate, ex: Example, cap: int) -> str | None:
    first = trace(ex[0], pred, cap).cell
    again = trace(replace(ex[0], turns=tuple(ex[0].turns)), pred, cap).cell
    if first != again:
        return f"two replays of the same sequence differ: {_label(first)} then {_label(again)}"
    return None


def _no_phantom_tools(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    t = trace(seq, pred, cap)
    if "no-phantom-tools" in t.problems:
        return "; ".join(t.problems["no-phantom-tools"][:3])
    for s in t.cell.steps if t.cell else ():
        carried = Counter(c.name for c in seq.turns[s.turn].tool_calls)
        used = Counter(s.tools_run) + Counter(s.tools_failed)
        extra = used - carried
        if extra:
            return f"step {s.step}: ran or failed {sorted(extra.elements())}, which turn {s.turn} did not carry"
    return None


def _append_invariance(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq, extra = ex
    cell = trace(seq, pred, cap).cell
    if cell is None or cell.outcome != "stopped" or cell.n_steps > len(seq.turns):
        return None  # nothing to say: it did not stop, or stopped on a repeated turn
    k = cell.n_steps
    longer = replace(seq, turns=seq.turns[:k] + extra)
    other = trace(longer, pred, cap).cell
    if other != cell:
        return (f"the loop stops at step {k} on the first {k} turn(s) ({_label(cell)}); with {len(extra)} "
                f"turn(s) appended after them it ends {_label(other)}")
    return None


def _stop_turn(seq: Sequence, cell: Cell) -> tuple[Turn, int, int] | None:
    """The turn of a successful stop, with the number of its calls the stop step handled."""
    if cell.outcome != "stopped" or not cell.ok or not cell.steps:
        return None
    s = cell.steps[-1]
    return seq.turns[s.turn], s.turn, len(s.tools_run) + len(s.tools_failed)


def _no_false_ok(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    cell = trace(seq, pred, cap).cell
    found = _stop_turn(seq, cell) if cell else None
    if found is None:
        return None
    turn, index, handled = found
    why = ""
    if turn.error is not None:
        why = f"an errored turn ({turn.error.type})"
    elif turn.finish in _BAD_FINISHES:
        why = {"length": "a truncated turn", "content_filter": "a filtered turn"}.get(turn.finish, "an errored turn")
        why += f" (finish {turn.finish}, raw {turn.finish_raw!r})"
    elif handled < len(turn.tool_calls):
        why = f"a turn whose {len(turn.tool_calls)} tool call(s) it ran or failed only {handled} of"
    if not why:
        return None
    assert cell is not None
    return f"reported success ({cell.reason}) at step {cell.n_steps} on turn {index}, {why}"


def _keeps_calls(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    cell = trace(seq, pred, cap).cell
    if cell is None:
        return None
    dropped = first_dropped_calls(seq, cell)
    return dropped[1] if dropped is not None else None


def _declares_cap(pred: Predicate) -> str | None:
    return "declares no cap (max_steps is None)" if pred.max_steps is None else None


def _declares_reasons(pred: Predicate) -> str | None:
    return None if pred.reasons else "enumerates no stop reasons"


def _within_cap(pred: Predicate, ex: Example, cap: int) -> str | None:
    seq = ex[0]
    if pred.max_steps is None:
        return _declares_cap(pred)
    cell = trace(seq, pred, cap).cell
    if cell is None or cell.outcome == "crashed":
        return None
    if cell.n_steps > pred.max_steps:
        return f"made {cell.n_steps} requests; its cap is {pred.max_steps}"
    if cell.outcome == "capped" or (seq.then == "repeat" and cell.outcome != "stopped"):
        return f"did not stop ({cell.outcome}) within its cap of {pred.max_steps}"
    return None


def _enumerated_reasons(pred: Predicate, ex: Example, cap: int) -> str | None:
    if not pred.reasons:
        return _declares_reasons(pred)
    cell = trace(ex[0], pred, cap).cell
    if cell is not None and cell.outcome == "stopped" and cell.reason not in pred.all_reasons:
        return f"stopped with reason {cell.reason!r}, not one of {', '.join(sorted(pred.all_reasons))}"
    return None


def _require_ok_false(seq: Sequence) -> Requirement:
    """ok: false when no turn of the sequence is an answer (all truncated, filtered or errored)."""
    if all(t.finish in _BAD_FINISHES or t.error is not None for t in seq.turns):
        return Requirement(ok=False)
    return Requirement()


PROPERTIES: tuple[Property, ...] = (
    Property("ends", "every replay ends: stopped, running or capped, never hung", "every", _ends),
    Property("never-crashes", "the predicate never raises", "every", _never_crashes),
    Property("well-formed", "each decision is a well-formed Decision whose rule the predicate declares", "every",
             _problems("well-formed")),
    Property("declared-reasons", "a stop's reason is one the predicate declares", "every",
             _problems("declared-reasons")),
    Property("no-phantom-tools", "no tool call is run or failed that the turn did not carry", "every",
             _no_phantom_tools),
    Property("deterministic", "the same sequence gives the same cell", "every", _deterministic),
    Property("append-invariance", "appending turns after the turn where the loop stopped changes nothing",
             "every", _append_invariance),
    Property("no-false-ok", "never reports success on a truncated, filtered, errored or dropped-call turn",
             "reference", _no_false_ok, require=_require_ok_false),
    Property("keeps-calls", "never throws away a tool call a turn carries, whatever the finish reason says",
             "reference", _keeps_calls, require=lambda seq: Requirement(no_dropped_calls=True)),
    Property("within-cap", "stops within its own cap (max_steps)", "reference", _within_cap,
             declared=_declares_cap),
    Property("enumerated-reasons", "its stop reason is always one of the reasons it enumerates", "reference",
             _enumerated_reasons, declared=_declares_reasons),
)

BY_NAME: dict[str, Property] = {p.name: p for p in PROPERTIES}


def properties(scope: Scope | None = None) -> tuple[Property, ...]:
    """The properties of one scope (all of them when None)."""
    return tuple(p for p in PROPERTIES if scope is None or p.scope == scope)


@cache
def examples(dialect: Dialect | None = None) -> st.SearchStrategy[Example]:
    """A sequence (short and hostile most of the time, sometimes very long) and one to three turns
    of the same dialect to append after the loop's stop. The long branch may shrink to one turn."""
    return _examples(dialect)


_EXTRA = {d: st.lists(bs.turns(d), min_size=1, max_size=3) for d in DIALECTS}


@st.composite
def _examples(draw: st.DrawFn, dialect: Dialect | None) -> Example:
    seq = draw(st.one_of(bs.sequences(dialect), bs.long_sequences(dialect, min_turns=1)))
    extra = draw(_EXTRA[seq.dialect])
    return seq, tuple(extra)


def failures(pred: Predicate, ex: Example, props: tuple[Property, ...] = PROPERTIES,
             safety_cap: int = DEFAULT_SAFETY_CAP) -> dict[str, str]:
    """Every property of `props` that `pred` breaks on `ex`, with why."""
    out: dict[str, str] = {}
    for p in props:
        why = p.check(pred, ex, safety_cap)
        if why is not None:
            out[p.name] = why
    return out


def _label(cell: Cell | None) -> str:
    if cell is None:
        return "(no cell)"
    if cell.outcome == "stopped":
        return f"stopped {cell.reason} ok={cell.ok} after {cell.n_steps} step(s)"
    return f"{cell.outcome} after {cell.n_steps} step(s)" + (f" ({cell.error})" if cell.error else "")


# ---------------------------------------------------------------- the runner


@dataclass(frozen=True, slots=True)
class Finding:
    """A property a predicate broke, with the shrunk counterexample."""

    predicate: str
    prop: Property
    sequence: Sequence | None
    """The counterexample as a sequence to replay (for append-invariance: the one with turns appended);
    None when the predicate's declarations alone break the property."""
    example: Example | None
    message: str
    saved: str | None = None

    @property
    def expected(self) -> bool:
        """True when the property is meant to hold for this predicate (a failing test, not just a finding)."""
        return self.prop.holds_for(self.predicate)


@dataclass(slots=True)
class FuzzRun:
    seed: int
    max_examples: int
    predicates: list[str] = field(default_factory=list)
    broken: list[Broken] = field(default_factory=list)
    results: dict[tuple[str, str], Finding | None] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for f in self.results.values() if f is not None]

    def failed(self) -> bool:
        """True when a property meant for a predicate fails, or a predicate does not load."""
        return bool(self.broken) or any(f.expected for f in self.findings)


def fuzz_settings(max_examples: int) -> settings:
    return settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
                    phases=(Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def shrink(pred: Predicate, prop: Property, *, max_examples: int, seed: int,
           safety_cap: int = DEFAULT_SAFETY_CAP) -> Finding | None:
    """Search for an example on which `pred` breaks `prop`; return it shrunk, or None."""
    declared = prop.declared(pred)
    if declared is not None:
        return Finding(pred.name, prop, None, None, declared)
    first: list[tuple[Example, str]] = []

    def breaks(ex: Example) -> bool:
        why = prop.check(pred, ex, safety_cap)
        if why is not None and not first:
            first.append((ex, why))
        return why is not None

    try:
        ex = find(examples(), breaks, settings=fuzz_settings(max_examples), random=Random(seed))
    except (NoSuchExample, Unsatisfiable):
        return None
    except Flaky:
        # the predicate answers differently on the same example (hidden state): shrinking cannot
        # work, so report the first failing example as it was generated
        if not first:
            return None
        ex, why = first[0]
        message = f"{why} (not shrunk: the same example does not always give the same answer)"
    else:
        ex = _trim(pred, prop, ex, safety_cap)
        message = prop.check(pred, ex, safety_cap) or (first[0][1] if first else "")
    return Finding(pred.name, prop, counterexample_sequence(pred, prop, ex, safety_cap), ex, message)


def _trim(pred: Predicate, prop: Property, ex: Example, safety_cap: int) -> Example:
    """Drop the turns the replay never reached, when the property still breaks without them (the
    shrinker can stop at a long sequence whose tail plays no part)."""
    seq, extra = ex
    cell = trace(seq, pred, safety_cap).cell
    if cell is None or not cell.steps:
        return ex
    used = max(s.turn for s in cell.steps) + 1
    if used >= len(seq.turns):
        return ex
    shorter = (replace(seq, turns=seq.turns[:used]), extra)
    return shorter if prop.check(pred, shorter, safety_cap) is not None else ex


def counterexample_sequence(pred: Predicate, prop: Property, ex: Example,
                            safety_cap: int = DEFAULT_SAFETY_CAP) -> Sequence:
    """The sequence to keep for a finding: the example itself, or for append-invariance the stop's
    prefix with the extra turns appended (replaying it shows the difference)."""
    seq, extra = ex
    if prop.name == "append-invariance":
        cell = trace(seq, pred, safety_cap).cell
        if cell is not None and cell.outcome == "stopped":
            seq = replace(seq, turns=seq.turns[:cell.n_steps] + extra)
    return seq


def fuzz(preds: list[Loaded], *, props: tuple[Property, ...] = PROPERTIES, max_examples: int = 100,
         seed: int = 0, safety_cap: int = DEFAULT_SAFETY_CAP,
         progress: Callable[[str], None] | None = None) -> FuzzRun:
    """Check every property on every predicate; each search starts from the same seed."""
    run = FuzzRun(seed=seed, max_examples=max_examples)
    for pred in preds:
        if isinstance(pred, Broken):
            run.broken.append(pred)
            continue
        run.predicates.append(pred.name)
        if progress:
            progress(f"{pred.name}: {', '.join(p.name for p in props)}")
        for prop in props:
            run.results[(pred.name, prop.name)] = shrink(pred, prop, max_examples=max_examples, seed=seed,
                                                         safety_cap=safety_cap)
    return run


# ---------------------------------------------------------------- found sequences and the report


def short_hash(seq: Sequence) -> str:
    """8 hex digits of the sequence's content (dialect, then, turns), for a stable file name."""
    body = sequence_to_yaml(replace(seq, id="", title="-", source="-", tags=(), require=Requirement()))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:8]


def found_sequence(finding: Finding, seed: int) -> Sequence | None:
    """The finding as a constructed catalogue sequence (its id is the file name it is saved under),
    or None for a finding about declarations."""
    seq = finding.sequence
    if seq is None:
        return None
    sid = f"found-{finding.predicate}-{finding.prop.name}-{short_hash(seq)}"
    source = (f"Found by `stopbench fuzz --seed {seed}` (hypothesis, shrunk): predicate {finding.predicate} "
              f"broke property {finding.prop.name} ({finding.prop.statement}): {finding.message}")
    return replace(seq, id=sid, title=f"found: {finding.predicate} breaks {finding.prop.name}", kind="constructed",
                   source=source, tags=("found", "fuzz", finding.prop.name), require=finding.prop.require(seq),
                   path="")


def save(run: FuzzRun, folder: Path) -> list[Path]:
    """Write each finding as ``folder/found-<predicate>-<property>-<hash>.yaml``; return the paths."""
    written: list[Path] = []
    for key, finding in sorted(run.results.items()):
        seq = found_sequence(finding, run.seed) if finding is not None else None
        if finding is None or seq is None:
            continue
        path = dump_sequence(seq, folder / f"{seq.id}.yaml")
        run.results[key] = replace(finding, saved=str(path))
        written.append(path)
    return written


def report(run: FuzzRun) -> str:
    """reports/fuzz-findings.md: the same run gives the same bytes."""
    lines = ["# Fuzz findings", "",
             f"Written by `stopbench fuzz --seed {run.seed} --max-examples {run.max_examples}`: each property "
             "was searched with hypothesis on generated sequences (every dialect, plain to hostile, some very "
             "long) and each counterexample shrunk to a minimal one. A failure of a property meant for the "
             "predicate (every predicate, or the reference loop for its own properties) is a bug; any other "
             "failure is a finding about that loop. `holds` means no counterexample was found in "
             f"{run.max_examples} examples, not a proof.", "",
             "## Properties", "", "| property | meant for | statement |", "| --- | --- | --- |"]
    for p in PROPERTIES:
        if any(name == p.name for _, name in run.results):
            lines.append(f"| `{p.name}` | {'every predicate' if p.scope == 'every' else REFERENCE} | {p.statement} |")
    names = [p.name for p in PROPERTIES if any(n == p.name for _, n in run.results)]
    lines += ["", "## Results", "", "| predicate | " + " | ".join(f"`{n}`" for n in names) + " |",
              "| --- |" + " --- |" * len(names)]
    for pred in run.predicates:
        row = []
        for n in names:
            f = run.results.get((pred, n))
            row.append("holds" if f is None else ("**FAILS**" if f.expected else "finding"))
        lines.append(f"| {pred} | " + " | ".join(row) + " |")
    for b in run.broken:
        lines.append(f"| {b.name} | does not load: {b.error} |")
    findings = sorted(run.findings, key=lambda f: (not f.expected, f.predicate, names.index(f.prop.name)))
    lines += ["", "## Findings", ""]
    if not findings:
        lines.append("None: every property held on every example tried.")
    for f in findings:
        status = "a bug: the property is meant to hold for it" if f.expected else "a finding about this loop"
        lines += [f"### {f.predicate} breaks `{f.prop.name}`", "",
                  f"{f.prop.statement} ({status}).", "", f"What happened: {f.message}", ""]
        if f.saved:
            lines += [f"Saved as `{_relative(f.saved)}`.", ""]
        seq = found_sequence(f, run.seed)
        if seq is None:
            lines += ["No sequence needed: the predicate's declarations alone break the property.", ""]
        else:
            lines += ["Minimal sequence:", "", "```yaml", sequence_to_yaml(seq).rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path
