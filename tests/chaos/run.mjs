#!/usr/bin/env node
// The seeded chaos suite: fencepost through a fault-injecting proxy in front of SeaweedFS, random
// concurrent histories (claims, a counter doc, fenced leases with cooperative writes), invariants
// checked on the final state read directly from SeaweedFS.
//
//   node tests/chaos/run.mjs             (needs FENCEPOST_SEAWEED_* from scripts/servers/start.sh)
//
// Environment: CHAOS_SEEDS (default 1,2,3), CHAOS_CALLS (top-level calls per history, default 120),
// CHAOS_FAULTS (scales every fault rate, default 1), CHAOS_TIMEOUT (s3Store `timeout`, seconds per
// attempt, default 2). Output per seed: calls, faults by kind, rejections by code, violations; one
// test per seed × invariant family; last line "N passed, M failed".

import * as lib from "fencepost";
import { s3Options, serverSettings } from "../../js/support/servers.js";
import { startFaultProxy } from "../../js/support/fault-proxy.js";
import { Ledger, claimHistory, counterHistory, leaseHistory } from "./histories.js";

const env = process.env;
const servers = serverSettings();
const seeds = (env.CHAOS_SEEDS ?? "1,2,3").split(",").map((s) => s.trim()).filter(Boolean).map(Number);
const CALLS = Number(env.CHAOS_CALLS ?? 120);
const SCALE = Number(env.CHAOS_FAULTS ?? 1);
const TIMEOUT = Number(env.CHAOS_TIMEOUT ?? 2);
const ABORTS = Number(env.CHAOS_ABORTS ?? 0.15);
const RETRY = { maxAttempts: 6, baseDelay: 0.02, maxDelay: 0.25 };
const INSTANCES = 4;
const RATES = {
  lostResponse: 0.05, landed500: 0.02, status5xx: 0.04, status409: 0.02, status429: 0.02,
  reset: 0.03, slow: 0.05, hung: 0.015,
};

let passed = 0;
let failed = 0;
const report = (ok, name, lines = []) => {
  ok ? passed++ : failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${name}`);
  for (const l of lines) console.log(`    ${l}`);
};
const fmt = (o) => Object.entries(o).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join(", ") || "none";

if (!servers.FENCEPOST_SEAWEED_ENDPOINT) {
  console.log("# no SeaweedFS configured (FENCEPOST_SEAWEED_* or .run/servers.env): run scripts/servers/start.sh");
  console.log("0 passed, 1 failed");
  process.exit(1);
}

const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const storeAt = (endpoint, prefix, extra = {}) => lib.s3Store({ ...s3Options(servers, "seaweed"), endpoint, prefix, ...extra });

const t00 = Date.now();
const timeout = TIMEOUT;
console.log(`# chaos: seeds ${seeds.join(",")}, ${CALLS} calls per history, fault scale ${SCALE}, retry ${JSON.stringify(RETRY)}`);
console.log(`# s3Store timeout ${TIMEOUT} s per attempt: hung requests must be cut by it`);

for (const seed of seeds) {
  const t0 = Date.now();
  const rates = Object.fromEntries(Object.entries(RATES).map(([k, p]) => [k, p * SCALE]));
  const proxy = await startFaultProxy({ upstream: servers.FENCEPOST_SEAWEED_ENDPOINT, seed, rates, timeout, hungMax: timeout + 4 });
  const prefix = `chaos-${runId}/seed-${seed}`;
  const dbs = Array.from({ length: INSTANCES }, () => new lib.Fencepost(storeAt(proxy.url, prefix, { timeout }), { retry: RETRY }));
  const direct = new lib.Fencepost(storeAt(servers.FENCEPOST_SEAWEED_ENDPOINT, prefix));
  const families = ["claims", "counter", "lease-epochs", "lease-fencing", "lease-writes", "errors", "timeouts"];
  const ledger = new Ledger(families);
  const ctx = { seed, dbs, direct, ledger, calls: CALLS, abortRate: ABORTS };
  let summary = {};
  let crash = null;
  try {
    const [claims, counter, leases] = await Promise.all([
      claimHistory(ctx),
      counterHistory(ctx),
      leaseHistory({ ...ctx, deadline: Date.now() + 40_000 }),
    ]);
    summary = { claims, counter, leases };
  } catch (e) {
    crash = e;
  }
  await proxy.close();
  const slack = timeout + 1.5;
  const late = proxy.stats.hungCut.filter((s) => s > slack);
  if (proxy.stats.hungNotCut) ledger.violate("timeouts", `${proxy.stats.hungNotCut} hung requests were never cut by the client's ${timeout} s timeout`);
  if (late.length) ledger.violate("timeouts", `${late.length} hung requests cut only after ${late.map((s) => s.toFixed(1)).join(", ")} s (timeout ${timeout} s)`);
  const totalCalls = Object.values(ledger.calls).reduce((a, b) => a + b, 0);
  const { counts, stats } = proxy;
  const faults = Object.fromEntries(Object.entries(counts).filter(([k]) => k !== "pass"));
  const nFaults = Object.values(faults).reduce((a, b) => a + b, 0);
  console.log(`# seed ${seed} (${((Date.now() - t0) / 1000).toFixed(1)} s, prefix ${prefix})`);
  console.log(`#   calls: ${totalCalls} (${fmt(ledger.calls)})`);
  console.log(`#   requests: ${stats.requests} (${fmt(stats.byMethod)}); faults injected: ${nFaults} (${fmt(faults)})`);
  console.log(`#   rejected by code: ${fmt(ledger.rejected)}`);
  if (summary.claims) {
    const { counter: c, leases: l } = summary;
    console.log(`#   counter ${c.stored}: ${c.acked} acknowledged, ${c.uncertain} ambiguous, failed definitely: ${fmt(c.definite)}`);
    console.log(`#   leases: ${l.acquired} acquisitions, ${l.held} found held, ${l.released} released, ${l.abandoned} abandoned, ` +
      `${l.lost} lost, ${l.stalls} stalls, ${l.withLease} in withLease, ${l.ackedWrites} acked updateState (${l.definiteWrites} writes failed definitely), ` +
      `${l.ackedCoop} acked cooperativeWrite, ` +
      `keepAlive used ${l.keepAlive}×`);
    const a = ledger.aborts;
    console.log(`#   aborts fired: ${a.fired} (settled within ${Math.max(0, ...a.settleAfter).toFixed(2)} s; ${a.ambiguous} AmbiguousWriteError)`);
    const cut = stats.hungCut;
    console.log(`#   hung requests: ${cut.length} cut by the client` + (cut.length ? ` after ${Math.min(...cut).toFixed(1)}–${Math.max(...cut).toFixed(1)} s` : "") +
      `, ${stats.hungNotCut} not cut`);
  }
  if (crash) report(false, `seed ${seed} / harness`, [`crashed: ${crash?.stack ?? crash}`]);
  for (const f of families) {
    const vs = ledger.violations[f];
    report(!crash && vs.length === 0, `seed ${seed} / ${f}`, vs.slice(0, 20).concat(vs.length > 20 ? [`… ${vs.length - 20} more`] : []));
  }
}
console.log(`# total ${((Date.now() - t00) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
