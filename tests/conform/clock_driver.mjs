// A driver for tests (run with node): a loop with a retry back-off and an elapsed-time budget.
//
//     node clock_driver.mjs SPEC.json RESULT.json
//
// As a CLI driver does (Gemini CLI's), it starts the loop as another Node process with an
// environment of its own (PATH and HOME only), so a preload must be passed on to reach it. The
// loop posts Chat Completions requests with fetch; on an HTTP error it waits (1 s, then 2 s, 4 s,
// ...) and tries again unless the wait would end past its budget of 6 s since the first request,
// when it gives up (reason "gave_up"). The waits are a bare `setTimeout(resolve, ms)`, an arrow
// that calls `resolve()`, and `timers/promises` setTimeout, by turns; the budget is read from
// Date.now(), performance.now() and process.hrtime.bigint() by turns. RESULT's "seen" lists how
// long each wait lasted by `new Date()`. A sequence calling a tool named `wait<N>` makes it sleep
// N seconds (a bare `setTimeout(resolve, ms)`) before its first request. Tool calls are answered "<ok_marker> <name>" until a
// reply has none.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const BUDGET_MS = 6000;

if (process.argv[2] === "--loop") {
  await loop(process.argv[3], process.argv[4]);
} else {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME };
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--loop", ...process.argv.slice(2)],
                      { env, stdio: "inherit" });
  process.exitCode = await new Promise((resolve) => child.on("close", (code) => resolve(code ?? 1)));
}

function wait(ms, turn) {
  if (turn % 3 === 0) return new Promise((resolve) => setTimeout(resolve, ms));
  if (turn % 3 === 1) return new Promise((resolve) => { setTimeout(() => { resolve(); }, ms); });
  return sleep(ms);
}

async function loop(specPath, resultPath) {
  const spec = JSON.parse(readFileSync(specPath, "utf-8"));
  const clocks = [() => Date.now(), () => performance.now(), () => Number(process.hrtime.bigint() / 1000000n)];
  const started = clocks.map((clock) => clock());
  const messages = [{ role: "user", content: spec.prompt }];
  // offered with every request, as a real loop does
  const tools = spec.tools.map((t) => ({ type: "function", function: { name: t.name, parameters: { type: "object" } } }));
  const result = { ok: true, reason: "done", final: null, error: null, seen: [] };
  let delay = 1000;
  let waits = 0;
  for (const tool of spec.tools) {  // a tool named wait<N>: sleep N seconds before the first request
    if (tool.name.startsWith("wait")) {
      const before = new Date();
      await wait(Number(tool.name.slice(4)) * 1000, 0);
      result.seen.push(Math.round((new Date() - before) / 100) / 10);
    }
  }
  for (let i = 0; i < 20; i += 1) {
    const response = await fetch(`${spec.base_url}/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k" },
      body: JSON.stringify({ model: spec.model, messages, tools }),
    });
    if (!response.ok) {
      await response.text();
      const elapsed = clocks[waits % 3]() - started[waits % 3];
      if (elapsed + delay > BUDGET_MS) {
        Object.assign(result, { ok: false, reason: "gave_up", error: `HTTP ${response.status}` });
        break;
      }
      const before = new Date();
      await wait(delay, waits);
      result.seen.push(Math.round((new Date() - before) / 100) / 10);
      delay *= 2;
      waits += 1;
      continue;
    }
    const reply = (await response.json()).choices[0].message;
    messages.push(reply);
    if (!reply.tool_calls?.length) {
      result.final = reply.content;
      break;
    }
    for (const call of reply.tool_calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: `${spec.ok_marker} ${call.function.name}` });
    }
  }
  writeFileSync(resultPath, JSON.stringify(result));
}
