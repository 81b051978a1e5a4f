"""A plain tool loop on ``litellm.completion``, as LiteLLM's function-calling guide writes one, for
``stopbench check``.

Followed: https://docs.litellm.ai/docs/completion/function_call ("Parallel Function calling": call
``litellm.completion(model, messages, tools, tool_choice="auto")``, read
``response.choices[0].message.tool_calls``, append the assistant message and one ``role: "tool"``
message per call, call again). The guide's loop makes one round; this one repeats the round while the
reply carries calls and stops at the first reply without, which is how the guide decides it is done
(it has no round limit, so neither has this loop: the bench's safety cap ends a loop that never stops).

The wire is the sequence's, through LiteLLM's provider prefixes, each pointed at the replay server
with ``api_base`` as LiteLLM's provider pages say: ``openai/<id>`` (OPENAI_BASE_URL),
``anthropic/<id>`` (ANTHROPIC_BASE_URL; LiteLLM appends ``/v1/messages``), ``gemini/<id>``
(GOOGLE_GEMINI_BASE_URL + ``/v1beta``; LiteLLM appends ``/models/<id>:generateContent``) and
``bedrock/converse/<id>`` (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, the Converse API signed with the dummy
AWS keys ``check`` sets). The tools are function tools built from STOPBENCH_TOOLS whose execution is
``POST $STOPBENCH_TOOLS_URL/<name>``; the result's text goes back as the tool message. How the run
ended goes to STOPBENCH_RESULT: ``{"ok", "reason", "final"}`` with the last choice's finish_reason as
LiteLLM maps it; an exception is ok=false with its class name.
"""

import json
import os
import urllib.request

import litellm

ROUTES = {
    "openai-chat": ("openai", lambda env: env["OPENAI_BASE_URL"]),
    "anthropic": ("anthropic", lambda env: env["ANTHROPIC_BASE_URL"]),
    "gemini": ("gemini", lambda env: env["GOOGLE_GEMINI_BASE_URL"].rstrip("/") + "/v1beta"),
    "bedrock-converse": ("bedrock/converse", lambda env: env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"]),
}
"""The sequence's wire: (LiteLLM's model prefix, the api_base on the replay server)."""


def tools() -> list[dict]:
    """The sequence's tools as OpenAI-style function tools (LiteLLM's input format on every provider)."""
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t["parameters"]}}
            for t in json.loads(os.environ.get("STOPBENCH_TOOLS") or "[]")]


def run_tool(name: str, arguments: dict) -> str:
    """Run one call on the bench's tools; their text (an error's too) is the result."""
    request = urllib.request.Request(f"{os.environ['STOPBENCH_TOOLS_URL']}/{name}",
                                     data=json.dumps(arguments).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return str(json.loads(answer.read())["content"])


def main() -> dict:
    prefix, base = ROUTES[os.environ.get("STOPBENCH_DIALECT", "openai-chat")]
    model = f"{prefix}/{os.environ.get('STOPBENCH_MODEL', 'gpt-4o')}"
    messages: list = [{"role": "user", "content": os.environ.get("STOPBENCH_PROMPT", "Say hello.")}]
    try:
        while True:
            response = litellm.completion(model=model, messages=messages, tools=tools(), tool_choice="auto",
                                          api_base=base(os.environ))
            choice = response.choices[0]
            message = choice.message
            if not message.tool_calls:
                return {"ok": True, "reason": str(choice.finish_reason), "final": message.content or ""}
            messages.append(message)
            for call in message.tool_calls:
                result = run_tool(call.function.name, json.loads(call.function.arguments or "{}"))
                messages.append({"tool_call_id": call.id, "role": "tool", "name": call.function.name,
                                 "content": result})
    except Exception as exc:  # LiteLLM (or the guide's json.loads of the arguments) raised
        return {"ok": False, "reason": type(exc).__name__, "final": str(exc)[:500]}


if __name__ == "__main__":
    outcome = main()
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump(outcome, fh)
