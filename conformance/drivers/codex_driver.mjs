// Drive Codex's own turn loop (npm @openai/codex@0.169.0, the Rust CLI) against the stopbench replay
// server, on the Responses API (the only one Codex speaks).
//
//     node codex_driver.mjs SPEC.json RESULT.json
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "wire": "openai-responses",
//        "loop": "<npm prefix where @openai/codex is installed>", "prompt": "...",
//        "ok_marker": "STOPBENCH-OK", "tools": [{"name": "read_file", "required": ["path"]}, ...],
//        "steers": {"<turn index>": "message"}, "safety_cap": 200}
//
// Codex runs as `codex app-server` (the CLI's JSON-RPC mode over stdio, the one that lets a client
// register tools under their own names: `codex exec` only offers Codex's built-in tools, and MCP tools
// are offered under a server-prefixed name, which the sequences' calls would not match). CODEX_HOME
// and HOME are the run's directory; CODEX_HOME/config.toml (written here) selects a custom model
// provider on the server with `wire_api = "responses"` and Codex's default retry settings (no
// `request_max_retries` / `stream_max_retries`: the port models the defaults, 4 and 5), approval_policy never, a read-only sandbox. The driver then: initialize (experimentalApi, needed for
// dynamic tools), thread/start (ephemeral, cwd = the run's directory, one dynamic function tool per
// tool name of the sequence, its JSON schema requiring the keys in `required`), turn/start with the
// prompt, and answers every `item/tool/call` request with "<ok_marker> <name>" (success true),
// touching nothing. A turn's `steer` is sent with turn/steer as soon as the server has answered that
// turn (polled on /_stopbench/state); if Codex has already completed the turn, the steer starts a new turn
// (turn/start), which reaches the model as the same new user message; if the turn failed, the run ends there.
//
// Codex has no step cap: after `safety_cap` + 1 requests the driver kills it (reason "capped").
// RESULT: {"ok", "reason": "turn_complete" | "stream_error" | "error" | "capped", "final", "error"}:
// the reasons of predicates/codex.py, from turn/completed (status completed -> turn_complete;
// failed -> stream_error when Codex retried the stream first (an `error` notification with
// willRetry), else error).

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [specPath, resultPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf-8"));
const marker = spec.ok_marker ?? "STOPBENCH-OK";
const work = process.cwd();
const codexHome = join(work, ".codex");
mkdirSync(codexHome, { recursive: true });
writeFileSync(join(codexHome, "config.toml"), `model = "${spec.model ?? "stopbench"}"
model_provider = "stopbench"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.stopbench]
name = "stopbench"
base_url = ${JSON.stringify(spec.base_url)}
env_key = "STOPBENCH_API_KEY"
wire_api = "responses"
`);

const env = { PATH: process.env.PATH, HOME: work, CODEX_HOME: codexHome, LANG: process.env.LANG ?? "C.UTF-8",
              STOPBENCH_API_KEY: "sk-stopbench", NO_PROXY: "127.0.0.1,localhost", RUST_LOG: "warn" };
const bin = join(spec.loop, "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl",
                 "bin", "codex");
const child = spawn(bin, ["app-server"], { cwd: work, env, stdio: ["pipe", "pipe", "pipe"] });
const admin = spec.base_url.replace(/\/v1\/?$/, "") + "/_stopbench/state";
const cap = spec.safety_cap ?? 200;
const steers = Object.entries(spec.steers ?? {}).map(([i, text]) => [Number(i), text]).sort((a, b) => a[0] - b[0]);

let nextId = 1;
const pending = new Map();
const log = [];
let stderr = "";
let threadId = null;
let turnId = null;
let turnActive = false;
let lastError = null;
let retried = false;  // an error notification with willRetry: Codex's stream retry loop ran
let finished = null;  // resolve(turn) when the last turn completes and no steer is left
let completed = null;

function send(msg) { child.stdin.write(JSON.stringify(msg) + "\n"); log.push({ out: msg }); }
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const done = new Promise((resolve) => { finished = resolve; });

function onMessage(msg) {
  log.push({ in: msg });
  if (msg.id !== undefined && msg.method === undefined) {  // a response to one of ours
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (p) (msg.error ? p.reject(new Error(JSON.stringify(msg.error))) : p.resolve(msg.result));
    return;
  }
  if (msg.id !== undefined) {  // a request from Codex
    if (msg.method === "item/tool/call") {
      send({ id: msg.id, result: { contentItems: [{ type: "inputText", text: `${marker} ${msg.params.tool}` }],
                                   success: true } });
    } else if (/requestApproval$|^execCommandApproval$|^applyPatchApproval$/.test(msg.method)) {
      send({ id: msg.id, result: { decision: "decline" } });
    } else {
      send({ id: msg.id, error: { code: -32601, message: `stopbench driver does not answer ${msg.method}` } });
    }
    return;
  }
  if (msg.method === "turn/started") { turnId = msg.params.turn.id; turnActive = true; }
  if (msg.method === "error") { lastError = msg.params; if (msg.params.willRetry) retried = true; }
  if (msg.method === "turn/completed") {
    turnActive = false;
    completed = msg.params.turn;
    settle(completed);
  }
}

let buffer = "";
child.stdout.on("data", (chunk) => {
  buffer += chunk.toString("utf-8");
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (!line) continue;
    try { onMessage(JSON.parse(line)); } catch (exc) { log.push({ bad: line, error: String(exc) }); }
  }
});
child.stderr.on("data", (chunk) => { stderr += chunk.toString("utf-8"); });
const exited = new Promise((resolve) => child.on("close", (c, sig) => resolve(c ?? sig)));

