"""Azure OpenAI, a gateway of the Chat Completions and Responses wires: its paths and what its answers
add to OpenAI's.

The paths are those the official ``openai`` client asks (openai-python 3.60.0
``src/openai/lib/azure.py``: ``AzureOpenAI`` builds ``{azure_endpoint}/openai`` or
``{azure_endpoint}/openai/deployments/{azure_deployment}`` as its base URL, L336-342, and puts
``/deployments/{model}`` before ``/chat/completions``, L158-161; ``api-version`` in the query,
L326) and those of Azure's v1 API, which takes the OpenAI client at ``{endpoint}/openai/v1``
(https://learn.microsoft.com/en-us/azure/ai-foundry/openai/api-version-lifecycle, "API evolution").
On a deployment path the model is the deployment's name; the body says whether it streams. The
``api-key`` header or an Entra ``Authorization: Bearer`` token are what a client sends; the replay
server checks neither.

Azure's content filter adds two things a loop may read, both kept from a recording in the turn's
``finish_detail`` by the importer (:mod:`bench.wires.openai_chat.capture`) and served back on these
paths only: ``content_filter_results`` on a choice whose finish is ``content_filter``, and a prompt
refused before the model ran, the 400 whose error carries ``innererror.content_filter_result``
(https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter, "Scenario
details"; the shapes of traceloop/openllmetry@93429cfb97 test_azure cassettes, the sequences
rec-azure-content-filter-hate and rec-azure-prompt-filter-error). A turn that recorded none gets
none: which category a constructed filter hit is not known.
"""

from __future__ import annotations

import json
from typing import Any

from bench.engine.model import Turn
from bench.wires.base import Shape

SURFACE = "azure"
DEPLOYMENT = "/openai/deployments/{deployment}"
"""The prefix of a deployment path (the deployment's name is the model)."""
V1 = "/openai/v1"
"""The prefix of Azure's v1 API (the model in the body, as on OpenAI)."""
_CHOICE = "content_filter_results: "
_PROMPT = "content_filter_result: "


CHAT_PATHS = (DEPLOYMENT + "/chat/completions", V1 + "/chat/completions")
RESPONSES_PATHS = ("/openai/responses", DEPLOYMENT + "/responses", V1 + "/responses")
"""``AzureOpenAI`` asks ``/openai/responses`` (``/responses`` is no deployments endpoint, L25-36, L175-181)."""


def shape(path: str) -> Shape | None:
    """What an Azure path says (the deployment as the model), None for another path."""
    if not path.startswith("/openai/"):
        return None
    head, _, rest = path.removeprefix("/openai/deployments/").partition("/")
    deployment = head if path.startswith("/openai/deployments/") and rest else None
    return Shape(None, deployment, True, SURFACE)


def _recorded(turn: Turn, prefix: str) -> dict[str, Any] | None:
    detail = turn.finish_detail or ""
    if not detail.startswith(prefix):
        return None
    try:
        value = json.loads(detail.removeprefix(prefix))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def choice_filters(turn: Turn) -> dict[str, Any]:
    """What a choice carries besides OpenAI's fields: the recorded ``content_filter_results`` of a
    content-filter finish, else nothing."""
    found = _recorded(turn, _CHOICE) if turn.finish == "content_filter" else None
    return {} if found is None else {"content_filter_results": found}


def prompt_filter_error(body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """An error body as Azure sends a prompt its filter refused (the recorded body: the message, no
    type, ``param: prompt``, the recorded code, the status, ``innererror`` with
    ``ResponsibleAIPolicyViolation`` and the recorded ``content_filter_result``); any other error
    body as it is."""
    found = _recorded(turn, _PROMPT)
    err = turn.error
    if found is None or err is None:
        return body
    return {"error": {"message": err.message, "type": None, "param": "prompt", "code": err.code or err.kind,
                      "status": err.status,
                      "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": found}}}
