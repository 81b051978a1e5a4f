"""A minimal tool loop on Ollama's official client, as a user writes it, for ``stopbench check --dialect
ollama`` (tests/wires/test_ollama_cohere_check.py): ``ollama.Client()`` finds the server in OLLAMA_HOST,
every call is run, the loop stops on a reply without calls and says whether it ended with done_reason stop."""

import json
import os

import ollama

tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                           "parameters": t["parameters"]}}
         for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
client = ollama.Client()
messages: list = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
for _ in range(10):
    reply = client.chat(model=os.environ["STOPBENCH_MODEL"], messages=messages, tools=tools)
    messages.append(reply.message)
    if not reply.message.tool_calls:
        ok = reply.done_reason == "stop" and bool(reply.message.content)
        with open(os.environ["STOPBENCH_RESULT"], "w") as out:
            json.dump({"ok": ok, "reason": reply.done_reason or "none", "final": reply.message.content or ""}, out)
        break
    for call in reply.message.tool_calls:
        messages.append({"role": "tool", "content": f"ok: {call.function.name} ran", "tool_name": call.function.name})
