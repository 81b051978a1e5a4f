// A short agent loop in Node (20 or newer), written against plain fetch and the Chat Completions
// wire format (what the OpenAI npm client sends), so it needs no npm install:
//
//     stopbench check -- node examples/node_loop.mjs
//
// It asks, runs the tool calls, and stops when a reply has none; on an HTTP error it gives up.
// It reads OPENAI_BASE_URL, OPENAI_API_KEY, STOPBENCH_PROMPT, STOPBENCH_TOOLS and STOPBENCH_MODEL,
// and writes STOPBENCH_RESULT.
import { writeFileSync } from "node:fs";

const base = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
const tools = JSON.parse(process.env.STOPBENCH_TOOLS ?? "[]").map((f) => ({ type: "function", function: f }));
const messages = [{ role: "user", content: process.env.STOPBENCH_PROMPT ?? "Say hello." }];

async function ask() {
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: process.env.STOPBENCH_MODEL ?? "gpt-4o-mini", messages,
                           ...(tools.length ? { tools } : {}) }),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()).choices[0].message;
}

async function loop() {
  for (let step = 0; step < 20; step++) {
    const message = await ask();
    if (!message.tool_calls?.length) return { ok: true, reason: "no_tool_calls", final: message.content ?? "" };
    messages.push(message);
    for (const call of message.tool_calls) {
      let content = `ok: ${call.function.name} ran`;
      try { JSON.parse(call.function.arguments || "{}"); } catch (e) { content = `Error: ${e.message}`; }
      messages.push({ role: "tool", tool_call_id: call.id, content });
    }
  }
  return { ok: false, reason: "max_steps", final: "" };
}

let outcome;
try { outcome = await loop(); } catch (e) { outcome = { ok: false, reason: "error", final: String(e.message) }; }
if (process.env.STOPBENCH_RESULT) writeFileSync(process.env.STOPBENCH_RESULT, JSON.stringify(outcome));
process.exit(outcome.ok ? 0 : 1);
