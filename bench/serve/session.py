"""The replay server's state: a :class:`Session` serving one sequence at a time, its runs and their records.

A :class:`Session` holds the sequence being served and the requests of the current *run* (one
client run); :meth:`Session.start` switches to another sequence and starts a new run. Request i
of a run to a model endpoint is answered by turn i (``then: repeat`` answers further requests
with the last turn; past its end a ``then: end`` sequence answers 410, :mod:`bench.serve.refusals`);
:meth:`Session.take_turn` says which turn answers a request. Every request is recorded
(:meth:`Session.record`), and :meth:`Session.observed` infers the client's decisions from them. A run
keeps its requests' bodies up to `body_budget` bytes; past it the steps they show are observed at once
and the bodies released (``keep_bodies`` keeps them). The HTTP side is :mod:`bench.serve.app`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from bench.engine.model import Action, Sequence, Turn, TurnError
from bench.engine.replay import following
from bench.serve.observe import Observed, conversation, infer, request_changes
from bench.serve.refusals import DEFAULT_MAX_BODY, DEFAULT_READ_TIMEOUT, unknown_tool
from bench.serve.render import WireName
from bench.serve.repeats import repeat_number, with_fresh_ids
from bench.serve.respond import Template
from bench.serve.results import Known, ResultJudge, ran_in_round
from bench.serve.threads import Refusal, follow
from bench.serve.tools import Execution, ok_content, scripted_call
from bench.wires.withhold import as_noted

if TYPE_CHECKING:  # bench.faults writes into this package's delivery plans: imported where used, not here
    from bench.faults import Injected, Recipe

DEFAULT_WRITE_TIMEOUT = 30.0
DEFAULT_JOURNAL = 1000
"""Requests of a run kept with their bodies (Session(journal=...)): above every safety cap's default,
so that check and conformance observe every step they judge."""
_RECENT = 8
"""Requests past the journal kept for the next answer (the previous one, a reply followed by reference)."""
_MODEL_NAMES = 64
"""Model names the model list shows besides ``stopbench`` (the first ones a run's requests used)."""
DEFAULT_BODY_BUDGET = 16 * 1024 * 1024
"""Request bytes a run keeps as bodies (Session(body_budget=...)). Past it each step whose next request
has arrived is observed at once and the bodies it read are released (:meth:`Session._release`)."""

RecordKind = Literal["model", "past_end", "side", "refused"]
_ANSWERS = ("model", "past_end")
"""The kinds of request a run's steps are read from."""

_HEADERS = ("user-agent", "content-type", "accept", "anthropic-version", "openai-beta", "x-stainless-lang",
            "x-goog-api-client")
_HEADER_NAMES = frozenset(h.encode() for h in _HEADERS)


@dataclass(frozen=True, slots=True)
class _Step:
    """A step observed when its bodies were released: as judged then, and, when the program had not
    yet listed or run the bench's tools, as judged once it has (the judge reads that at observation
    time: :class:`bench.serve.results.ResultJudge`'s ``bench_tools``)."""

    then: Observed
    tools_then: bool
    with_tools: Observed | None = None

    def now(self, tools: bool) -> Observed:
        """The step as :meth:`Session.observed` reads it when the program takes the bench's tools (`tools`) or not."""
        return self.with_tools if tools and not self.tools_then and self.with_tools is not None else self.then


@dataclass(slots=True)
class Record:
    """One request as the server received it and how it was answered."""

    n: int
    kind: RecordKind
    method: str
    path: str
    status: int
    wire: WireName | None = None
    stream: bool = False
    turn: int | None = None
    response_id: str | None = None
    body: Any = None
    raw_headers: Collection[tuple[bytes, bytes]] = ()
    """The request's headers as the server got them (:attr:`headers` reads the ones kept)."""
    at: float = 0.0
    note: str = ""
    """What the server did unasked when it answered (bench.wires.withhold)."""
    repeat: int = 0
    """Which repeat of a ``then: repeat`` turn answered it: its call ids carry ``-r<repeat>``
    (bench.serve.repeats)."""
    seen: Any = None
    """The conversation the request carries when it differs from its body: a request that follows
    a reply by reference, rebuilt with the history the server holds (bench.serve.threads)."""
    injected: Injected | None = None
    """What the session's fault recipe did to the answer (bench.faults), None when nothing."""
    size: int = 0
    """The request body's length in bytes (what it counts against the run's body budget)."""
    step: _Step | None = None
    """The step this request was answered for, observed before its body was released."""
    rebuilt: bool = False
    """The request followed a reply by reference (`seen` was set): kept when the body is released."""

    @property
    def headers(self) -> dict[str, str]:
        """The headers of :data:`_HEADERS` the request sent (the first of each)."""
        out: dict[str, str] = {}
        for name, value in self.raw_headers:
            if name in _HEADER_NAMES:
                out.setdefault(name.decode("latin-1"), value.decode("latin-1"))
        return {h: out[h] for h in _HEADERS if h in out}

    @property
    def conversation_body(self) -> Any:
        """The body as the whole conversation it carries (what the observation reads)."""
        return self.body if self.seen is None else self.seen

    def as_json(self) -> dict[str, Any]:
        return {"n": self.n, "kind": self.kind, "method": self.method, "path": self.path, "status": self.status,
                "wire": self.wire, "stream": self.stream, "turn": self.turn, "response_id": self.response_id,
                "headers": self.headers, "body": self.body, "note": self.note,
                "rebuilt": self.rebuilt or self.seen is not None,
                "repeat": self.repeat, "injected": self.injected.as_json() if self.injected else None}


@dataclass(slots=True)
class Run:
    """The requests of one client run against one sequence.

    The journal: `records` holds the run's first requests with their bodies (up to the session's
    `journal`; all of them with ``journal=None``), what the observation of its steps reads. Past that
    a request is counted (`total`) and kept only among the `recent` few the next answer needs (the
    previous request, a reply a request follows by reference), so that a long run's memory stays
    flat. When the next run starts, this one's observation is kept and its bodies released."""

    number: int
    sequence: Sequence
    records: list[Record] = field(default_factory=list)
    answered: int = 0
    total: int = 0
    """Requests of the run, kept or not."""
    recent: deque[Record] = field(default_factory=lambda: deque(maxlen=_RECENT))
    """The last requests past the kept ones."""
    tools_listed: bool = False
    """The program listed the bench's tools (``GET /_stopbench/tools``, which the MCP servers ask at
    every ``tools/list``): it runs them, so a result no execution answers is a call that never reached
    a tool (:class:`bench.serve.results.ResultJudge`'s ``bench_tools``), known, not guessed from words."""
    beyond: Record | None = None
    """The first model request past the kept ones: what the last kept step is observed against."""
    last_answer: Record | None = None
    """The last model request (or one past the script's end): what the next turn follows."""
    last_model: Record | None = None
    """The last model request answered with a turn: what the tool endpoint's scripted results read."""
    served: dict[int, int] = field(default_factory=dict)
    """How often each turn (by index) answered a model request."""
    models: list[str] = field(default_factory=list)
    """The model names the run's requests used (the first :data:`_MODEL_NAMES`)."""
    past_end: bool = False
    frozen: list[Observed] | None = None
    """The run's observation, kept when the next run started (its bodies released then)."""
    executions: list[Execution] = field(default_factory=list)
    """The tool endpoint's executions in this run (:mod:`bench.serve.tools`)."""
    rendered: dict[Any, Template] = field(default_factory=dict)
    """Answers rendered in this run, kept for the requests that get the same answer but for the id."""
    body_bytes: int = 0
    """Request bytes of the journal's records whose bodies are still held."""
    released: int = 0
    """Journal records (from the first) whose bodies are released or were never needed."""
    released_answers: int = 0
    """Model and past-end requests among them (the step number of the next one to release, less one)."""

    def kept(self) -> list[Record]:
        """The run's records at hand: the journal's, then the recent ones past it."""
        return [*self.records, *self.recent]


class Session:
    """What the server serves and what it has seen; safe to read from another thread."""

    def __init__(self, sequence: Sequence, *, dialect: WireName | None = None,
                 catalogue: Mapping[str, Sequence] | None = None, ok_marker: str | None = None,
                 error_marker: str | None = None, fresh_repeat_ids: bool = False, max_body: int = DEFAULT_MAX_BODY,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, write_timeout: float = DEFAULT_WRITE_TIMEOUT,
                 faults: Recipe | None = None, journal: int | None = DEFAULT_JOURNAL,
                 keep_bodies: bool = False, body_budget: int = DEFAULT_BODY_BUDGET, bench_tools: bool = False) -> None:
        self.dialect = dialect
        self.bench_tools = bench_tools
        """The program promised to take its tools from the bench (``check --bench-tools``): every run
        starts as one that listed them (:attr:`Run.tools_listed`), so a result no execution answers is
        a call that never reached a tool, known, never guessed from its words."""
        self.faults = faults
        """The fault recipe applied to every model answer (bench.faults), or None."""
        self.catalogue = dict(catalogue or {})
        self.ok_marker = ok_marker
        self.error_marker = error_marker
        self.fresh_repeat_ids = fresh_repeat_ids
        """Serve each repeat of a ``then: repeat`` turn with fresh call ids (bench.serve.repeats)."""
        self.max_body = max_body
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self.journal = journal
        """Requests kept with their bodies per run (the observation reads them); None keeps every
        request's body for as long as the session lives (debugging)."""
        self.body_budget = None if keep_bodies or journal is None else body_budget
        """Request bytes a run holds as bodies before its complete steps are observed and their bodies
        released (:meth:`_release`); None keeps every body of the journal (``keep_bodies``, debugging)."""
        self.lock = threading.Lock()
        self.runs: list[Run] = [Run(1, sequence, tools_listed=bench_tools)]

    @property
    def run(self) -> Run:
        return self.runs[-1]

    def start(self, sequence: Sequence) -> Run:
        """Serve `sequence` from its first turn on, as a new run; the run before keeps its
        observation and releases its request bodies (unless the session keeps every body)."""
        with self.lock:
            ended = self.run
            self.runs.append(Run(len(self.runs) + 1, sequence, tools_listed=self.bench_tools))
            run = self.runs[-1]
        if self.journal is not None:
            frozen = self.observed(ended)
            with self.lock:
                ended.frozen = frozen
                for rec in ended.records:
                    rec.rebuilt = rec.rebuilt or rec.seen is not None
                    rec.body = rec.seen = None
                ended.recent.clear()
                ended.beyond = ended.last_answer = ended.last_model = None
                ended.rendered.clear()
        return run

    def records(self) -> list[Record]:
        """The current run's records at hand (:meth:`Run.kept`)."""
        with self.lock:
            return self.run.kept()

    def observed(self, run: Run | None = None) -> list[Observed]:
        """The steps of a run (the current one by default) as inferred from its requests.

        Never raises: a step whose next request cannot be read is ``unknown`` with the reason. A
        request refused as one the provider would refuse is noted on the step it came after."""
        with self.lock:
            run = run or self.run
            if run.frozen is not None:
                return list(run.frozen)
            every = list(run.records)
            beyond = run.beyond
            executions = list(run.executions)
            listed = run.tools_listed
        records = [r for r in every if r.kind in _ANSWERS]
        if beyond is not None:  # the last kept step is observed against the request after it
            records.append(beyond)
        refused: dict[int, list[str]] = {}
        seen = 0
        for r in every:
            if r.kind in _ANSWERS:
                seen += 1
            elif r.kind == "refused" and r.note:
                refused.setdefault(max(seen, 1), []).append(f"a request was {r.note}")
        turns = run.sequence.turns
        out: list[Observed] = []
        for k, rec in enumerate(records):
            if rec.kind != "model" or rec.turn is None or rec is beyond:
                break
            step = k + 1
            note = "; ".join(n for n in (rec.note, *refused.get(step, ())) if n)
            if rec.step is not None:  # observed when its bodies were released
                got = rec.step.now(listed or bool(executions))
            else:
                got = self._observe(rec, records[k + 1] if k + 1 < len(records) else None, step, turns[rec.turn],
                                    executions, listed)
            out.append(replace(got, note=note))
        return out

    def _observe(self, rec: Record, nxt: Record | None, step: int, turn: Turn, executions: list[Execution],
                 listed: bool) -> Observed:
        """:meth:`_step`, a step whose next request no reader expected being unknown (the run goes on)."""
        try:
            return self._step(rec, nxt, step, turn, executions, listed)
        except Exception as exc:
            return Observed(step, rec.turn or 0, "unknown",
                            detail=f"the next request could not be read ({type(exc).__name__}: {exc})")

    def _release(self, run: Run) -> None:
        """Observe every step of `run`'s journal whose next request has arrived, keep it on its record,
        and release the bodies read so far: what keeps a run of large bodies within the body budget.

        The last model request keeps its body (the next turn and a reply followed by reference read
        it); so a reference to an older reply of the run is refused as one the server never gave
        (the client sends its whole history again, as against the provider). A step is observed as
        :meth:`observed` would, with the executions at hand: those of its round are all in (the next
        request has arrived); whether the program takes the bench's tools may still change, so a
        step observed before it did is also observed as if it did, and :meth:`observed` picks."""
        with self.lock:
            records = run.records
            first, end, beyond = run.released, len(records), run.beyond
            answers = [j for j in range(first, end) if records[j].kind in _ANSWERS]
            executions = list(run.executions)
            listed = run.tools_listed
            number = run.released_answers
        pairs = [(records[a], records[b]) for a, b in pairwise(answers)]
        if beyond is not None and answers:
            pairs.append((records[answers[-1]], beyond))
        tools = listed or bool(executions)
        steps: list[_Step | None] = []
        for k, (rec, nxt) in enumerate(pairs):
            if rec.kind != "model" or rec.turn is None:
                steps.append(None)
                continue
            turn = run.sequence.turns[rec.turn]
            then = self._observe(rec, nxt, number + k + 1, turn, executions, listed)
            steps.append(_Step(then, tools, None if tools else self._observe(rec, nxt, number + k + 1, turn,
                                                                               executions, True)))
        # up to the last request still to be followed; everything when the journal is full
        upto = end if beyond is not None and answers else (answers[len(pairs)] if answers else end)
        with self.lock:
            for (rec, _), got in zip(pairs, steps, strict=True):
                rec.step = got
            for rec in records[first:upto]:
                rec.rebuilt = rec.rebuilt or rec.seen is not None
                rec.body = rec.seen = None
                run.body_bytes -= rec.size
                rec.size = 0
            run.released = upto
            run.released_answers = number + len(pairs)

    def _step(self, rec: Record, nxt: Record | None, step: int, turn: Turn,
              executions: list[Execution], listed: bool = False) -> Observed:
        """What the client did after `rec` was answered with `turn`, read from its next request `nxt`."""
        index = rec.turn if rec.turn is not None else 0
        if nxt is None:
            ran = ran_in_round(_as_served(turn, rec), step, executions)
            if not ran:
                return Observed(step, index, "stop")
            run, failed, known = _ran(ran)
            return Observed(step, index, "stop", run, failed,
                            detail="calls run on the tool endpoint after the last request", known=known)
        wire = rec.wire
        before, after = rec.conversation_body, nxt.conversation_body
        if wire is None or nxt.wire != wire or not isinstance(before, dict) or not isinstance(after, dict):
            return Observed(step, index, "unknown", detail="next request is of another API")
        served = _as_served(turn, rec)
        got = infer(conversation(wire, before), served, rec.response_id or "", conversation(wire, after),
                    ok_marker=self.ok_marker, judge=self._judge(served, step, executions, listed))
        run, failed, known, detail = got.run, got.failed, got.known, got.detail
        if got.action == "unknown" and not run and not failed:
            # the history cannot be followed, but the tool endpoint saw what ran in this round
            ran = ran_in_round(served, step, executions)
            if ran:
                run, failed, known = _ran(ran)
                detail = f"{detail}; calls run on the tool endpoint in this round"
        return Observed(step, index, got.action, run, failed, got.message, detail,
                        request_changes(wire, before, after, got.compact), known, texts=got.texts)

    def notes(self, run: Run | None = None) -> list[str]:
        """The run's notes on requests the server refused as the provider would (bad JSON, a field
        of the wrong type), in order."""
        with self.lock:
            return [f"request {r.n + 1}: {r.note}" for r in (run or self.run).records if r.kind == "refused" and r.note]

    def _judge(self, turn: Turn, step: int, executions: list[Execution], listed: bool = False) -> ResultJudge:
        return ResultJudge(turn, step=step, executions=executions, ok_marker=self.ok_marker,
                           error_marker=self.error_marker, bench_tools=listed)

    def execute(self, name: str, arguments: Any) -> tuple[int, Execution]:
        """Run tool `name` of the current run with `arguments` (a JSON object) and record the
        execution: (HTTP status, execution). See :mod:`bench.serve.tools`."""
        with self.lock:
            run = self.run
            n = len(run.executions) + 1
            known = {c.name for t in run.sequence.turns for c in t.tool_calls if c.name}
            last = run.last_model
            turn = run.sequence.turns[last.turn] if last is not None and last.turn is not None else None
            if name not in known:
                (status, content), failed = unknown_tool(name), True
            else:
                call = scripted_call(turn, name, arguments)
                scripted = call.result if call is not None else None
                status, content, failed = 200, scripted if scripted is not None else ok_content(name, n), False
            done = Execution(n, name, arguments, run.answered, content, failed)
            run.executions.append(done)
            return status, done

    def follow(self, wire: WireName, body: dict[str, Any]) -> dict[str, Any] | Refusal:
        """The conversation a request carries, rebuilt when it follows one of this run's replies by
        reference; a :class:`~bench.serve.threads.Refusal` for a reference the run cannot follow."""
        def replied(ref: str) -> tuple[dict[str, Any], Turn] | None:
            with self.lock:
                run = self.run
                rec = next((r for r in run.kept() if r.kind == "model" and r.wire == wire and r.response_id == ref
                            and r.turn is not None and r.status == 200), None)
            if rec is None or rec.turn is None or not isinstance(rec.conversation_body, dict):
                return None
            turn = _as_served(run.sequence.turns[rec.turn], rec)
            return None if turn.error is not None else (rec.conversation_body, turn)

        return follow(wire, body, replied)

    def executions(self, run: Run | None = None) -> list[Execution]:
        """The tool endpoint's executions of a run (the current one by default)."""
        with self.lock:
            return list((run or self.run).executions)

    def ended_running(self, run: Run | None = None) -> bool:
        """Whether the client asked for a response past the end of a `then: end` sequence."""
        with self.lock:
            return (run or self.run).past_end

    def report(self) -> list[dict[str, Any]]:
        """Every run of the session: its sequence, whether it went past the end, its observed
        steps (what ``stopbench serve`` writes on exit)."""
        return [{"run": run.number, "sequence": run.sequence.id, "requests": run.total,
                 "running": self.ended_running(run),
                 "steps": [o.as_json() for o in self.observed(run)],
                 "executions": [e.as_json() for e in self.executions(run)],
                 "notes": self.notes(run), **self._injected(run)} for run in self.runs]

    def _injected(self, run: Run) -> dict[str, Any]:
        """What the fault recipe did to the run's answers, by step, when there is a recipe."""
        if self.faults is None:
            return {}
        from bench.faults import step_faults
        with self.lock:
            return {"injected": [f.as_json() for f in step_faults(run.records)]}

    # ------------------------------------------------------------ bookkeeping for the app

    def repeat(self, run: Run, index: int) -> int:
        """The repeat number of turn `index` served once more in `run` (bench.serve.repeats); 0
        unless the session serves fresh ids on repeats."""
        if not self.fresh_repeat_ids:
            return 0
        with self.lock:
            before = run.served.get(index, 0)
        return repeat_number(run.sequence, index, before)

    def record(self, rec: Record) -> None:
        with self.lock:
            run = self.run
            rec.n = run.total
            run.total += 1
            answer = rec.kind in ("model", "past_end")
            if self.journal is None or len(run.records) < self.journal:
                run.records.append(rec)
                run.body_bytes += rec.size
            else:
                run.recent.append(rec)
                if answer and run.beyond is None:
                    run.beyond = rec
            if answer:
                run.last_answer = rec
                run.past_end = run.past_end or rec.kind == "past_end"
                if rec.kind == "model" and rec.turn is not None:
                    run.last_model = rec
                    run.served[rec.turn] = run.served.get(rec.turn, 0) + 1
            model = rec.body.get("model") if isinstance(rec.body, dict) else None
            if isinstance(model, str) and model not in run.models and len(run.models) < _MODEL_NAMES:
                run.models.append(model)
            over = self.body_budget is not None and run.body_bytes > self.body_budget
        if over:
            self._release(run)

    def take_turn(self, wire: WireName, body: dict[str, Any]) -> tuple[Run, int, int | None]:
        """The current run, this request's number in it (from 1) and the turn answering it
        (None: the script ended).

        The turn is the one :func:`bench.engine.replay.following` gives after the previous model request's
        turn, for the action this request shows (inferred against the previous request as
        :meth:`observed` does): the next turn, unless a reactive turn's ``after`` names another."""
        with self.lock:
            run = self.run
            seq = run.sequence
            number = run.answered + 1
            run.answered += 1
            prev = run.last_answer
        if prev is None:
            return run, number, 0 if seq.turns else None
        if prev.kind == "past_end" or prev.turn is None:
            return run, number, None
        if prev.injected is not None and prev.injected.replaced:  # the loop never got it: asked again, as a retry
            return run, number, prev.turn
        # "stop" is in no turn's `after`: the next turn, as for an action `after` leaves out, or
        # one the server cannot tell (unknown, another API)
        action: Action = "stop"
        before = prev.conversation_body
        if seq.turns[prev.turn].after and prev.wire == wire and isinstance(before, dict) \
                and (turn := _as_served(seq.turns[prev.turn], prev)).after:
            with self.lock:
                executions = list(run.executions)
                listed = run.tools_listed
            # the previous request was number - 1: executions recorded after it ran in its round
            try:
                got = infer(conversation(wire, before), turn, prev.response_id or "", conversation(wire, body),
                            ok_marker=self.ok_marker, judge=self._judge(turn, number - 1, executions, listed))
            except Exception:  # a request no reader expected: answered as one the server cannot tell
                got = None
            if got is not None and got.action in ("continue", "resend", "remind"):
                action = got.action
        return run, number, following(seq, prev.turn, action)


def _as_served(turn: Turn, rec: Record) -> Turn:
    """The turn as request `rec` was answered: with the ids of its repeat (bench.serve.repeats) and
    without the calls withheld (bench.wires.withhold); an answer a fault recipe broke as the error
    the loop got in its place (bench.faults)."""
    inj = rec.injected
    if inj is not None and inj.kind is not None:
        return Turn("error", error=TurnError(inj.kind, inj.describe(), status=inj.status))
    turn = with_fresh_ids(turn, rec.repeat)
    return as_noted(turn, rec.note, rec.wire) if rec.note and rec.wire is not None else turn


def _ran(ran: dict[int, Execution]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, Known], ...]]:
    """Run, failed and how each was known, for calls answered by executions (bench.serve.results)."""
    return (tuple(k for k, e in sorted(ran.items()) if not e.is_error),
            tuple(k for k, e in sorted(ran.items()) if e.is_error), tuple((k, "executed") for k in sorted(ran)))
