// The stub tools and the renaming proxy that the Claude Code and Gemini CLI drivers share.
//
// Both loops can only call a sequence's tools as MCP tools, and both name an MCP tool with a prefix
// (Claude Code `mcp__<server>__<tool>`, Gemini CLI `mcp_<server>_<tool>`), so each driver runs:
//   * `mcpStubServer`: this machine's stub MCP server on stdio (the driver re-runs itself with --mcp),
//     offering each sequence tool and answering "<ok_marker> <name>";
//   * `renamingProxy`: a small HTTP proxy between the loop and the replay server that renames the
//     served tool calls to the loop's MCP names in the responses (JSON and SSE `data:` lines) and,
//     where the driver asks, renames them back in the requests, so the server sees the names it
//     served; everything else passes through, a cut connection included;
//   * `answered`: how many requests the replay server has answered (the drivers' safety cap).
// What differs per loop is passed in: the tool names the stub offers, whether a call missing a
// required key is an error result, how a response and a request are rewritten, and the line ends of
// the rewritten SSE events.

import http from "node:http";
import { createInterface } from "node:readline";

// The stub tools as an MCP server on stdio. `toolName(name)` is the name offered for a sequence tool
// (the loop adds its own MCP prefix); `checkRequired`: a call missing a required key gets an error
// result "missing <keys>" instead of the ok marker; `unknownName(name)`: the name the result gives a
// call of a tool the stub does not offer.
export function mcpStubServer(spec, { toolName = (name) => name, checkRequired = false, unknownName = (name) => name } = {}) {
  const marker = spec.ok_marker ?? "STOPBENCH-OK";
  const specs = spec.tools ?? [];
  const tools = specs.map((t) => ({
    name: toolName(t.name), description: `stopbench stub for ${t.name}`,
    inputSchema: { type: "object", properties: Object.fromEntries(t.required.map((k) => [k, { description: k }])),
                   required: t.required },
  }));
  const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  createInterface({ input: process.stdin }).on("line", (line) => {
    let msg;
    try { msg = JSON.parse(line); } catch { return; }
    if (msg.id === undefined) return; // a notification
    const reply = (result) => send({ id: msg.id, result });
    switch (msg.method) {
      case "initialize":
        return reply({ protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
                       capabilities: { tools: {} }, serverInfo: { name: "stopbench-stub", version: "1" } });
      case "tools/list": return reply({ tools });
      case "tools/call": {
        const index = tools.findIndex((t) => t.name === msg.params?.name);
        const tool = specs[index];
        if (checkRequired) {
          const args = msg.params?.arguments ?? {};
          const missing = (tool?.required ?? []).filter((k) => !(k in args));
          if (!tool || missing.length) {
            return reply({ isError: true, content: [{ type: "text", text: `missing ${missing.join(", ")}` }] });
          }
        }
        const name = tool?.name ?? unknownName(String(msg.params?.name));
        return reply({ content: [{ type: "text", text: `${marker} ${name}` }] });
      }
      case "ping": return reply({});
      default: return send({ id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
    }
  });
}

function rewrite(text, fn) {
  try { return JSON.stringify(fn(JSON.parse(text))); } catch { return text; }
}

// An HTTP proxy to `upstream` that passes every request and response through, with the JSON bodies of
// responses (and each SSE `data:` line) rewritten by `response(obj)`; `request(obj)`, when given,
// rewrites the JSON request body (content-length recomputed), else the request goes unchanged.
// `eol`: the line end of the rewritten SSE events.
export function renamingProxy(upstream, { response, request = null, eol = "\n" }) {
  return http.createServer((req, res) => {
    const body = [];
    req.on("data", (c) => body.push(c));
    req.on("end", () => {
      const headers = { ...req.headers };
      delete headers.host;
      let sent = Buffer.concat(body);
      if (request !== null) {
        delete headers["content-length"];
        const raw = sent.toString("utf-8");
        sent = Buffer.from(raw ? rewrite(raw, request) : raw, "utf-8");
        headers["content-length"] = String(sent.length);
      }
      const up = http.request(upstream + req.url, { method: req.method, headers },
        (ur) => {
          const type = ur.headers["content-type"] ?? "";
          const headers = { ...ur.headers };
          delete headers["content-length"];
          res.writeHead(ur.statusCode ?? 502, headers);
          let buf = "";
          ur.setEncoding("utf-8");
          if (type.includes("event-stream")) {
            ur.on("data", (chunk) => {
              buf += chunk;
              let m;
              while ((m = /\r?\n\r?\n/.exec(buf))) {
                const event = buf.slice(0, m.index);
                buf = buf.slice(m.index + m[0].length);
                const out = event.split(/\r?\n/).map((l) => l.startsWith("data: ") ? "data: " + rewrite(l.slice(6), response) : l);
                res.write(out.join(eol) + eol + eol);
              }
            });
            ur.on("end", () => { if (buf) res.write(buf); res.end(); });
          } else {
            ur.on("data", (chunk) => { buf += chunk; });
            ur.on("end", () => res.end(rewrite(buf, response)));
          }
          ur.on("aborted", () => { if (buf && !type.includes("event-stream")) res.write(buf); res.destroy(); });
          ur.on("error", () => res.destroy());
        });
      up.on("error", () => res.destroy());
      up.end(sent);
    });
  });
}

// How many requests the replay server at `root` has answered (0 when it cannot be asked).
export async function answered(root) {
  try {
    const r = await fetch(`${root}/_stopbench/state`);
    return (await r.json()).answered ?? 0;
  } catch { return 0; }
}
