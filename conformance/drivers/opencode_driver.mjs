// Drive OpenCode's own session loop (npm opencode-ai@1.18.32, the CLI) against the stopbench replay
// server.
//
//     node opencode_driver.mjs SPEC.json RESULT.json
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1",
//        "wire": "openai-chat" | "anthropic" | "openai-responses" | "gemini",
//        "loop": "<npm prefix where opencode-ai is installed>", "prompt": "...",
//        "ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...],
//        "safety_cap": 200}
//
// The run is `opencode run --pure --format json --title stopbench -m stopbench/MODEL PROMPT` in the
// driver's working directory (the runner's temporary directory, also HOME), with every XDG_* directory
// under it and the OPENCODE_DISABLE_* flags that keep it offline (models.dev fetch, autoupdate, default
// plugins, LSP downloads, share, Claude Code and external skills). `--title` suppresses the title request.
//
// Configuration written for the run (nothing of OpenCode's is copied):
// * opencode.json: one provider, `stopbench`, on the served API through the AI SDK provider OpenCode
//   bundles for it (@ai-sdk/openai-compatible for Chat, @ai-sdk/anthropic, @ai-sdk/openai for
//   Responses, @ai-sdk/google for Gemini), apiKey and baseURL pointing at the server (for Gemini the
//   server's `/v1beta`, where @ai-sdk/google's default base URL ends too: it appends
//   `/models/<id>:streamGenerateContent?alt=sse`); `autoupdate` false, `share` disabled.
// * One custom tool per tool name of the sequence, `.opencode/tool/<name>.js` (OpenCode's documented
//   custom-tool folder; the file name is the tool id): a plain object {description, args, execute}
//   whose `args` are JSON-schema properties (OpenCode builds the tool's JSON schema from them, with
//   every listed key required, and does not validate them itself) and whose execute fails an input
//   that is not an object with those keys, as OpenCode's own tools do, and otherwise answers
//   "<ok_marker> <name>" and touches nothing. OpenCode's built-in tools stay registered (a sequence
//   calling `bash` meets the custom `bash`, registered after the built-in).
// * Each config directory OpenCode scans (~/.config/opencode, ~/.opencode, ./.opencode) gets an empty
//   node_modules and a package-lock.json that lists @opencode-ai/plugin: OpenCode's background
//   dependency install (which custom tools wait for) then finds nothing to do and never reaches npm;
//   npm_config_registry points at a closed local port in case it tries anyway.
//
// OpenCode has no step cap: after `safety_cap` + 1 steps (step_start events) the driver kills it and
// reports reason "capped". RESULT: {"ok", "reason": "exit" | "content_filter" | "error" | "capped",
// "final", "error"}: the reasons of predicates/opencode.py, read from the JSON events and the exit status.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [specPath, resultPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf-8"));
const marker = spec.ok_marker ?? "STOPBENCH-OK";
const work = process.cwd();
const home = process.env.HOME ?? work;

const PROVIDERS = {
  "openai-chat": "@ai-sdk/openai-compatible",
  "anthropic": "@ai-sdk/anthropic",
  "openai-responses": "@ai-sdk/openai",
  "gemini": "@ai-sdk/google",
};
const wire = spec.wire ?? "openai-chat";
const baseURL = wire === "gemini" ? spec.base_url.replace(/\/v1\/?$/, "/v1beta") : spec.base_url;
// OpenCode offers a tool named apply_patch (its own or a custom one) only to models whose id has
// "gpt-" (ToolRegistry.tools filter), and edit/write only to the others: a sequence that calls
// apply_patch gets the model id "gpt-stopbench" (the id changes the tool set and the system prompt,
// not the loop).
const modelId = (spec.tools ?? []).some((t) => t.name === "apply_patch") ? "gpt-stopbench" : "stopbench";
const config = {
  $schema: "https://opencode.ai/config.json",
  provider: {
    stopbench: {
      npm: PROVIDERS[wire], name: "stopbench",
      options: { baseURL, apiKey: "sk-stopbench" },
      models: { [modelId]: { name: modelId } },
    },
  },
  model: `stopbench/${modelId}`, autoupdate: false, share: "disabled",
};
writeFileSync(join(work, "opencode.json"), JSON.stringify(config, null, 2));

const xdg = {
  XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local/share"),
  XDG_CACHE_HOME: join(home, ".cache"), XDG_STATE_HOME: join(home, ".local/state"),
};
const lock = { name: "stopbench", lockfileVersion: 3,
               packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } };
