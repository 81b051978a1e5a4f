"""The replay server's HTTP side: a Starlette app of named handlers over a :class:`~bench.serve.session.Session`.

:class:`ModelCall` answers one wire's model calls: it reads and checks the request (each refusal made by
:mod:`bench.serve.refusals`), takes the turn that answers it, renders it (once per run for the requests
that get the same answer but for its id) and records the request. :class:`Handlers` holds the rest: a
wire's side routes (token counts), the model list, the tool endpoint, the admin endpoints under
``/_stopbench/`` (the state, the records and the observed steps; a switch of sequence) and an unknown
path. :func:`create_app` ties them into the ASGI app, model calls first (:class:`ModelCallsFirst`).
Side requests (model lists, token counts, metadata probes) are answered without consuming a turn; a
stream whose client stops reading for the session's `write_timeout` seconds is cut off.

The session's names are re-exported here, where the package's users have always taken them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bench.serve import bad_requests, refusals
from bench.serve.clients import client_surface
from bench.serve.refusals import DEFAULT_MAX_BODY, DEFAULT_READ_TIMEOUT, BodyError, Refused, read_body
from bench.serve.render import WIRES, Context, WireName, at_request_limit
from bench.serve.repeats import with_fresh_ids
from bench.serve.respond import PlanResponse, Template, plan
from bench.serve.session import (
    DEFAULT_BODY_BUDGET,
    DEFAULT_JOURNAL,
    DEFAULT_WRITE_TIMEOUT,
    Record,
    Run,
    Session,
)
from bench.serve.threads import Refusal
from bench.serve.tools import tool_schemas
from bench.wires import registry
from bench.wires.base import Shape
from bench.wires.withhold import without_calls

__all__ = ["DEFAULT_BODY_BUDGET", "DEFAULT_JOURNAL", "DEFAULT_MAX_BODY", "DEFAULT_READ_TIMEOUT",
           "DEFAULT_WRITE_TIMEOUT", "Handlers", "ModelCall", "ModelCallsFirst", "Record", "Run", "Session",
           "create_app"]

Handler = Callable[[Scope, Receive], Awaitable[Response]]
"""A model call's handler: it takes the request's scope and its body's messages."""
ID_PLACEHOLDER = "stopbench-id-placeholder-7f3a9c"
"""Stands for the response id in a rendering kept for reuse (:class:`bench.serve.respond.Template`)."""
RENDERED_CAP = 1024
"""Renderings kept per run: past it the cache starts again (a model name or a limit per request)."""


