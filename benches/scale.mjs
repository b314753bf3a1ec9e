// Cost and scale, printed in one run (figures, not timed assertions), except one check: the
// requests each operation makes must not rise above the floor (exit 1 when one does).
//   node benches/scale.mjs        memory store, plus SeaweedFS when it runs (.run/servers.env)
//   SCALE_SECONDS=10 (each throughput run), SCALE_KEYS=10000 (distinct claim keys)
//
// 1. Requests and dollars per million operations, per operation (list prices of 2026-12-01, as in
//    docs/cost.md).
// 2. A hot counter under a 1-write/s/key limit (faultStore.limitWrites, as R2 answers): one doc vs
//    db.counter with 16 shards, 32 concurrent writers; both must end exact.
// 3. doc.update by one writer: reading first every time (the old path, `fresh: true`) against the
//    handle's remembered version (one guarded PUT).
// 4. Claims at concurrency 64 across distinct keys: ops/s, p50/p99 latency.
import { performance } from "node:perf_hooks";
import { s3Factories, serverSettings } from "../js/support/servers.js";

const lib = await import("fencepost");
const { faultStore } = await import("fencepost/testing");
const SECONDS = Number(process.env.SCALE_SECONDS ?? 10);
const KEYS = Number(process.env.SCALE_KEYS ?? 10_000);
const stores = { memory: () => lib.memoryStore(), ...s3Factories(lib, serverSettings(), "scale", ["SEAWEED"]) };
let failures = 0;

// ---- 1. requests and dollars per operation --------------------------------------------------

/** $ per million requests: [write (PUT, LIST), read (GET)]; DELETE free on all five. */
const PRICES = {
  "S3 Standard": [5.0, 0.4],
  "S3 Express One Zone": [1.13, 0.03],
  R2: [4.5, 0.36],
  "GCS Standard": [5.0, 0.4],
  "Azure Hot LRS": [5.5, 0.44],
};

/** Each operation: its setup, the operation, and the floor (requests per op) it must not exceed. */
const OPERATIONS = [
  ["claim won", async () => ({}), (db, _, i) => db.claim(`c/won/${i}`, i), { put: 1 }],
  ["claim lost", async (db) => db.claim("c/taken", 0), (db) => db.claim("c/taken", 1), { put: 1, get: 1 }],
  ["lease acquire (fresh)", async () => ({}), (db, _, i) => db.lease(`l/fresh/${i}`, { ttl: 30 }), { get: 1, put: 1 }],
  ["lease renew", async (db) => db.lease("l/renew", { ttl: 30 }), (_, l) => l.renew(), { put: 1 }],
  ["lease release + re-acquire", async (db) => ({ l: await db.lease("l/cycle", { ttl: 30 }) }),
    async (db, ctx) => { await ctx.l.release(); ctx.l = await db.lease("l/cycle", { ttl: 30 }); }, { put: 2, get: 1 }],
  ["inspect", async (db) => db.claim("i/x", 1), (db) => db.inspect("i/x"), { get: 1 }],
  ["breakLease", async (db) => db.lease("b/x", { ttl: 30 }), (db) => db.breakLease("b/x"), { get: 1, put: 1 }],
  ["doc.update (current handle)", async (db) => { const d = db.doc("d/one"); await d.update(() => 0, { create: 0 }); return d; },
    (_, d) => d.update((n) => n + 1), { put: 1 }],
  ["doc.update (fresh: read first)", async (db) => { const d = db.doc("d/two"); await d.update(() => 0, { create: 0 }); return d; },
    (_, d) => d.update((n) => n + 1, { fresh: true }), { get: 1, put: 1 }],
  ["counter.add (shard known)", async (db) => { const c = db.counter("k/hits", { shards: 1 }); await c.add(); return c; },
    (_, c) => c.add(), { put: 1 }],
  ["counter.value (16 shards)", async (db) => db.counter("k/v"), (_, c) => c.value(), { get: 16 }],
];

async function perOperation(name, makeStore) {
  const n = 50;
  const rows = [];
  for (const [label, setup, op, floor] of OPERATIONS) {
    const counted = lib.countingStore(makeStore());
    const db = new lib.Fencepost(counted);
    const ctx = await setup(db);
    counted.resetRequestCounts();
    for (let i = 0; i < n; i++) await op(db, ctx, i);
    const c = counted.requestCounts();
    const per = { get: c.get / n, put: c.put / n, delete: c.delete / n, list: c.list / n };
    for (const k of Object.keys(per)) {
      if (per[k] > (floor[k] ?? 0) + 1e-9) {
        failures++;
        console.log(`FLOOR EXCEEDED: ${name} ${label}: ${k} ${per[k]} > ${floor[k] ?? 0}`);
      }
    }
    const dollars = Object.values(PRICES).map(([w, r]) => (per.put + per.list) * w + per.get * r);
    rows.push([label, `${per.get}/${per.put}/${per.delete}/${per.list}`, ...dollars.map((d) => `$${d.toFixed(2)}`)]);
  }
  table(`requests (get/put/delete/list) and $ per million operations — ${name}`,
    ["operation", "requests", ...Object.keys(PRICES)], rows);
}

