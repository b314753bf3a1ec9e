// `npm run bench:memory [calls]`: the binding's memory, measured as a long-running Node server and
// a Worker see it. 1,000,000 mixed calls (benches/memory/workload.js: a new doc handle per
// update, lease + release, withLease, a new Fencepost + claim, a dropped unreleased lease, a
// countingStore per request + claim) on the memory store, with no forced garbage collection,
// printing the wasm memory (what the instance's memory has grown to: it never shrinks) and the
// process's RSS every 100,000 calls: first in this Node process, then in workerd (Miniflare,
// 20,000 calls per request).
import { wasmBytes } from "./memory/capture.js";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { workload, KINDS } from "./memory/workload.js";
import { bundleWorker } from "../js/support/workerd-bundle.js";

const calls = Number(process.argv[2] ?? 1_000_000);
/** `node benches/memory.mjs [calls] [node|workerd]`: one runtime only. */
const only = process.argv[3];
const EVERY = 100_000;
const PER_REQUEST = 20_000;
const here = dirname(fileURLToPath(import.meta.url));
const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1).padStart(7);

/** The resident set of a process, in bytes (Linux). @param {number} pid */
function rss(pid) {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/\d+/)?.[0] ?? 0) * 1024;
}

/** The workerd processes this one started (Miniflare's children), for their RSS. */
function workerdPids() {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && stat.includes("(workerd")) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const header = (/** @type {string} */ where) => {
  console.log(`\n${where}: ${calls.toLocaleString("en")} calls in rotation: ${KINDS.join(", ")}`);
  console.log("      calls   wasm MB    RSS MB");
};
const row = (/** @type {number} */ done, /** @type {number} */ wasm, /** @type {number} */ resident) =>
  console.log(`${done.toLocaleString("en").padStart(11)}  ${mb(wasm)}   ${mb(resident)}`);

async function node() {
  const lib = await import("fencepost");
  const step = workload(lib, lib.memoryStore());
  header("Node " + process.version);
  for (let i = 0; i < calls; i++) {
    await step(i);
    if ((i + 1) % EVERY === 0) {
      row(i + 1, wasmBytes(), process.memoryUsage().rss);
    }
  }
  return wasmBytes();
}

async function workerd() {
  // Offline: no metrics, no cf-object fetch.
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  process.env.MINIFLARE_CF_FETCH_ENABLED ??= "false";
  const { Miniflare, Log, LogLevel } = await import("miniflare");
  const built = await bundleWorker(resolve(here, "memory/worker.js"), resolve(here, ".."));
  const mf = new Miniflare({
    host: "127.0.0.1",
    modules: built.modules,
    modulesRoot: resolve(here, "memory"),
    compatibilityDate: "2026-04-01",
    log: new Log(LogLevel.WARN),
  });
  header("workerd (Miniflare)");
  try {
    await mf.ready;
    let wasm = 0;
    for (let from = 0; from < calls; from += PER_REQUEST) {
      const res = await mf.dispatchFetch(`http://127.0.0.1/run?from=${from}&n=${PER_REQUEST}`);
      ({ wasm } = /** @type {{wasm: number}} */ (await res.json()));
      const done = from + PER_REQUEST;
      if (done % EVERY === 0) row(done, wasm, workerdPids().reduce((sum, pid) => sum + rss(pid), 0));
    }
    return wasm;
  } finally {
    await mf.dispose();
  }
}

const inNode = only === "workerd" ? NaN : await node();
const inWorkerd = only === "node" ? NaN : await workerd();
console.log(`\nwasm memory at the end: Node ${mb(inNode).trim()} MB, workerd ${mb(inWorkerd).trim()} MB (budget 16 MB)`);
