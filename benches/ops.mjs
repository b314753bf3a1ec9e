// Benchmarks: latency and requests per operation, printed as figures (not asserted).
//   node benches/ops.mjs              memory store, plus SeaweedFS when it runs (FENCEPOST_SEAWEED_*,
//                                     or .run/servers.env written by scripts/servers/start.sh)
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { s3Factories, serverSettings } from "../js/support/servers.js";

const t0 = performance.now();
const lib = await import("fencepost");
const loadMs = performance.now() - t0;
const wasmBytes = readFileSync(new URL("../node_modules/fencepost/dist/fencepost_bg.wasm", import.meta.url)).length;
const compileStart = performance.now();
await WebAssembly.compile(readFileSync(new URL("../node_modules/fencepost/dist/fencepost_bg.wasm", import.meta.url)));
const compileMs = performance.now() - compileStart;

const stores = { memory: () => lib.memoryStore(), ...s3Factories(lib, serverSettings(), "bench", ["SEAWEED"]) };

const N = Number(process.env.BENCH_N ?? 200);

async function measure(label, store, setup, op, n) {
  const counted = lib.countingStore(store);
  const db = new lib.Fencepost(counted);
  const ctx = await setup(db);
  counted.resetRequestCounts();
  const started = performance.now();
  for (let i = 0; i < n; i++) await op(db, ctx, i);
  const ms = performance.now() - started;
  const c = counted.requestCounts();
  return { label, n, usPerOp: (ms * 1000) / n, opsPerSec: (n * 1000) / ms, reqPerOp: c.total / n };
}

const scenarios = [
  ["claim (won)", async () => ({}), (db, _, i) => db.claim(`bench/claim/${i}`, { i })],
  ["claim (lost)", async (db) => db.claim("bench/taken", 1), (db) => db.claim("bench/taken", 2)],
  ["lease acquire + release", async () => ({}), async (db, _, i) => (await db.lease(`bench/lease/${i}`, { ttl: 30 })).release()],
  ["lease held (refused)", async (db) => db.lease("bench/held", { ttl: 3600 }), (db) => db.lease("bench/held", { ttl: 30 })],
  ["lease.renew", async (db) => db.lease("bench/renew", { ttl: 30 }), (_, l) => l.renew()],
  ["lease.updateState", async (db) => db.lease("bench/upd", { ttl: 30, stateFn: () => 0 }), (_, l) => l.updateState((s) => s + 1)],
  ["cooperativeWrite", async (db) => db.lease("bench/coop", { ttl: 30, stateFn: () => 0 }), (db) => db.cooperativeWrite("bench/coop", (s) => s + 1)],
  ["attachLease", async (db) => db.lease("bench/att", { ttl: 3600, holder: "h" }), (db) => db.attachLease("bench/att", { holder: "h", ttl: 30 })],
  ["doc.update (counter)", async (db) => db.doc("bench/doc"), (_, d) => d.update((v) => v + 1, { create: 0 })],
  ["doc.get", async (db) => { const d = db.doc("bench/get"); await d.update(() => ({ a: [1, 2, 3] }), { create: {} }); return d; }, (_, d) => d.get()],
];

console.log(`fencepost benchmarks — node ${process.version}, ${N} ops per row (BENCH_N)`);
console.log(`wasm: ${wasmBytes} bytes; module import + instantiate ${loadMs.toFixed(1)} ms; WebAssembly.compile alone ${compileMs.toFixed(1)} ms`);
for (const [name, make] of Object.entries(stores)) {
  const n = name === "memory" ? N * 10 : N;
  console.log(`\n${name} store (${n} sequential ops per row)`);
  console.log("  operation                   µs/op     ops/s   requests/op");
  for (const [label, setup, op] of scenarios) {
    const r = await measure(label, make(), setup, op, n);
    console.log(`  ${label.padEnd(24)} ${r.usPerOp.toFixed(1).padStart(9)} ${r.opsPerSec.toFixed(0).padStart(9)} ${r.reqPerOp.toFixed(2).padStart(9)}`);
  }
}
const mem = process.memoryUsage();
console.log(`\nprocess memory after the run: rss ${(mem.rss / 2 ** 20).toFixed(1)} MiB, external ${(mem.external / 2 ** 20).toFixed(1)} MiB (wasm memory included)`);
