// Drive Gemini CLI's non-interactive loop (npm @google/gemini-cli@0.61.0, Apache-2.0) against the
// stopbench replay server's Gemini endpoint.
//
//     node gemini_cli_driver.mjs SPEC.json RESULT.json
//     node gemini_cli_driver.mjs --mcp SPEC.json          (the stub tools, as an MCP server on stdio)
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "wire": "gemini", "loop": "<npm prefix>",
//        "prompt": "...", "ok_marker": "STOPBENCH-OK", "tools": [{"name", "required"}], "safety_cap": 200}
//
// The run is `gemini -p PROMPT --output-format stream-json -m gemini-2.5-pro` in the driver's working
// directory (the runner's temporary directory, also HOME), with GEMINI_API_KEY set and
// GOOGLE_GEMINI_BASE_URL (the base URL the pinned release's content generator honours,
// bundle/chunk-JDPZ4CE3.js L311992) pointing at a small proxy of this driver. Configuration written
// to ~/.gemini/settings.json, everything else at its default: usage statistics and auto-update off
// (no network), and one MCP server, `stub`, this script with --mcp, trusted (an untrusted MCP tool
// asks for confirmation, which non-interactive mode denies). A concrete model is named so the
// default `auto` router does not ask the model to classify the prompt (a model request the
// sequence does not script).
//
// Gemini CLI names an MCP tool `mcp_<server>_<tool>` (generateValidName, chunk-JDPZ4CE3.js
// L274891-274903), so a sequence's call of `read_file` would meet the built-in read_file. The stub
// server (lib/stub_tools.mjs, shared with the Claude Code driver) offers `s_<name>` (a tool the server calls `write_file` is dropped from the declarations in
// non-interactive mode, whatever `trust` says: the policy rules of bundle/policies/*.toml name
// `write_file`), and the proxy renames each served functionCall of a stub tool to
// `mcp_stub_s_<name>` in the responses (JSON and SSE) and passes everything else through, a cut
// connection included; requests go to the server unchanged (the server pairs results with calls by
// position, bench/serve/gemini_read.py). Each stub requires the keys the runner lists and answers
// "<ok_marker> <name>".
//
// Gemini CLI has no turn cap by default (model.maxSessionTurns -1): when the server has answered
// more than `safety_cap` requests the driver kills it and reports "capped". RESULT: {"ok", "reason":
// "no_tool_calls" | "invalid_stream" | "loop_detected" | "api_error" | "capped", "final", "error"}:
// the reasons of predicates/gemini_cli.py, read from the stream-json events and the exit status.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { answered, mcpStubServer, renamingProxy } from "./lib/stub_tools.mjs";

const PREFIX = "mcp_stub_s_";  // server `stub`, tool `s_<name>`

if (process.argv[2] === "--mcp") {
  mcpStubServer(JSON.parse(readFileSync(process.argv[3], "utf-8")),
                { toolName: (name) => `s_${name}`, unknownName: (name) => name.slice(2) });
} else {
  await drive(process.argv[2], process.argv[3]);
}

// ------------------------------------------------------------------ the proxy's renaming

function rename(obj, names) {
  for (const cand of obj?.candidates ?? []) {
    for (const part of cand?.content?.parts ?? []) {
      const fc = part?.functionCall;
      if (fc && names.has(fc.name)) fc.name = PREFIX + fc.name;
    }
  }
  return obj;
}

// ------------------------------------------------------------------ the run

async function drive(specPath, resultPath) {
  const spec = JSON.parse(readFileSync(specPath, "utf-8"));
  const work = process.cwd();
  const home = process.env.HOME ?? work;
  const root = spec.base_url.replace(/\/v1\/?$/, "");
  const names = new Set((spec.tools ?? []).map((t) => t.name));
  const server = renamingProxy(root, { response: (o) => rename(o, names), eol: "\r\n" });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const proxyUrl = `http://127.0.0.1:${server.address().port}`;

  const settings = {
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    security: { auth: { selectedType: "gemini-api-key" } },
    mcpServers: { stub: { command: process.execPath, args: [fileURLToPath(import.meta.url), "--mcp", specPath],
                          trust: true } },
  };
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
  const env = {
    PATH: process.env.PATH, HOME: home, LANG: process.env.LANG ?? "C.UTF-8", NO_PROXY: "127.0.0.1,localhost",
    GEMINI_API_KEY: "stopbench", GOOGLE_GEMINI_BASE_URL: proxyUrl, GEMINI_CLI_NO_RELAUNCH: "true",
    NO_COLOR: "1", CI: "1", GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
  const bin = join(spec.loop, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js");
  const argv = [bin, "-p", spec.prompt ?? "stopbench conformance run", "--output-format", "stream-json",
                "-m", "gemini-2.5-pro"];
  const child = spawn(process.execPath, argv, { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
  const cap = spec.safety_cap ?? 200;
  let capped = false;
  const poll = setInterval(async () => {
    if (!capped && (await answered(root)) > cap) { capped = true; child.kill("SIGTERM"); }
  }, 300);
  const events = [];
  let out = "";
  let stderr = "";
  child.stdout.on("data", (c) => { out += c.toString("utf-8"); });
  child.stderr.on("data", (c) => { stderr += c.toString("utf-8"); });
  const code = await new Promise((resolve) => child.on("close", (c, sig) => resolve(c ?? sig)));
  clearInterval(poll);
  server.close();
  for (const line of out.split("\n")) {
    try { events.push(JSON.parse(line)); } catch { /* plain text */ }
  }
  writeFileSync(join(work, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
  writeFileSync(join(work, "stderr.txt"), stderr);

  const result = { ok: null, reason: null, final: null, error: null };
  const final = events.filter((e) => e.type === "result").at(-1);
  const errors = events.filter((e) => e.type === "error");
  const texts = events.filter((e) => e.type === "message" && e.role === "assistant").map((e) => e.content ?? "");
  const loop = errors.some((e) => /Loop detected/.test(e.message ?? ""));
  if (capped) result.reason = "capped";
  else if (final?.status === "success") {
    Object.assign(result, { ok: true, reason: loop ? "loop_detected" : "no_tool_calls", final: texts.join("") });
  } else if (final?.status === "error" && code === 0) {
    Object.assign(result, { ok: false, reason: "invalid_stream", error: errors.at(-1)?.message ?? null });
  } else {
    const tail = stderr.trim().split("\n").slice(-3).join(" | ");
    Object.assign(result, { ok: false, reason: "api_error", error: `gemini exited ${code}: ${tail}` });
  }
  writeFileSync(resultPath, JSON.stringify(result));
}
