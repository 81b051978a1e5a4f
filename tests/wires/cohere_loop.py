"""A minimal tool loop on Cohere's official client, as a user writes it, for ``stopbench check --dialect
cohere`` (tests/wires/test_ollama_cohere_check.py): ``cohere.ClientV2()`` finds the server in CO_API_URL
and its key in CO_API_KEY, every call is run, the loop stops on a reply without calls and says whether
it ended with COMPLETE."""

import json
import os

import cohere

tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                           "parameters": t["parameters"]}}
         for t in json.loads(os.environ["STOPBENCH_TOOLS"])]
client = cohere.ClientV2()
messages: list = [{"role": "user", "content": os.environ["STOPBENCH_PROMPT"]}]
for _ in range(10):
    reply = client.chat(model=os.environ["STOPBENCH_MODEL"], messages=messages, tools=tools)
    if not reply.message.tool_calls:
        text = "".join(c.text for c in reply.message.content or [] if c.type == "text")
        with open(os.environ["STOPBENCH_RESULT"], "w") as out:
            json.dump({"ok": reply.finish_reason == "COMPLETE", "reason": str(reply.finish_reason), "final": text}, out)
        break
    messages.append({"role": "assistant", "tool_plan": reply.message.tool_plan,
                     "tool_calls": [c.model_dump(exclude_none=True) for c in reply.message.tool_calls]})
    for call in reply.message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": f"ok: {call.function.name} ran"})