class ModelCall:
    """The handler of one wire's model calls: the request checked, then answered by its turn, or refused."""

    def __init__(self, session: Session, wire: WireName) -> None:
        self.session = session
        self.wire = wire
        self.served = registry.wire(wire)

    async def __call__(self, scope: Scope, receive: Receive) -> Response:
        query = scope["query_string"]
        shape = self.served.shape(scope["path"], QueryParams(query).get("alt") if query else None)
        gateway = shape.surface if shape is not None else ""
        try:
            raw = await read_body(scope, receive, self.session.max_body, self.session.read_timeout)
        except BodyError as exc:
            return self.refuse(scope, refusals.unreadable_body(self.served, gateway, exc), None, raw=b"")
        body, refused = self.checked(raw, gateway)
        if refused is not None:
            return self.refuse(scope, refused, body, raw)
        followed = self.session.follow(self.wire, body)
        if isinstance(followed, Refusal):
            return self.refuse(scope, refusals.unfollowable(self.served, followed), body, raw)
        return self.answer(scope, raw, body, followed, shape)

    def checked(self, raw: bytes, gateway: str) -> tuple[Any, Refused | None]:
        """The request's body and, when the server refuses it, the refusal (the body None when it is no
        JSON object): not JSON, not an object, a conversation the wire cannot read, another wire's."""
        try:
            body = bad_requests.parse(raw)
        except bad_requests.BadRequest as exc:
            return None, refusals.bad_request(self.served, gateway, str(exc))
        if not isinstance(body, dict):
            return None, refusals.bad_request(self.served, gateway, "the body is not a JSON object")
        if (why := bad_requests.problem(self.wire, body, self.served.conversation)) is not None:
            return body, refusals.bad_request(self.served, gateway, why)
        dialect = self.session.dialect
        if dialect is not None and self.wire != dialect:
            return body, refusals.other_wire(self.served, gateway, dialect)
        return body, None

    def refuse(self, scope: Scope, refused: Refused, body: Any, raw: bytes) -> Response:
        """The refusal, recorded in the run (with the body and its size when it is a JSON object)."""
        self.session.record(Record(0, "refused", scope["method"], scope["path"], refused.status, wire=self.wire,
                                   body=body, raw_headers=scope["headers"], at=time.time(), note=refused.note,
                                   size=0 if body is None else len(raw)))
        return refused.response()

    def answer(self, scope: Scope, raw: bytes, body: dict[str, Any], followed: dict[str, Any],
               shape: Shape | None) -> Response:
        """The answer of the turn the request takes, or the script's end; the request recorded."""
        session = self.session
        seen = None if followed is body else followed
        stream = shape.stream if shape is not None and shape.stream is not None else self.served.streams(body)
        run, number, index = session.take_turn(self.wire, followed)
        if index is None:
            seq = run.sequence
            ended = refusals.script_ended(self.served, seq.id, len(seq.turns))
            session.record(Record(0, "past_end", scope["method"], scope["path"], ended.status, wire=self.wire,
                                  stream=stream, body=body, raw_headers=scope["headers"], at=time.time(), seen=seen,
                                  size=len(raw)))
            return ended.response()
        repeat = session.repeat(run, index)
        made, note = self.template(run, index, repeat, body, followed, shape, stream, scope["headers"])
        rid = f"{self.served.id_prefix}stopbench-{run.number}-{number}"
        injected = None
        if session.faults is None:
            response: Response = made.respond(rid, session.write_timeout)
        else:
            from bench.faults import inject
            out, injected = inject(session.faults, made.fill(rid), wire=self.wire, request_index=number,
                                   key=run.sequence.id)
            response = PlanResponse(out, session.write_timeout)
        session.record(Record(0, "model", scope["method"], scope["path"], response.status_code, wire=self.wire,
                              stream=stream, turn=index, response_id=rid, body=body, raw_headers=scope["headers"],
                              at=time.time(), note=note, seen=seen, repeat=repeat, injected=injected or None,
                              size=len(raw)))
        return response

    def template(self, run: Run, index: int, repeat: int, body: dict[str, Any], followed: dict[str, Any],
                 shape: Shape | None, stream: bool, headers: Any) -> tuple[Template, str]:
        """Turn `index` rendered for this request with a stand-in id, and what the server withheld (the note);
        kept in the run for the requests that get the same answer."""
        served, seq = self.served, run.sequence
        scripted = seq.turns[index]
        limited = at_request_limit(scripted, seq.max_tokens, self.wire, body)
        turn, note = without_calls(with_fresh_ids(limited, repeat), followed, seq.dialect,
                                   served.offers_tools(followed), served.tool_choice(followed))
        opts = body.get("stream_options")
        model = shape.model if shape and shape.model is not None else str(body.get("model") or "stopbench")
        include_usage = isinstance(opts, dict) and opts.get("include_usage") is True
        sse = shape.sse if shape else True
        surface = shape.surface if shape else client_surface(self.wire, headers)
        # what the rendering depends on besides the id: the served turn (the scripted one with the request's
        # limit, when it changed the usage, the repeat's ids and the withheld calls, the note) and the rest
        # of its Context
        key = (self.wire, index, repeat, note, None if limited is scripted else limited.usage, model, include_usage,
               sse, surface, stream)
        made = run.rendered.get(key)
        if made is None:
            ctx = Context(served.id_prefix + ID_PLACEHOLDER, model, served.finish_for(seq.dialect, turn),
                          include_usage=include_usage, sse=sse, surface=surface)
            made = Template.of(plan(served.render(turn, ctx, stream)), ctx.response_id)
            if len(run.rendered) >= RENDERED_CAP:
                run.rendered.clear()
            run.rendered[key] = made
        return made, note


