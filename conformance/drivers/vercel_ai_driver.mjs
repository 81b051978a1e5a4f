// Drive the Vercel AI SDK's `generateText` tool loop (npm ai@7.0.173 with @ai-sdk/openai@4.0.118 and
// @ai-sdk/anthropic@4.0.105) against the stopbench replay server.
//
//     node vercel_ai_driver.mjs SPEC.json RESULT.json
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "wire": "openai-chat" | "anthropic" | "openai-responses",
//        "loop": "<npm prefix where the three packages are installed>", "prompt": "...",
//        "ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...]}
//
// The call is `generateText({model, tools, prompt})` with nothing else set: the default stop
// condition (isStepCount(1)), maxRetries 2, no repair function, as predicates/vercel_ai.py models it.
// With STOPBENCH_VERCEL_STEPS=N in the environment (set by vercel_ai_steps_driver.mjs) it adds
// `stopWhen: isStepCount(N)` (predicates/vercel_ai_steps.py). The model is the provider for the
// served wire: `createOpenAI({baseURL}).chat(id)` (Chat Completions), `.responses(id)` (Responses),
// `createAnthropic({baseURL})(id)` (Messages). Every tool is `tool({inputSchema: z.object(...)})` (zod
// 4.6.7, the ai package's peer dependency, pinned beside it) whose schema requires the keys in `required` (any value, other keys allowed), so the SDK's input
// validation rejects what it would reject for a real tool; execute answers "<ok_marker> <name>".
//
// RESULT: {"ok": bool, "reason": <the last step's unified finishReason> | <the thrown error's name>,
//          "final": str | null, "error": str | null}: a returned generateText is ok with its
// finishReason (stop, length, content-filter, tool-calls, other), a thrown one is not ok with the
// error's name (AI_APICallError, AI_RetryError): the reasons of predicates/_vercel_ai.py.
// No AI SDK code is copied here; only its public API is used.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [specPath, resultPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf-8"));
const marker = spec.ok_marker ?? "STOPBENCH-OK";
const steps = process.env.STOPBENCH_VERCEL_STEPS ? Number(process.env.STOPBENCH_VERCEL_STEPS) : null;

// ESM packages installed outside the repository: resolve each by its package.json's "." import
function entry(pkg) {
  const dir = join(spec.loop, "node_modules", pkg);
  const exp = JSON.parse(readFileSync(join(dir, "package.json"), "utf-8")).exports["."];
  const target = typeof exp === "string" ? exp : exp.import ?? exp.default;
  return pathToFileURL(join(dir, typeof target === "string" ? target : target.default)).href;
}

const ai = await import(entry("ai"));
const wire = spec.wire ?? "openai-chat";
const id = spec.model ?? "stopbench";
let model;
if (wire === "anthropic") {
  const { createAnthropic } = await import(entry("@ai-sdk/anthropic"));
  model = createAnthropic({ baseURL: spec.base_url, apiKey: "sk-stopbench" })(id);
} else {
  const { createOpenAI } = await import(entry("@ai-sdk/openai"));
  const provider = createOpenAI({ baseURL: spec.base_url, apiKey: "sk-stopbench" });
  model = wire === "openai-responses" ? provider.responses(id) : provider.chat(id);
}

// a zod schema, as the AI SDK's docs write tools (a bare jsonSchema() has no validator: the SDK would
// pass any input through); zod 4 keeps z.unknown() keys required
const { z } = await import(entry("zod"));
const tools = Object.fromEntries((spec.tools ?? []).map((t) => [t.name, ai.tool({
  description: `stopbench stub for ${t.name}`,
  inputSchema: z.object(Object.fromEntries(t.required.map((k) => [k, z.unknown()]))).passthrough(),
  execute: async () => `${marker} ${t.name}`,
})]));

const result = { ok: null, reason: null, final: null, error: null };
try {
  const options = { model, tools, prompt: spec.prompt ?? "stopbench conformance run" };
  if (steps !== null) options.stopWhen = ai.isStepCount(steps);
  const out = await ai.generateText(options);
  Object.assign(result, { ok: true, reason: out.finishReason, final: out.text });
} catch (exc) {
  Object.assign(result, { ok: false, reason: exc?.name ?? "exception", error: String(exc?.message ?? exc) });
}
writeFileSync(resultPath, JSON.stringify(result));
process.exit(0);
