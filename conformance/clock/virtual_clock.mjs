// A virtual clock for a driven Node loop's retry back-off: a sleep is cut short, and the loop's
// clock (Date.now, new Date(), performance.now, process.hrtime, process.uptime) moves on by the
// whole sleep, so an elapsed-time budget sees what the real run would have seen.
//
//     NODE_OPTIONS="--import /abs/path/conformance/clock/virtual_clock.mjs" node driver.mjs ...
//
// The campaign (bench/conform/clock.py) sets NODE_OPTIONS for every Node driver but the native
// loops' when it runs on the virtual clock; the driver scripts are not edited. A driver that starts
// the loop as another Node process with an environment of its own (Gemini CLI's) passes this
// preload on: a child started by `child_process.spawn` with this Node executable and an env of its
// own gets this preload added to that env's NODE_OPTIONS.
// Native binaries (OpenCode and Claude Code are Bun executables, Codex is Rust) would ignore it.
//
// What counts as a sleep: a timer of SLEEP_MS or more whose callback only settles a promise --
// a promise's own resolve function (`new Promise((r) => setTimeout(r, ms))`, the OpenAI and
// Anthropic SDKs), or an arrow function whose body ends by calling a `resolve...()` with no
// argument (Gemini CLI's `delay`, the AI SDK's `delay`) -- and every `timers/promises` setTimeout.
// Any other timer (a request timeout, a keep-alive, a poll) runs on real time, so nothing the
// loop waits for with a deadline is cut. Virtual sleeps wake in deadline order, each after GRACE_MS
// of real time and only when no other virtual sleep is due earlier; waking one sets the clock to
// its deadline (never back), so two sleeps side by side advance it by the longer, as in real time.

import childProcess from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const SLEEP_MS = 1000;
const GRACE_MS = 10;
const require = createRequire(import.meta.url);
const timers = require("node:timers");
const timersPromises = require("node:timers/promises");

const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const RealDate = globalThis.Date;
const realDateNow = RealDate.now;
const realPerfNow = performance.now.bind(performance);
const realHrtime = process.hrtime;
const realHrtimeBigint = process.hrtime.bigint;

let offsetMs = 0; // how far the virtual clock is ahead of the real one

const virtualNow = () => realPerfNow() + offsetMs;

// ---------------------------------------------------------------- the clock the loop reads

function VirtualDate(...args) {
  if (!new.target) return new RealDate(realDateNow() + offsetMs).toString();
  return Reflect.construct(RealDate, args.length ? args : [realDateNow() + offsetMs], new.target);
}
Object.setPrototypeOf(VirtualDate, RealDate);
VirtualDate.prototype = RealDate.prototype;
VirtualDate.now = () => realDateNow() + offsetMs;
globalThis.Date = VirtualDate;

performance.now = () => realPerfNow() + offsetMs;
const offsetNs = () => BigInt(Math.round(offsetMs * 1e6));
function hrtime(previous) {
  const ns = realHrtimeBigint() + offsetNs();
  const now = [Number(ns / 1000000000n), Number(ns % 1000000000n)];
  if (!previous) return now;
  let [s, n] = [now[0] - previous[0], now[1] - previous[1]];
  if (n < 0) { s -= 1; n += 1e9; }
  return [s, n];
}
hrtime.bigint = () => realHrtimeBigint() + offsetNs();
process.hrtime = hrtime;
const realUptime = process.uptime;
process.uptime = () => realUptime() + offsetMs / 1000;

// ---------------------------------------------------------------- sleeps

const pending = new Set(); // virtual sleeps not yet woken: {deadline, handle, wake}

function earliest() {
  let first = null;
  for (const entry of pending) if (first === null || entry.deadline < first.deadline) first = entry;
  return first;
}

function schedule(ms, wake) {
  const entry = { deadline: virtualNow() + ms, handle: null, wake };
  const tick = () => {
    if (!pending.has(entry)) return;
    if (earliest() !== entry) { entry.handle.refresh(); return; } // one due earlier wakes first
    pending.delete(entry);
    byHandle.delete(entry.handle);
    offsetMs = Math.max(offsetMs, entry.deadline - realPerfNow());
    entry.wake();
  };
  entry.handle = realSetTimeout(tick, GRACE_MS);
  pending.add(entry);
  byHandle.set(entry.handle, entry);
  return entry.handle;
}

const byHandle = new Map();
const SETTLES = /^(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>\s*\{?[^]*?\b[\w$]*resolve[\w$]*\(\s*\)\s*;?\s*\}?\s*$/;

/** Whether a timer's callback only settles a promise (see the header). */
function isSleep(callback, ms) {
  if (typeof callback !== "function" || !(Number(ms) >= SLEEP_MS)) return false;
  const text = Function.prototype.toString.call(callback);
  return text.endsWith("{ [native code] }") ? callback.name === "" : text.length < 400 && SETTLES.test(text);
}

function setTimeoutVirtual(callback, ms, ...args) {
  if (!isSleep(callback, ms)) return realSetTimeout(callback, ms, ...args);
  return schedule(Number(ms), () => callback(...args));
}
function clearTimeoutVirtual(handle) {
  const entry = byHandle.get(handle);
  if (entry !== undefined) { pending.delete(entry); byHandle.delete(handle); }
  return realClearTimeout(handle);
}
globalThis.setTimeout = setTimeoutVirtual;
globalThis.clearTimeout = clearTimeoutVirtual;
timers.setTimeout = setTimeoutVirtual;
timers.clearTimeout = clearTimeoutVirtual;

const realSleep = timersPromises.setTimeout;
timersPromises.setTimeout = function sleep(ms, value, options) {
  if (!(Number(ms) >= SLEEP_MS)) return realSleep(ms, value, options);
  const signal = options?.signal;
  if (signal?.aborted) return realSleep(0, value, options); // rejects as the real one does
  return new Promise((resolve, reject) => {
    const handle = schedule(Number(ms), () => { signal?.removeEventListener("abort", onAbort); resolve(value); });
    if (options?.ref === false) handle.unref();
    function onAbort() { clearTimeoutVirtual(handle); reject(signal.reason); }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
};
syncBuiltinESMExports();

// ---------------------------------------------------------------- passed on to Node children

const SELF = `--import ${fileURLToPath(import.meta.url)}`;
function withPreload(command, options) {
  if (command !== process.execPath || !options?.env || (options.env.NODE_OPTIONS ?? "").includes(SELF)) {
    return options;
  }
  const before = options.env.NODE_OPTIONS ? `${options.env.NODE_OPTIONS} ` : "";
  return { ...options, env: { ...options.env, NODE_OPTIONS: before + SELF } };
}
const realSpawn = childProcess.spawn;
childProcess.spawn = function spawn(command, args, options) {
  if (!Array.isArray(args)) return realSpawn.call(this, command, withPreload(command, args));
  return realSpawn.call(this, command, args, withPreload(command, options));
};
syncBuiltinESMExports();