for (const dir of [join(xdg.XDG_CONFIG_HOME, "opencode"), join(home, ".opencode"), join(work, ".opencode")]) {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(lock));
}
mkdirSync(join(work, ".opencode", "tool"), { recursive: true });
for (const t of spec.tools ?? []) {
  const args = Object.fromEntries(t.required.map((k) => [k, { description: k }]));
  // the input is checked as OpenCode checks its own tools' input before running them (Tool.define's
  // wrapper decodes it with the tool's schema and fails the call with ToolInvalidArgumentsError,
  // bin/opencode @97007238): an object with the required keys. A custom tool's `args` are not
  // checked by OpenCode itself, so without this a JSON string as input would run.
  const src = `const required = ${JSON.stringify(t.required)};
export default {
  description: ${JSON.stringify(`stopbench stub for ${t.name}`)},
  args: ${JSON.stringify(args)},
  execute: async (input) => {
    if (input === null || typeof input !== "object" || Array.isArray(input)
        || required.some((k) => !Object.hasOwn(input, k))) {
      throw new Error(${JSON.stringify(`The ${t.name} tool was called with invalid arguments.`)});
    }
    return ${JSON.stringify(`${marker} ${t.name}`)};
  },
};
`;
  writeFileSync(join(work, ".opencode", "tool", `${t.name}.js`), src);
}

const env = {
  PATH: process.env.PATH, HOME: home, LANG: process.env.LANG ?? "C.UTF-8", ...xdg,
  NO_PROXY: "127.0.0.1,localhost", npm_config_registry: "http://127.0.0.1:9/",
  OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1", OPENCODE_DISABLE_SHARE: "1", OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
};
const bin = join(spec.loop, "node_modules", "opencode-linux-x64", "bin", "opencode");
const argv = [...(process.env.OC_DEBUG ? ["--print-logs", "--log-level", "DEBUG"] : []), "run", "--pure", "--format", "json", "--title", "stopbench", "-m", `stopbench/${modelId}`,
              spec.prompt ?? "stopbench conformance run"];
// OC_DEBUG=1 in the environment adds OpenCode's debug log to stderr.txt in the run's directory
const cap = spec.safety_cap ?? 200;

const child = spawn(bin, argv, { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
const events = [];
let steps = 0;
let capped = false;
let buffer = "";
let stderr = "";
child.stdout.on("data", (chunk) => {
  buffer += chunk.toString("utf-8");
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (!line) continue;
    let ev;
    try { ev = JSON.parse(line); } catch { continue; }
    events.push(ev);
    if (ev.type === "step_start" && ++steps > cap && !capped) { capped = true; child.kill("SIGTERM"); }
  }
});
child.stderr.on("data", (chunk) => { stderr += chunk.toString("utf-8"); });
const code = await new Promise((resolve) => child.on("close", (c, sig) => resolve(c ?? sig)));
writeFileSync(join(work, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
writeFileSync(join(work, "stderr.txt"), stderr);

const result = { ok: null, reason: null, final: null, error: null };
// an error the loop went on from (a step started after it: a context overflow is compacted and the
// loop continues, SessionPrompt.run) does not end the run; the last error with no step after it does
const lastError = events.findLastIndex((e) => e.type === "error");
const wentOn = lastError >= 0 && events.slice(lastError + 1).some((e) => e.type === "step_start");
const errors = wentOn ? [] : events.filter((e) => e.type === "error");
const texts = events.filter((e) => e.type === "text").map((e) => e.part?.text ?? "");
if (capped) Object.assign(result, { reason: "capped" });
else if (errors.length) {
  const err = errors.at(-1).error ?? {};
  const name = err.name ?? "";
  const message = err.data?.message ?? err.message ?? JSON.stringify(err);
  Object.assign(result, { ok: false, reason: /ContentFilter/i.test(name) ? "content_filter" : "error",
                          error: `${name}: ${message}` });
} else if (code !== 0 && !wentOn) {
  Object.assign(result, { ok: false, reason: "error", error: `opencode exited ${code}: ${stderr.trim().split("\n").slice(-3).join(" | ")}` });
} else Object.assign(result, { ok: true, reason: "exit", final: texts.at(-1) ?? null });
writeFileSync(resultPath, JSON.stringify(result));
