"""The interface every provider wire implements, and the pieces the wires share.

A wire is one provider API as the bench speaks it: its finish table, how the replay server answers a
request on it (routes, a turn rendered as JSON or as a stream, error bodies), how a request on it is
read back (the conversation it carries, its output limit and tool choice, a reply it follows by
reference), how a capture of it is imported, and the reference loop's client of it. Each wire is
one sub-package of :mod:`bench.wires` holding a :class:`Wire` subclass as ``WIRE`` (or a package of
its own that registers it by an entry point); :mod:`bench.wires.registry` finds them. The server, the
observation, the importers, the reference loop, a checked program's environment, the faults, the fuzz
strategies and the corpus only ever ask a :class:`Wire`: each fact of a wire is one of its attributes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from bench.engine.model import Dialect, Finish, Turn, TurnError
from bench.wires.delivery import error_mode

if TYPE_CHECKING:
    from bench.wires.capture import ImportedTurn
    from bench.wires.client import Conversation as ClientConversation
    from bench.wires.conversation import Conversation

CHUNK = 24
"""Characters per text or arguments delta in a stream (a real stream arrives in pieces)."""

NDJSON_MEDIA = "application/x-ndjson"
"""The content type of a stream of JSON objects one per line (a wire whose stream is not server-sent events)."""

IN_STREAM_JSON_STATUS = 500
"""HTTP status answering a JSON-mode request whose turn carries an error without a status."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One raw finish string of a wire: the canonical finish it means and the documentation that says so."""

    finish: Finish
    cite: str


@dataclass(frozen=True, slots=True)
class Context:
    """What a rendering needs besides the turn: ids, the model name, the finish string to send, and
    whether a stream goes out as server-sent events (a wire whose path can ask for another form)."""

    response_id: str
    model: str
    finish_raw: str | None
    include_usage: bool = False
    sse: bool = True
    surface: str = ""
    """The provider's gateway the request came through when it is not the wire's own API (``azure``,
    ``vertex``, ``bedrock``: :attr:`Shape.surface`), empty on the wire's own paths."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """An HTTP answer: a status and either a JSON body or a list of SSE frames (bytes); `cut`: the
    connection is closed after the frames, without ending the body."""

    status: int
    body: dict[str, Any] | None = None
    frames: tuple[bytes, ...] = ()
    cut: bool = False
    media: str = "text/event-stream; charset=utf-8"
    settle: float = 0.0
    """Seconds to wait before the last frame, so that it reaches the client as a read of its own
    (Google's in-stream error, which the JS client detects only as a whole read: bench/wires/gemini)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Response headers the wire sends besides the content type (Bedrock names its error
    exception in ``x-amzn-ErrorType``: bench/wires/bedrock_converse)."""

    @property
    def streaming(self) -> bool:
        return self.body is None


@dataclass(frozen=True, slots=True)
class Shape:
    """What a request's path says about it where the body does not: streamed or not, the model, and
    whether a stream goes out as server-sent events; None where the body says it (``stream``,
    ``model``). `surface`: the provider's gateway the path belongs to (Azure OpenAI, Vertex AI, Claude
    on Bedrock), which serves the wire's conversation with that gateway's additions; empty for the
    wire's own API."""

    stream: bool | None
    model: str | None
    sse: bool
    surface: str = ""


@dataclass(frozen=True, slots=True)
class StatusError:
    """What a provider says with one HTTP error status (what a ``status`` fault sends on its wire)."""

    code: str | None
    """The error type or code the body carries (None: the wire's error body names it from the status)."""
    message: str
    headers: tuple[tuple[str, str], ...] = ()
    """Headers the provider sends with it besides ``retry-after``."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the server cannot follow: the HTTP status and the provider's error body."""

    status: int
    body: dict[str, Any]


class Assembler(Protocol):
    """A stream being imported: events fed in order, then the turn."""

    unknown: Counter[str]

    def feed(self, obj: Any, event_name: str | None = None) -> None: ...

    def feed_done(self) -> None: ...

    def finish(self) -> ImportedTurn: ...


class Renderer(Protocol):
    """A wire's rendering module: a turn as one JSON body, and as the frames of a stream."""

    def response_json(self, turn: Turn, ctx: Context) -> dict[str, Any]: ...

    def stream_frames(self, turn: Turn, ctx: Context) -> list[bytes]: ...


