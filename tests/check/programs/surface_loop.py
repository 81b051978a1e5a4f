"""A minimal tool loop on one provider surface's official client, as a user writes it, for ``stopbench
check`` (tests/check/test_check_surfaces.py): ``python surface_loop.py SURFACE``.

Each client is built with docs/check.md's one line of set-up for its surface, from the variables
``check`` gives every run: the gateways take the server's root from ANTHROPIC_BASE_URL (any key,
token or project works; Bedrock signs with the dummy AWS keys ``check`` sets), Ollama and Cohere read
their own variables. Every call is answered, the loop stops on a reply without calls, and the result
says whether that reply ended with the wire's normal finish.
"""

import json
import os
import sys

ROOT = os.environ["ANTHROPIC_BASE_URL"]
MODEL = os.environ["STOPBENCH_MODEL"]
PROMPT = os.environ["STOPBENCH_PROMPT"]
TOOLS = json.loads(os.environ["STOPBENCH_TOOLS"])
ROUNDS = 10


def report(ok: bool, reason: str, final: str) -> None:
    with open(os.environ["STOPBENCH_RESULT"], "w", encoding="utf-8") as fh:
        json.dump({"ok": ok, "reason": reason, "final": final}, fh)


def functions() -> list[dict]:
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t["parameters"]}} for t in TOOLS]


def azure() -> None:
    import openai
    client = openai.AzureOpenAI(azure_endpoint=ROOT, api_version="2024-10-21", api_key="k", max_retries=0)
    messages: list = [{"role": "user", "content": PROMPT}]
    for _ in range(ROUNDS):
        choice = client.chat.completions.create(model=MODEL, messages=messages, tools=functions()).choices[0]
        if not choice.message.tool_calls:
            return report(choice.finish_reason == "stop", choice.finish_reason, choice.message.content or "")
        messages.append(choice.message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": c.id, "content": f"ok: {c.function.name} ran"}
                     for c in choice.message.tool_calls]


def vertex_gemini() -> None:
    import google.oauth2.credentials
    from google import genai
    from google.genai import types
    client = genai.Client(vertexai=True, project="p", location="us-central1",
                          credentials=google.oauth2.credentials.Credentials(token="k"),
                          http_options=types.HttpOptions(base_url=ROOT))
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
            name=t["name"], description=t.get("description", ""), parameters_json_schema=t["parameters"])
            for t in TOOLS])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents: list = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]
    for _ in range(ROUNDS):
        reply = client.models.generate_content(model=MODEL, contents=contents, config=config)
        candidate = reply.candidates[0] if reply.candidates else None
        reason = candidate.finish_reason.name if candidate and candidate.finish_reason else "none"
        if not reply.function_calls:
            return report(reason == "STOP" and bool(reply.text), reason, reply.text or "")
        contents.append(candidate.content)
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=c.name, response={"result": f"ok: {c.name} ran"})
            for c in reply.function_calls]))


def claude(client) -> None:
    messages: list = [{"role": "user", "content": PROMPT}]
    tools = [{"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
             for t in TOOLS]
    for _ in range(ROUNDS):
        with client.messages.stream(model=MODEL, max_tokens=1024, messages=messages, tools=tools) as stream:
            reply = stream.get_final_message()
        calls = [b for b in reply.content if b.type == "tool_use"]
        if not calls:
            text = "".join(b.text for b in reply.content if b.type == "text")
            return report(reply.stop_reason == "end_turn", str(reply.stop_reason), text)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id,
                                                      "content": f"ok: {c.name} ran"} for c in calls]})


def vertex_claude() -> None:
    import anthropic
    claude(anthropic.AnthropicVertex(region="us-east5", project_id="p", access_token="k", base_url=ROOT + "/v1",
                                     max_retries=0))


def bedrock() -> None:
    import anthropic
    claude(anthropic.AnthropicBedrock(aws_region="us-east-1", base_url=ROOT, max_retries=0))


def ollama_chat() -> None:
    import ollama
    client = ollama.Client()
    messages: list = [{"role": "user", "content": PROMPT}]
    for _ in range(ROUNDS):
        reply = client.chat(model=MODEL, messages=messages, tools=functions())
        messages.append(reply.message)
        if not reply.message.tool_calls:
            return report(reply.done_reason == "stop", reply.done_reason or "none", reply.message.content or "")
        messages += [{"role": "tool", "content": f"ok: {c.function.name} ran", "tool_name": c.function.name}
                     for c in reply.message.tool_calls]


def cohere_chat() -> None:
    import cohere
    client = cohere.ClientV2()
    messages: list = [{"role": "user", "content": PROMPT}]
    for _ in range(ROUNDS):
        reply = client.chat(model=MODEL, messages=messages, tools=functions())
        if not reply.message.tool_calls:
            text = "".join(c.text for c in reply.message.content or [] if c.type == "text")
            return report(reply.finish_reason == "COMPLETE", str(reply.finish_reason), text)
        messages.append({"role": "assistant", "tool_plan": reply.message.tool_plan,
                         "tool_calls": [c.model_dump(exclude_none=True) for c in reply.message.tool_calls]})
        messages += [{"role": "tool", "tool_call_id": c.id, "content": f"ok: {c.function.name} ran"}
                     for c in reply.message.tool_calls]


SURFACES = {"azure": azure, "vertex-gemini": vertex_gemini, "vertex-claude": vertex_claude, "bedrock": bedrock,
            "ollama": ollama_chat, "cohere": cohere_chat}

if __name__ == "__main__":
    SURFACES[sys.argv[1]]()
