"""Ollama's native chat API (``POST /api/chat``): finish table, serving, reading, importing.

The answer is rendered by :mod:`.render` (a stream as NDJSON lines, not server-sent events), a
request read back by :mod:`.read`, a capture imported by :mod:`.capture`; :data:`WIRE` ties them
behind :class:`bench.wires.base.Wire`. A request streams unless it says ``"stream": false``
(ollama/ollama v0.33.0-rc2 @ fb307609, api/types.go L140-141: "true by default"; routes.go
L2387-2388). There is no tool-call finish: calls arrive in the message with ``done_reason: stop``
(docs/api.md L760), so a turn that calls tools is sent ``stop``. A request without ``messages``
loads the model (``done_reason: load``) on a real server; the replay server refuses it (there is
no script to follow), as it refuses a missing conversation on every wire.

The finish table: the ``done_reason`` strings Ollama's server writes. The field is a plain string on
both sides (api/types.go L539-540 ``ChatResponse.DoneReason``; ollama-python v0.6.2 @ 25b93290
ollama/_types.py L240-241, "reason for completion, only present when done is True"): no enum names
them, so the table is what the server's code sends. Its runner's reasons are
``stop`` and ``length`` (llm/server.go L249-265 ``DoneReason.String``; ``length`` when the runner
stopped at its token limit, llm/llama_server.go L1713-1717); the chat handler itself answers
``load`` and ``unload`` to a request with no messages (server/routes.go L2504-2516, L2645-2654).
"""

# ruff: noqa: E501  (one documented finish-table entry per line reads better than wrapped citations)
from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bench.engine.model import TurnError
from bench.wires.base import NDJSON_MEDIA, Entry, StatusError, Wire
from bench.wires.ollama import capture, read, render

if TYPE_CHECKING:
    from bench.wires.client import Conversation as ClientConversation

_SRC = "ollama/ollama v0.33.0-rc2 @ fb307609"


class Ollama(Wire):
    name = "ollama"
    table = MappingProxyType({
        "stop": Entry("stop", f"{_SRC} llm/server.go L253, L262-263 (DoneReasonStop): the model ended its answer or hit a stop sequence; tool calls arrive with it (docs/api.md L760)"),
        "length": Entry("length", f"{_SRC} llm/server.go L254, L260-261 (DoneReasonLength), llm/llama_server.go L1713-1717: the runner stopped at its limit (options.num_predict)"),
        "load": Entry("unknown", f"{_SRC} server/routes.go L2645-2654, docs/api.md L1111-1136: a request with no messages loads the model and is answered at once, with no generation: neither an answer nor a call"),
        "unload": Entry("unknown", f"{_SRC} server/routes.go L2504-2516, docs/api.md L1139-1168: a request with no messages and keep_alive 0 unloads the model: no generation, neither an answer nor a call"),
    })
    calls_finish = "stop"
    default_model = "llama3.2"  # the model of docs/api.md's chat examples (L536-760)
    # ollama-python v0.6.2 @ 25b93290 ollama/_client.py: the client's host, else OLLAMA_HOST (L113); OLLAMA_API_KEY
    # goes out as a bearer token (L108), a real credential for ollama.com: removed
    client_env = MappingProxyType({"OLLAMA_HOST": "{url}"})
    client_env_removed = ("OLLAMA_API_KEY",)
    # a server whose queue is full (server/sched.go L88 ErrMaxQueue, answered 503 by routes.go L3113-3114);
    # Ollama's error body has only the message (Wire.error_body)
    status_errors = MappingProxyType({
        503: StatusError(None, "server busy, please try again.  maximum pending requests exceeded"),
    })
    id_prefix = "ollama-"
    paths = ("/api/chat",)
    conversation_field = ("messages", (list,), True)
    detect_rank = 35
    uri_markers = ("/api/chat",)
    stream_media = NDJSON_MEDIA
    renderer = render
    reader = read
    importer = capture

    def streams(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is not False

    def max_tokens(self, body: dict[str, Any]) -> int | None:
        options = body.get("options")
        value = options.get("num_predict") if isinstance(options, dict) else None
        return value if type(value) is int else None

    def error_body(self, err: TurnError) -> dict[str, Any]:
        return render.error_body(err)

    def looks_like(self, obj: Any) -> bool:
        return capture.looks_like(obj)

    def is_stream_event(self, obj: dict[str, Any]) -> bool:
        return obj.get("done") is False and isinstance(obj.get("message"), dict)

    def loop_client(self, env: Mapping[str, str]) -> Any:
        from bench.wires.ollama.client import official_client

        return official_client(env)

    def open_conversation(self, client: Any, model: str, prompt: str, tools: Sequence[dict[str, Any]],
                          system: str | None = None) -> ClientConversation:
        from bench.wires.ollama.client import Chat  # over an httpx.Client

        return Chat(client, model, prompt, tools, system)


WIRE = Ollama()