class Reader(Protocol):
    """A wire's request-reading module: a body as the dialect-neutral conversation."""

    def conversation(self, body: dict[str, Any]) -> Conversation: ...


class Threads(Protocol):
    """A wire's module for requests that follow a reply by reference (:mod:`bench.serve.threads`)."""

    def reference(self, body: dict[str, Any]) -> str | None: ...

    def unknown_reference(self, ref: str) -> Refusal: ...

    def rebuild(self, body: dict[str, Any], base: dict[str, Any], reply: Turn) -> dict[str, Any]: ...


class Importer(Protocol):
    """A wire's capture module: what tells its bodies apart, a whole body as a turn, a stream's assembler."""

    def StreamAssembler(self, unknown: Counter[str], /) -> Assembler: ...  # the module's assembler class

    def looks_like(self, obj: Any) -> bool: ...

    def from_response(self, obj: Any, unknown: Counter[str], status: int | None = None) -> ImportedTurn: ...


Route = Literal["model", "count"]
"""What a request to one of a wire's paths is: a model call, or a token count answered on the side."""


class Wire:
    """One provider API. Subclasses set the class attributes and implement what their API needs;
    the defaults are what most wires do (an OpenAI-shaped body carries ``stream`` and ``model``, no
    reply is followed by reference)."""

    name: ClassVar[Dialect]
    table: ClassVar[Mapping[str, Entry]]
    """Raw finish string -> canonical finish, each entry citing the provider's documentation."""
    unspecified: ClassVar[str | None] = None
    """The string whose documented meaning is 'reason unknown', when the wire has one."""
    calls_finish: ClassVar[str | None] = None
    """The finish sent for a turn that calls tools when the wire has no tool-call finish."""
    refusal_finish: ClassVar[str | None] = None
    """The finish sent for a refusal, when the wire has one of its own."""
    id_prefix: ClassVar[str]
    """The prefix of a served response id."""
    paths: ClassVar[tuple[str, ...]]
    """The POST routes (Starlette patterns) this wire answers."""
    conversation_field: ClassVar[tuple[str, tuple[type, ...], bool]]
    """The body field that carries the conversation, its JSON types, and whether it is required."""
    max_tokens_keys: ClassVar[tuple[str, ...]] = ()
    """The body fields that carry the output limit, first found wins."""
    count_refusal_code: ClassVar[str] = "invalid_request_error"
    """The error code answering a token-count request whose body cannot be read."""
    detect_rank: ClassVar[int] = 50
    """Where the importers try this wire when telling a capture's format (lower first)."""
    uri_markers: ClassVar[tuple[str, ...]] = ()
    """Parts of a recorded request's URI that mark a call of this wire (cassettes)."""
    stream_media: ClassVar[str] = "text/event-stream; charset=utf-8"
    """The content type of a streamed answer (server-sent events on most wires)."""
    renderer: Renderer
    """How a turn is rendered (``bench/wires/<wire>/render.py``)."""
    reader: Reader
    """How a request is read back (``bench/wires/<wire>/read.py``)."""
    threads: Threads | None = None
    """How a request that follows a reply by reference is rebuilt, for a wire that allows it."""
    importer: Importer
    """How a capture is imported (``bench/wires/<wire>/capture.py``)."""
    provider: ClassVar[str] = ""
    """The provider a sequence of this wire comes from when a corpus line names none (empty: the wire's name)."""
    default_model: ClassVar[str] = "stopbench"
    """The model a program under ``stopbench check`` is told to ask for (STOPBENCH_MODEL): a real name of
    the provider, because frameworks check it (LlamaIndex and AutoGen refuse a name they do not know, or
    look its context window up by name). The server answers any name."""
    client_env: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """The variables the provider's official clients read to find their server and credentials, as a
    program under ``stopbench check`` gets them: ``{url}`` is the replay server's root, ``{key}`` a
    dummy key. Two wires may give one variable only the same value."""
    client_env_removed: ClassVar[tuple[str, ...]] = ()
    """Inherited variables that would send this provider's clients elsewhere than the replay server,
    or sign with a real credential: removed from a checked program's environment."""
    status_errors: ClassVar[Mapping[int, StatusError]] = MappingProxyType({})
    """HTTP error status -> what the provider says with it (a ``status`` fault), each citing its
    documentation; a status not here gets generic words in the wire's own error body."""
    corpus_models: ClassVar[tuple[tuple[str, float], ...]] = ()
    """(model, share of sessions) the corpus generator draws on this wire (:mod:`bench.corpus.generate`);
    none: the generator makes no session of it."""
    end_turn: ClassVar[bool] = False
    """Whether a reply on this wire can carry ``end_turn`` (the generated hostile turns draw it)."""
    refused_as: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Gateway (:attr:`Shape.surface`) -> the wire whose error body and headers a refusal through it takes,
    where the gateway's API answers a refused request otherwise than the wire's own (Claude on Bedrock
    answers as Bedrock does)."""
    agent_surfaces: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(``User-Agent`` prefix, surface): a gateway a request's client tells by its user agent where the path
    cannot (Mistral's own client on Chat Completions' path); a client no prefix matches gets the wire's own API."""

    # ------------------------------------------------------------ serving

    def agent_surface(self, user_agent: str) -> str:
        """The surface a request is answered for by its client's `user_agent` (:attr:`agent_surfaces`),
        empty for the wire's own API."""
        return next((surface for prefix, surface in self.agent_surfaces if user_agent.startswith(prefix)), "")

    def route(self, path: str) -> Route | None:
        """What a request to `path` (one of :attr:`paths`) is; None: no such endpoint."""
        return "model"

    def shape(self, path: str, alt: str | None) -> Shape | None:
        """What the path says about a model call; None: the body says it (``stream``, ``model``)."""
        return None

    def streams(self, body: dict[str, Any]) -> bool:
        """Whether a request asks for a stream where its path does not say: ``stream: true`` on most
        wires (a wire that streams unless told ``false`` says so here)."""
        return body.get("stream") is True

    def count_tokens(self, size: int) -> dict[str, Any]:
        """The answer to a token-count request whose body has `size` bytes."""
        raise NotImplementedError(f"{self.name} has no token-count endpoint")

    def render_json(self, turn: Turn, ctx: Context) -> dict[str, Any]:
        """The whole turn as one response body."""
        return self.renderer.response_json(turn, ctx)

    def render_stream(self, turn: Turn, ctx: Context) -> list[bytes]:
        """The turn as the frames of a stream, the last one the finish or the error event."""
        return self.renderer.stream_frames(turn, ctx)

    def http_status(self, err: TurnError) -> int:
        """The HTTP status of an answer carrying `err`: the turn's, else 500."""
        return err.status or IN_STREAM_JSON_STATUS

    def error_headers(self, status: int) -> Mapping[str, str]:
        """The headers of an error answer with `status`, besides the content type (none by default)."""
        return {}

    def error_in_body(self, ctx: Context) -> bool:
        """Whether a JSON answer carries the turn's error inside a 200 body (a failed response)."""
        return False

    def render(self, turn: Turn, ctx: Context, stream: bool) -> Rendered:
        """The answer to one request, in JSON or as a stream, its error served as
        :func:`bench.wires.delivery.error_mode` says."""
        err = turn.error
        mode = error_mode(turn)
        if err is not None and mode == "http":
            return self._error_answer(err)
        if not stream:
            if mode == "cut":  # the JSON body breaks off half-way
                text = json.dumps(self.render_json(turn, ctx), ensure_ascii=False)
                return Rendered(200, frames=(text[:len(text) // 2].encode(),), cut=True, media="application/json")
            if err is not None and mode != "end" and not self.error_in_body(ctx):
                return self._error_answer(err)
            return Rendered(200, body=self.render_json(turn, ctx))  # (a stream cut, asked without a stream: no finish)
        frames = tuple(self.render_stream(turn, ctx))
        media = self.stream_media
        if mode == "cut":
            return Rendered(200, frames=frames[:-1], cut=True, media=media)  # the output, without the error event
        if mode == "end":  # the output, then the stream ends: no finish, no error event
            return Rendered(200, frames=frames[:-1], media=media)
        return Rendered(200, frames=frames, media=media)

    def _error_answer(self, err: TurnError) -> Rendered:
        status = self.http_status(err)
        return Rendered(status, body=self.error_body(err), headers=self.error_headers(status))

    def error_body(self, err: TurnError) -> dict[str, Any]:
        """The provider's error body (for an HTTP error status, or inside a stream)."""
        raise NotImplementedError

    def script_ended(self, detail: str) -> dict[str, Any]:
        """The error body answering a request past the end of a ``then: end`` sequence."""
        return self.error_body(TurnError("invalid_request", detail, code="script_ended"))

    def finish_for(self, sequence_dialect: Dialect, turn: Turn) -> str | None:
        """The raw finish string to send on this wire for `turn` of a sequence in `sequence_dialect`.

        The sequence's own string on its own wire; else the canonical finish translated with this
        wire's table: never a string that means something else (Anthropic's pause_turn means
        resume), so an unknown finish is the wire's own 'reason unknown' string where it has one,
        else the raw string as it is, as is a finish no string of this wire means."""
        if self.refusal_finish is not None and turn.refusal is not None and turn.error is None:
            return self.refusal_finish
        if self.name == sequence_dialect or turn.finish_raw is None:
            return turn.finish_raw
        if self.calls_finish is not None and turn.finish == "tool_calls":
            return self.calls_finish
        if turn.finish == "unknown":
            return self.unspecified if self.unspecified is not None else turn.finish_raw
        mapped = self.default_raw(turn.finish)
        return mapped if mapped is not None else turn.finish_raw

    def default_raw(self, finish: Finish) -> str | None:
        """The first raw string of this wire that maps to `finish`, or None if none does."""
        return next((raw for raw, entry in self.table.items() if entry.finish == finish), None)

    def has_tool_finish(self) -> bool:
        """Whether the wire has a finish string of its own for a turn that calls tools (on the others
        a turn with calls says stop)."""
        return self.default_raw("tool_calls") is not None

    def raw_for_calls(self) -> str | None:
        """The finish string a turn that calls tools is sent with: the tool finish, else the wire's
        string for calls, else its stop."""
        return self.default_raw("tool_calls") or self.calls_finish or self.default_raw("stop")

    def retry_hint(self, body: Any, retry_after: int) -> Any:
        """An error body that also says, in the provider's own words, to wait `retry_after` seconds
        (besides the ``retry-after`` header); the body as it is on a wire that says it in the header only."""
        return body

    def env(self, url: str, key: str) -> dict[str, str]:
        """:attr:`client_env` for the replay server at `url` with the dummy key `key`."""
        return {name: value.replace("{url}", url).replace("{key}", key) for name, value in self.client_env.items()}

    # ------------------------------------------------------------ reading requests

    def conversation(self, body: dict[str, Any]) -> Conversation:
        """A request body reduced to the dialect-neutral conversation the observation compares."""
        return self.reader.conversation(body)

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        """The request's output limit, when it sets one."""
        for key in self.max_tokens_keys:
            value = body.get(key)
            if type(value) is int:
                return value
        return None

    def offers_tools(self, body: dict[str, Any]) -> bool:
        """Whether the request offers the model any tool (:func:`offers_tools`)."""
        return offers_tools(body)

    def tool_choice(self, body: dict[str, Any]) -> str:
        """The request's tool choice in the bench's words (:func:`tool_choice`)."""
        return tool_choice(body)

    def reference(self, body: dict[str, Any]) -> str | None:
        """The id of the reply a request follows by reference, or None when it sends its whole history."""
        return None if self.threads is None else self.threads.reference(body)

    def unknown_reference(self, ref: str) -> Refusal:
        """The provider's answer to a reference to a reply it does not know."""
        return self._threads().unknown_reference(ref)

    def rebuild(self, body: dict[str, Any], base: dict[str, Any], reply: Turn) -> dict[str, Any]:
        """`body`, which follows the reply `reply` to the request `base`, as the whole conversation."""
        return self._threads().rebuild(body, base, reply)

    def _threads(self) -> Threads:
        if self.threads is None:
            raise NotImplementedError(f"{self.name} follows no reply by reference")
        return self.threads

    def stored_conversation(self, body: dict[str, Any]) -> Refusal | None:
        """The refusal of a request that adds to a conversation stored on the provider's side
        (the replay server keeps none), or None when it does not."""
        return None

    # ------------------------------------------------------------ importing captures

    def looks_like(self, obj: Any) -> bool:
        """Whether a response object or stream event is of this wire."""
        return self.importer.looks_like(obj)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        """Whether an object of this wire is a piece of a stream (not a whole response)."""
        return False

    def from_response(self, obj: Any, unknown: Counter[str], status: int | None = None) -> ImportedTurn:
        """A whole response body as a turn."""
        return self.importer.from_response(obj, unknown, status)

    def assembler(self, unknown: Counter[str], status: int | None = None) -> Assembler:
        """A stream of this wire being imported (`status`: the HTTP status it came with)."""
        return self.importer.StreamAssembler(unknown)

    # ------------------------------------------------------------ the reference loop's client

    def loop_client(self, env: Mapping[str, str]) -> Any:
        """The official client the reference loop talks through on this wire (``python -m bench.loops``),
        set up from a checked program's environment `env`."""
        raise NotImplementedError(f"the reference loop has no client for {self.name}")

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        """A conversation on this wire over an official client (:mod:`bench.loops.reference` runs it)."""
        raise NotImplementedError(f"the reference loop has no client for {self.name}")


def openai_error_body(err: TurnError) -> dict[str, Any]:
    """OpenAI's error body (Chat Completions and Responses).

    The error's `code` and `message` are echoed as data, never read: the body's type is the
    recorded code, else the kind; its `code` is the status when the turn gives one (OpenRouter's
    in-stream errors do), else the recorded code, else the kind."""
    name = err.code or err.kind
    code: str | int = err.status if err.status is not None else name
    return {"error": {"message": err.message, "type": name, "param": None, "code": code}}


OPENAI_STATUS_ERRORS: Mapping[int, StatusError] = MappingProxyType({
    429: StatusError("rate_limit_exceeded", "Rate limit reached for requests. Please try again later.",
                     (("x-ratelimit-remaining-requests", "0"),)),
    500: StatusError("server_error", "The server had an error while processing your request. Sorry about that!"),
    503: StatusError(None, "The engine is currently overloaded, please try again later."),
})
"""OpenAI's words for an error status (Chat Completions and Responses):
https://platform.openai.com/docs/guides/error-codes#api-errors (429 "Rate limit reached for requests", 500 "The
server had an error while processing your request", 503 "The engine is currently overloaded"), and
https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers (``x-ratelimit-*``). The ``openai``
Python client reads ``retry-after-ms`` and ``retry-after`` and waits that long when it is between 0 and 60 s
(openai-python ``_base_client.py``, ``_calculate_retry_timeout``)."""

OPENAI_CLIENT_ENV: Mapping[str, str] = MappingProxyType({
    "OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_BASE": "{url}/v1", "OPENAI_API_KEY": "{key}"})
"""Where OpenAI's clients look for their server and key (``/v1`` below the root; LlamaIndex and LiteLLM
read ``OPENAI_API_BASE``)."""


def offers_tools(body: dict[str, Any]) -> bool:
    """Whether a request offers the model any tool where most wires carry them (``tools``, Chat's
    older ``functions``): a non-empty list."""
    for key in ("tools", "functions"):
        offered = body.get(key)
        if isinstance(offered, list) and offered:
            return True
    return False


def tool_choice(body: dict[str, Any]) -> str:
    """A request's ``tool_choice`` in the bench's words: ``auto`` (also when absent), ``required``
    (OpenAI ``required``, Anthropic ``any``), ``none`` or the forced tool's name."""
    choice = body.get("tool_choice")
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        return {"any": "required"}.get(choice, choice)
    if isinstance(choice, dict):
        kind = choice.get("type")
        fn = choice.get("function")
        name = choice.get("name") or (fn.get("name") if isinstance(fn, dict) else None)
        if isinstance(name, str) and name:
            return name
        if kind == "any":
            return "required"
        if isinstance(kind, str) and kind in ("auto", "none", "required"):
            return kind
    return json.dumps(choice, sort_keys=True)


def pieces(text: str, size: int = CHUNK) -> list[str]:
    """`text` cut into deltas; the empty string is one empty delta."""
    if not text:
        return [""]
    return [text[i:i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: an optional event name and the data (a string as it is, else compact JSON)."""
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def tool_input(arguments: str) -> dict[str, Any]:
    """A call's arguments for a wire that carries them as a JSON object: the arguments' object, or
    {} when they are not one."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