// ---- 2. a hot counter under a 1-write/s/key limit ---------------------------------------------

async function hotCounter(name, makeStore, sharded) {
  const base = makeStore();
  const store = faultStore(base).limitWrites({ perKey: 1 });
  const key = `hot/${sharded ? "sharded" : "single"}/${Math.random().toString(36).slice(2)}`;
  const db = new lib.Fencepost(store);
  const doc = db.doc(key);
  const counter = db.counter(key, { shards: 16 });
  const tally = { acked: 0, ambiguous: 0, throttled: 0, conflicts: 0, other: 0 };
  const deadline = performance.now() + SECONDS * 1000;
  const writer = async () => {
    // Each writer its own handles, as separate workers would have.
    const mine = new lib.Fencepost(store);
    const add = sharded ? ((c) => () => c.add())(mine.counter(key, { shards: 16 }))
      : ((d) => () => d.update((n) => n + 1, { create: 0 }))(mine.doc(key));
    while (performance.now() < deadline) {
      try {
        await add();
        tally.acked++;
      } catch (e) {
        if (e instanceof lib.AmbiguousWriteError) tally.ambiguous++;
        else if (e instanceof lib.StorageError && e.status === 429) tally.throttled++;
        else if (e instanceof lib.ConflictError) tally.conflicts++;
        else { tally.other++; console.log(`  unexpected: ${e}`); }
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, writer));
  store.limitWrites(null);
  const total = sharded ? await counter.value() : ((await doc.get())?.value ?? 0);
  const exact = total >= tally.acked && total <= tally.acked + tally.ambiguous;
  if (!exact || tally.other) failures++;
  return { ...tally, total, exact, perSecond: tally.acked / SECONDS };
}

// ---- 3. doc.update by one writer ---------------------------------------------------------------

async function singleWriter(makeStore, fresh) {
  const counted = lib.countingStore(makeStore());
  const d = new lib.Fencepost(counted).doc(`w/${fresh ? "fresh" : "view"}/${Math.random().toString(36).slice(2)}`);
  await d.update(() => 0, { create: 0 });
  counted.resetRequestCounts();
  const n = 300;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await d.update((v) => v + 1, { fresh });
  const ms = performance.now() - t0;
  return { reqPerOp: counted.requestCounts().total / n, opsPerSec: (n * 1000) / ms };
}

// ---- 4. claims at concurrency 64 across distinct keys -----------------------------------------

async function claims(makeStore) {
  const db = new lib.Fencepost(makeStore());
  const prefix = `claims/${Math.random().toString(36).slice(2)}`;
  const latencies = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < KEYS) {
      const i = next++;
      const s = performance.now();
      await db.claim(`${prefix}/${i}`, i);
      latencies.push(performance.now() - s);
    }
  }));
  const ms = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { opsPerSec: (KEYS * 1000) / ms, p50: at(0.5), p99: at(0.99) };
}

function table(title, head, rows) {
  console.log(`\n${title}`);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => String(c).padEnd(widths[i])).join("  ");
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

for (const [name, makeStore] of Object.entries(stores)) {
  await perOperation(name, makeStore);
  const single = await hotCounter(name, makeStore, false);
  const sharded = await hotCounter(name, makeStore, true);
  table(`hot counter, 32 writers, ${SECONDS} s, limitWrites({perKey: 1}) — ${name}`,
    ["counter", "acked/s", "acked", "ambiguous", "429", "conflict", "final value", "exact"],
    [["one doc", single.perSecond.toFixed(1), single.acked, single.ambiguous, single.throttled, single.conflicts, single.total, single.exact],
      ["counter, 16 shards", sharded.perSecond.toFixed(1), sharded.acked, sharded.ambiguous, sharded.throttled, sharded.conflicts,
        sharded.total, sharded.exact]]);
  const ratio = sharded.perSecond / Math.max(single.perSecond, 1e-9);
  console.log(`sharded / single: ${ratio.toFixed(1)}×`);
  const before = await singleWriter(makeStore, true);
  const after = await singleWriter(makeStore, false);
  table(`doc.update by one writer — ${name}`, ["path", "requests/op", "ops/s"],
    [["read first (fresh: true)", before.reqPerOp.toFixed(2), before.opsPerSec.toFixed(0)],
      ["remembered version", after.reqPerOp.toFixed(2), after.opsPerSec.toFixed(0)]]);
  const c = await claims(makeStore);
  table(`claims, concurrency 64, ${KEYS} distinct keys — ${name}`, ["ops/s", "p50 ms", "p99 ms"],
    [[c.opsPerSec.toFixed(0), c.p50.toFixed(2), c.p99.toFixed(2)]]);
}
if (failures) {
  console.log(`\n${failures} check(s) failed: a request count above the floor, or a counter that did not end exact`);
  process.exit(1);
}
