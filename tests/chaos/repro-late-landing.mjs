#!/usr/bin/env node
// Minimal reproductions (found by the chaos suite) of writes that land *after* fencepost told the
// caller they had not: a request the client gave up on (abort, per-attempt timeout) can still reach
// the server and land. fencepost's contract for cancellation, timeouts and ambiguous writes: a call
// that may have written resolves by read-back *where it can*, else fails with AmbiguousWriteError —
// a bare abort reason or a plain StorageError means nothing landed.
//
//   node tests/chaos/repro-late-landing.mjs     (FENCEPOST_SEAWEED_* from .run/servers.env)
//
// The proxy holds the chosen PUT and forwards it 0.3 s after the client's 2 s timeout ("hung:late").
import * as lib from "fencepost";
import { s3Options, serverSettings } from "../../js/support/servers.js";
import { startFaultProxy } from "../../js/support/fault-proxy.js";

const env = serverSettings();
const TIMEOUT = 2;
const proxy = await startFaultProxy({ upstream: env.FENCEPOST_SEAWEED_ENDPOINT, seed: 1, timeout: TIMEOUT });
const prefix = `repro-late-${Date.now().toString(36)}`;
const store = (endpoint, extra = {}) => lib.s3Store({ ...s3Options(env, "seaweed"), endpoint, prefix, ...extra });
const db = new lib.Fencepost(store(proxy.url, { timeout: TIMEOUT }), { retry: { maxAttempts: 3, baseDelay: 0.02, maxDelay: 0.05 } });
const direct = new lib.Fencepost(store(env.FENCEPOST_SEAWEED_ENDPOINT));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function outcome(fn, abortAfterMs) {
  const ac = new AbortController();
  const reason = new Error("the caller's abort");
  if (abortAfterMs !== undefined) setTimeout(() => ac.abort(reason), abortAfterMs);
  try {
    return { how: `resolved ${JSON.stringify(await fn(ac.signal))}` };
  } catch (e) {
    if (e === reason) return { how: "rejected with the bare abort reason", definite: true };
    if (e instanceof lib.AmbiguousWriteError) return { how: "AmbiguousWriteError" };
    return { how: `${e.name} (${e.code}${e.status ? `, ${e.status}` : ""})`, definite: e.code === "STORAGE_ERROR" };
  }
}

let passed = 0;
let failed = 0;
async function scenario(name, faults, run, landed) {
  proxy.forceNext(...faults);
  const r = await run();
  await sleep((TIMEOUT + 1) * 1000); // let the held PUT land
  const did = await landed();
  const ok = !(r.definite && did);
  ok ? passed++ : failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${name}\n    ${r.how}; the write ${did ? "LANDED" : "did not land"}`);
}

await direct.doc("counter-a").update((v) => v + 1, { create: 0 });
await scenario("doc.update aborted 0.3 s into its in-flight CAS PUT", ["pass", "hung:late"],
  () => outcome((signal) => db.doc("counter-a").update((v) => v + 1, { signal }), 300),
  async () => (await direct.doc("counter-a").get()).value === 2);

await scenario("claim aborted 0.3 s into its in-flight put-if-absent", ["hung:late"],
  () => outcome((signal) => db.claim("claim-a", { by: "the aborted caller" }, { signal }), 300),
  async () => (await direct.doc("claim-a").get()) !== null);

await direct.doc("counter-b").update((v) => v + 1, { create: 0 });
await scenario("doc.update: CAS PUT times out (lands late), the retries get 429 until the budget ends",
  ["pass", "hung:late", "pass", "status429", "status429"],
  () => outcome(() => db.doc("counter-b").update((v) => v + 1)),
  async () => (await direct.doc("counter-b").get()).value === 2);

await proxy.close();
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