class ModelCallsFirst:
    """The ASGI app: a model call to a path without parameters goes straight to its handler, as Starlette's
    route would take it there, without the router's matching and request objects (the requests a run is
    made of, and most of a request's cost on the floor of the stack: docs/reference/performance.md);
    every other request goes through the Starlette app."""

    def __init__(self, app: Starlette, direct: Mapping[str, Callable[[Scope, Receive], Awaitable[Response]]]) -> None:
        self.app = app
        self.direct = dict(direct)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            handle = self.direct.get(scope["path"])
            if handle is not None:
                try:
                    response = await handle(scope, receive)
                except Exception:  # as Starlette's ServerErrorMiddleware answers it, then the server logs it
                    await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
                    raise
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Handlers:
    """Every route of the replay server serving `session`, each a named handler."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.model_calls: dict[WireName, Handler] = {wire: ModelCall(session, wire) for wire in WIRES}

    def side(self, request: Request, status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
        """An answer on the side (no turn taken: a model list, a token count, a refusal), recorded as such."""
        self.session.record(Record(0, "side", request.method, request.url.path, status,
                                   raw_headers=request.scope["headers"], at=time.time()))
        return JSONResponse(body, status_code=status, headers=headers)

    def refuse_on_side(self, request: Request, refused: Refused) -> Response:
        return self.side(request, refused.status, refused.body, refused.headers)

    def wire_route(self, wire: WireName) -> Callable[[Request], Awaitable[Response]]:
        """A wire's routes: its model calls, and the token counts it answers on the side."""
        served = registry.wire(wire)
        model = self.model_calls[wire]

        async def wire_endpoint(request: Request) -> Response:
            kind = served.route(request.scope["path"])
            if kind == "model":
                return await model(request.scope, request.receive)
            if kind == "count":
                return await self.count_tokens(request, wire)
            return await self.not_found(request)

        return wire_endpoint

    async def count_tokens(self, request: Request, wire: WireName) -> Response:
        served = registry.wire(wire)
        try:
            raw = await read_body(request.scope, request.receive, self.session.max_body, self.session.read_timeout)
        except BodyError as exc:
            return self.refuse_on_side(request, refusals.unreadable_count(served, "", exc))
        return self.side(request, 200, served.count_tokens(len(raw)))

    async def models(self, request: Request) -> Response:
        """``stopbench`` and the first model names the run's requests used (:data:`bench.serve.app.Run.models`)."""
        with self.session.lock:
            used = list(self.session.run.models)
        data = [model_object(n) for n in dict.fromkeys(["stopbench", *used])]
        return self.side(request, 200, {"object": "list", "data": data, "has_more": False,
                                        "first_id": data[0]["id"], "last_id": data[-1]["id"]})

    async def one_model(self, request: Request) -> Response:
        return self.side(request, 200, model_object(request.path_params["name"]))

    async def not_found(self, request: Request) -> Response:
        return self.refuse_on_side(request, refusals.no_such_endpoint(request.method, request.url.path))

    async def state(self, request: Request) -> Response:
        session = self.session
        run = session.run
        return JSONResponse({"run": run.number, "sequence": run.sequence.id, "turns": len(run.sequence.turns),
                             "then": run.sequence.then, "answered": run.answered,
                             "requests": run.total, "dialect": session.dialect})

    async def records(self, request: Request) -> Response:
        return JSONResponse([r.as_json() for r in self.session.records()])

    async def observed(self, request: Request) -> Response:
        session = self.session
        return JSONResponse({"sequence": session.run.sequence.id, "running": session.ended_running(),
                             "steps": [o.as_json() for o in session.observed()]})

    async def start(self, request: Request) -> Response:
        """Serve another sequence of the catalogue, as a new run."""
        session = self.session
        try:
            body = json.loads(await read_body(request.scope, request.receive, 4096, session.read_timeout))
        except (ValueError, BodyError):
            return refusals.bad_run_request().response()
        name = body.get("sequence") if isinstance(body, dict) else None
        seq = session.catalogue.get(name) if isinstance(name, str) else None
        if seq is None:
            return refusals.unknown_sequence(name).response()
        run = session.start(seq)
        return JSONResponse({"run": run.number, "sequence": seq.id})

    async def tools(self, request: Request) -> Response:
        """The bench's tools (the program that lists them runs them: :attr:`bench.serve.app.Run.tools_listed`)."""
        session = self.session
        with session.lock:
            session.run.tools_listed = True
            sequence = session.run.sequence
        return JSONResponse({"tools": tool_schemas(sequence)})

    async def run_tool(self, request: Request) -> Response:
        """One call of a bench tool, its arguments the body (:mod:`bench.serve.tools`)."""
        session = self.session
        try:
            args = bad_requests.parse(await read_body(request.scope, request.receive, session.max_body,
                                                      session.read_timeout) or b"{}")
        except BodyError as exc:
            return refusals.tool_refused(exc.status, exc.message).response()
        except bad_requests.BadRequest as exc:
            return refusals.tool_refused(400, str(exc)).response()
        if not isinstance(args, dict):
            return refusals.tool_refused(400, "expected a JSON object (the call's arguments)").response()
        status, done = session.execute(request.path_params["name"], args)
        return JSONResponse({"content": done.content, "is_error": done.is_error}, status_code=status)

    def routes(self) -> list[Route]:
        """The Starlette routes: the wires' first (the requests a run is made of; no path overlaps below)."""
        routes: list[Route] = []
        for wire in WIRES:
            handle = self.wire_route(wire)
            routes.extend(Route(path, handle, methods=["POST"]) for path in registry.wire(wire).paths)
        routes += [
            Route("/_stopbench/tools", self.tools, methods=["GET"]),
            Route("/_stopbench/tools/{name:path}", self.run_tool, methods=["POST"]),
            Route("/_stopbench/state", self.state, methods=["GET"]),
            Route("/_stopbench/records", self.records, methods=["GET"]),
            Route("/_stopbench/observed", self.observed, methods=["GET"]),
            Route("/_stopbench/run", self.start, methods=["POST"]),
        ]
        for prefix in ("/v1", ""):
            routes.append(Route(f"{prefix}/models", self.models, methods=["GET"]))
            routes.append(Route(prefix + "/models/{name:path}", self.one_model, methods=["GET"]))
        routes.append(Route("/{rest:path}", self.not_found, methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]))
        return routes

    def asgi(self) -> ModelCallsFirst:
        """The ASGI app: the Starlette app of :meth:`routes`, a model call to a path without parameters
        taken straight to its wire's handler."""
        direct = {path: self.model_calls[wire] for wire in WIRES for path in registry.wire(wire).paths
                  if "{" not in path and registry.wire(wire).route(path) == "model"}
        return ModelCallsFirst(Starlette(routes=self.routes()), direct)


def model_object(name: str) -> dict[str, Any]:
    """A model as the model list shows it, with the fields of both the OpenAI and the Anthropic model object."""
    return {"id": name, "object": "model", "type": "model", "created": 0, "created_at": "1970-01-01T00:00:00Z",
            "owned_by": "stopbench", "display_name": name}


def create_app(session: Session) -> ModelCallsFirst:
    """The ASGI app serving `session`: its :class:`Handlers`, model calls first (:class:`ModelCallsFirst`)."""
    return Handlers(session).asgi()