// a turn completed: a steer whose turn the server has answered starts a new turn; otherwise the run is over.
// A turn that failed is Codex's own stop (e.g. "Incomplete response returned, reason: steered"): the run ends
// with it and a steer still undelivered is dropped, since a new turn would be the driver's decision, not
// Codex's (responses-incomplete-steered: driven so, the new turn read as a remind where Codex had stopped)
async function settle(turn) {
  let state = null;
  if (turn?.status !== "failed") {
    try { state = await (await fetch(admin)).json(); } catch { /* the server is gone: the run is over */ }
  }
  if (state && steers.length && state.answered > steers[0][0]) {
    const [, text] = steers.shift();
    await request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] }).catch(() => {});
    return;
  }
  finished(turn);
}

let capped = false;
const poll = setInterval(async () => {
  let state;
  try { state = await (await fetch(admin)).json(); } catch { return; }
  if (state.requests > cap && !capped) { capped = true; finished(null); return; }
  while (steers.length && state.answered > steers[0][0]) {
    const [, text] = steers.shift();
    const input = [{ type: "text", text, text_elements: [] }];
    if (!turnActive) { steers.unshift([-1, text]); break; }  // settle() starts a new turn with it
    try {
      await request("turn/steer", { threadId, expectedTurnId: turnId, input });
    } catch {
      steers.unshift([-1, text]);  // the turn ended meanwhile: settle() takes it
      break;
    }
  }
}, 100);

const result = { ok: null, reason: null, final: null, error: null };
try {
  await request("initialize", { clientInfo: { name: "stopbench", title: "stopbench", version: "0" },
                                capabilities: { experimentalApi: true } });
  send({ method: "initialized" });
  const tools = (spec.tools ?? []).map((t) => ({
    type: "function", name: t.name, description: `stopbench stub for ${t.name}`,
    inputSchema: { type: "object", properties: Object.fromEntries(t.required.map((k) => [k, {}])),
                   required: t.required, additionalProperties: true },
  }));
  const started = await request("thread/start", { cwd: work, approvalPolicy: "never", sandbox: "read-only",
                                                  ephemeral: true, dynamicTools: tools });
  threadId = started.thread.id;
  await request("turn/start", { threadId, input: [{ type: "text", text: spec.prompt ?? "stopbench", text_elements: [] }] });
  const timeout = new Promise((resolve) => setTimeout(() => resolve("timeout"), (spec.timeout ?? 110) * 1000));
  const turn = await Promise.race([done, timeout]);
  if (capped) Object.assign(result, { reason: "capped" });
  else if (turn === "timeout") Object.assign(result, { ok: null, reason: "driver_failed", error: "no turn/completed in time" });
  else if (turn.status === "completed") {
    const texts = (turn.items ?? []).filter((i) => i.type === "agentMessage").map((i) => i.text);
    Object.assign(result, { ok: true, reason: "turn_complete", final: texts.at(-1) ?? null });
  } else {
    const err = turn.error ?? lastError?.error ?? {};
    const info = JSON.stringify(err.codexErrorInfo ?? null);
    Object.assign(result, { ok: false, reason: retried ? "stream_error" : "error",
                            error: `${turn.status}: ${err.message ?? ""} ${info}`.trim() });
  }
} catch (exc) {
  Object.assign(result, { ok: null, reason: "driver_failed", error: String(exc?.stack ?? exc) });
}
clearInterval(poll);
child.kill("SIGTERM");
await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
writeFileSync(join(work, "jsonrpc.jsonl"), log.map((e) => JSON.stringify(e)).join("\n"));
writeFileSync(join(work, "stderr.txt"), stderr);
writeFileSync(resultPath, JSON.stringify(result));
process.exit(0);
