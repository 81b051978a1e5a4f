// Drive Pi's own agent loop (npm @earendil-works/pi-agent-core@0.84.1 + pi-ai@0.84.1) against the
// stopbench replay server.
//
//     node pi_driver.mjs SPEC.json RESULT.json
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1",
//        "wire": "openai-chat" | "anthropic" | "openai-responses" | "gemini",
//        "loop": "<npm prefix where the two packages are installed>", "prompt": "...",
//        "ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...],
//        "steers": {"<turn index>": "message"}, "safety_cap": 200}
//
// The loop is the agent core's `Agent` (agent-loop.ts runLoop) with a default config, as
// predicates/pi.py models it; the model is a custom pi-ai provider on the served wire (pi-ai's own
// openai-completions / anthropic-messages / openai-responses / google-generative-ai stream functions;
// on the Gemini wire pi-ai's @google/genai client gets the server's `/v1beta` as its baseUrl, which
// pi-ai passes on with an empty apiVersion, google-generative-ai.ts createClient). Every tool is an
// `AgentTool` stub that answers "<ok_marker> <name>" and touches nothing; its typebox schema
// requires the keys in `required` (any value, other keys allowed), so pi's argument validation
// rejects what it would reject for a real tool. A turn's `steer` is queued with `agent.steer()`
// when that turn's assistant message ends (before its tools run), as a user typing during the turn.
// Pi has no step cap: after `safety_cap` + 1 model requests the driver aborts the run and reports
// reason "capped" (the bench's own safety cap; the runner keeps the first `safety_cap` steps).
//
// RESULT: {"ok": bool, "reason": "stop" | "length" | "toolUse" | "error" | "capped",
//          "final": str | null, "error": str | null}: the last assistant message's stopReason, the
// reasons of predicates/pi.py. No Pi code is copied here; only its public API is used.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [specPath, resultPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf-8"));
const marker = spec.ok_marker ?? "STOPBENCH-OK";

// the packages are ESM with import-only export maps, installed outside the repository: resolve
// them by their package.json from the npm prefix in spec.loop
function entry(pkg, sub = ".") {
  const dir = join(spec.loop, "node_modules", pkg);
  const exports = JSON.parse(readFileSync(join(dir, "package.json"), "utf-8")).exports;
  for (const [key, value] of Object.entries(exports)) {
    const target = typeof value === "string" ? value : value.import;
    const [head, tail = null] = key.split("*");
    if (key === sub) return pathToFileURL(join(dir, target)).href;
    if (tail !== null && sub.startsWith(head) && sub.endsWith(tail)) {
      const star = sub.slice(head.length, sub.length - tail.length);
      return pathToFileURL(join(dir, target.replace("*", star))).href;
    }
  }
  throw new Error(`${pkg} does not export ${sub}`);
}

const core = await import(entry("@earendil-works/pi-agent-core"));
const ai = await import(entry("@earendil-works/pi-ai"));
const { Type } = ai;

const APIS = {
  "openai-chat": ["openai-completions", "./api/openai-completions.lazy", "openAICompletionsApi", spec.base_url],
  "anthropic": ["anthropic-messages", "./api/anthropic-messages.lazy", "anthropicMessagesApi",
                spec.base_url.replace(/\/v1\/?$/, "")],
  "openai-responses": ["openai-responses", "./api/openai-responses.lazy", "openAIResponsesApi", spec.base_url],
  "gemini": ["google-generative-ai", "./api/google-generative-ai.lazy", "googleGenerativeAIApi",
             spec.base_url.replace(/\/v1\/?$/, "/v1beta")],
};
const [api, lazyPath, factoryName, baseUrl] = APIS[spec.wire ?? "openai-chat"];
const factory = (await import(entry("@earendil-works/pi-ai", lazyPath)))[factoryName];

const model = {
  id: spec.model ?? "stopbench", name: "stopbench", api, provider: "stopbench", baseUrl, reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000,
  maxTokens: 4096,
};
const models = ai.createModels();
models.setProvider(ai.createProvider({
  id: "stopbench", name: "stopbench", baseUrl,
  auth: { apiKey: { name: "stopbench", resolve: async () => ({ auth: { apiKey: "sk-stopbench" } }) } },
  models: [model], api: { [api]: factory() },
}));

const tools = (spec.tools ?? []).map((t) => ({
  name: t.name, label: t.name, description: `stopbench stub for ${t.name}`,
  parameters: Type.Object(Object.fromEntries(t.required.map((k) => [k, Type.Any()])),
                          { additionalProperties: true }),
  execute: async () => ({ content: [{ type: "text", text: `${marker} ${t.name}` }], details: {} }),
}));

const agent = new core.Agent({
  initialState: { systemPrompt: "stopbench conformance run.", model: models.getModel("stopbench", model.id), tools },
  streamFn: models.streamSimple.bind(models),
});

const steers = spec.steers ?? {};
const cap = spec.safety_cap ?? 200;
let turns = 0;
let capped = false;
agent.subscribe((ev) => {
  if (ev.type !== "message_end" || ev.message.role !== "assistant") return;
  const steer = steers[String(turns)];
  turns += 1;
  if (steer) agent.steer({ role: "user", content: [{ type: "text", text: steer }], timestamp: Date.now() });
  // one request past the cap, so the server sees what the loop did after the cap's last turn
  if (turns > cap) { capped = true; agent.abort(); }
});

const result = { ok: null, reason: null, final: null, error: null };
try {
  await agent.prompt(spec.prompt ?? "stopbench conformance run");
  const last = [...agent.state.messages].reverse().find((m) => m.role === "assistant");
  const stop = last?.stopReason ?? "error";
  const text = (last?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
  if (capped) Object.assign(result, { ok: null, reason: "capped" });
  else if (stop === "error" || stop === "aborted") {
    Object.assign(result, { ok: false, reason: "error", error: last?.errorMessage ?? agent.state.errorMessage ?? null });
  } else Object.assign(result, { ok: true, reason: stop, final: text });
} catch (exc) {
  Object.assign(result, { ok: false, reason: "exception", error: String(exc?.stack ?? exc) });
}
writeFileSync(resultPath, JSON.stringify(result));
process.exit(0);
