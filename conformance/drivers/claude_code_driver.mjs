// Drive Claude Code's headless loop (npm @anthropic-ai/claude-code@2.1.328, its native binary from the
// platform package @anthropic-ai/claude-code-linux-x64) against the stopbench replay server's Anthropic
// Messages endpoint.
//
//     node claude_code_driver.mjs SPEC.json RESULT.json
//     node claude_code_driver.mjs --mcp SPEC.json          (the stub tools, as an MCP server on stdio)
//
// SPEC: {"base_url": "http://127.0.0.1:PORT/v1", "wire": "anthropic", "loop": "<npm prefix>",
//        "prompt": "...", "ok_marker": "STOPBENCH-OK", "tools": [{"name", "required"}], "safety_cap": 200}
//
// The run is `claude -p PROMPT --output-format stream-json --verbose --mcp-config <stub>
// --strict-mcp-config --allowedTools mcp__stub` in the driver's working directory (the runner's
// temporary directory, also HOME), with ANTHROPIC_BASE_URL pointing at a small proxy of this driver,
// a dummy ANTHROPIC_API_KEY, and the non-essential traffic (auto-update, telemetry, error reports)
// off, so every request the server sees is one model turn (tests/importers/fixtures/claude_code/HOW.md).
// Nothing else is set: --max-turns, the model and the retry count stay at their defaults (the port
// is of the defaults, predicates/claude_code.py). npm's postinstall, which links the binary as
// bin/claude.exe, is not needed: the platform package's `claude` is run directly.
//
// Claude Code names an MCP tool `mcp__<server>__<tool>`; the sequences call `read_file`, `bash`, ...,
// which would meet (or miss) its built-in tools. The stub server `stub` (lib/stub_tools.mjs, shared with
// the Gemini CLI driver) offers each sequence tool under its own name; the proxy (same module) renames each served tool_use block of a stub tool to
// `mcp__stub__<name>` in the responses (JSON and SSE `content_block_start`), and renames it back in
// the requests' assistant messages, so the server sees the names it served; everything else passes
// through, a cut connection included. `--allowedTools mcp__stub` allows the stub tools without a
// permission prompt (which -p mode would deny). Each stub requires the keys the runner lists and
// answers "<ok_marker> <name>".
//
// When the server has answered more than `safety_cap` requests the driver kills the run and reports
// "capped". RESULT: {"ok", "reason", "final", "error"}: the reason is the stream-json result line's
// subtype, or "api_error" when it says is_error with terminal_reason api_error (a run that ended
// on an API error reports subtype success with is_error true: claude-code-notes), or "no_result"
// when the process wrote no result line.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { answered, mcpStubServer, renamingProxy } from "./lib/stub_tools.mjs";

const PREFIX = "mcp__stub__";

if (process.argv[2] === "--mcp") {
  mcpStubServer(JSON.parse(readFileSync(process.argv[3], "utf-8")), { checkRequired: true });
} else {
  await drive(process.argv[2], process.argv[3]);
}

// ------------------------------------------------------------------ the proxy's renaming

function renameResponse(obj, names) {
  const blocks = [...(obj?.content ?? []), obj?.content_block].filter(Boolean);
  for (const b of blocks) if (b.type === "tool_use" && names.has(b.name)) b.name = PREFIX + b.name;
  return obj;
}

function renameRequest(obj) {
  for (const m of obj?.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b?.type === "tool_use" && typeof b.name === "string" && b.name.startsWith(PREFIX)) {
        b.name = b.name.slice(PREFIX.length);
      }
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
  const server = renamingProxy(root, { response: (o) => renameResponse(o, names), request: renameRequest });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const proxyUrl = `http://127.0.0.1:${server.address().port}`;

  const project = join(work, "project");
  mkdirSync(project, { recursive: true });
  const mcp = { mcpServers: { stub: { type: "stdio", command: process.execPath,
                                        args: [fileURLToPath(import.meta.url), "--mcp", specPath] } } };
  const mcpPath = join(work, "mcp.json");
  writeFileSync(mcpPath, JSON.stringify(mcp));
  const env = {
    PATH: process.env.PATH, HOME: home, LANG: process.env.LANG ?? "C.UTF-8", NO_PROXY: "127.0.0.1,localhost",
    ANTHROPIC_BASE_URL: proxyUrl, ANTHROPIC_API_KEY: "sk-ant-stopbench",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  const bin = join(spec.loop, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude");
  const argv = ["-p", spec.prompt ?? "stopbench conformance run", "--output-format", "stream-json", "--verbose",
                "--mcp-config", mcpPath, "--strict-mcp-config", "--allowedTools", "mcp__stub"];
  const child = spawn(bin, argv, { cwd: project, env, stdio: ["ignore", "pipe", "pipe"], detached: false });
  const cap = spec.safety_cap ?? 200;
  let capped = false;
  const poll = setInterval(async () => {
    if (!capped && (await answered(root)) > cap) { capped = true; child.kill("SIGTERM"); }
  }, 300);
  let out = "";
  let stderr = "";
  child.stdout.on("data", (c) => { out += c.toString("utf-8"); });
  child.stderr.on("data", (c) => { stderr += c.toString("utf-8"); });
  const code = await new Promise((resolve) => child.on("close", (c, sig) => resolve(c ?? sig)));
  clearInterval(poll);
  server.close();
  const events = [];
  for (const line of out.split("\n")) {
    try { events.push(JSON.parse(line)); } catch { /* plain text */ }
  }
  writeFileSync(join(work, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n"));
  writeFileSync(join(work, "stderr.txt"), stderr);

  const result = { ok: null, reason: null, final: null, error: null };
  const final = events.filter((e) => e.type === "result").at(-1);
  if (capped) result.reason = "capped";
  else if (!final) {
    const tail = stderr.trim().split("\n").slice(-3).join(" | ");
    Object.assign(result, { ok: false, reason: "no_result", error: `claude exited ${code}: ${tail}` });
  } else if (final.is_error && final.terminal_reason === "api_error") {
    Object.assign(result, { ok: false, reason: "api_error", error: String(final.result ?? "") });
  } else {
    Object.assign(result, { ok: !final.is_error, reason: final.subtype ?? null,
                            final: typeof final.result === "string" ? final.result : null,
                            error: final.is_error ? `${final.terminal_reason ?? ""} ${final.result ?? ""}`.trim() : null });
  }
  writeFileSync(resultPath, JSON.stringify(result));
}
