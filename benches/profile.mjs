// Where the microseconds go: V8 CPU profile (the sampler behind `node --cpu-prof`) of one operation in
// a steady-state loop, with the top self-time functions split into wasm / glue / JS layer / Node.
//
//   node benches/profile.mjs [memory|s3|aws4fetch|baseline] [scenario id]     (default: memory claimWon)
//   node benches/profile.mjs summarize FILE.cpuprofile                       (e.g. from node --cpu-prof)
//
// Scenario ids: see benches/scenarios.mjs (claimWon, claimLost, leaseCycle, leaseHeld, docUpdate, docGet).
// The profiler starts after a warm-up (so wasm has tiered up) and covers PROFILE_N ops (default
// 20000 memory, 3000 s3); the profile is written to .run/prof/<store>-<scenario>.cpuprofile (open it
// in Chrome DevTools → Performance). The installed wasm has no name section: benches/profile.sh
// builds a copy with names (same code) and points FENCEPOST_PKG_DIR at it. PROFILE_POOLED_RANDOM=1:
// see poolRandom() (the sampler inflates native getRandomValues calls).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { aws4fetchCoord } from "./aws4fetch-impl.mjs";
import { InstantS3 } from "./instant-s3.mjs";
import { mapCoord } from "./map-baseline.mjs";
import { INSTANT_S3_SETTINGS, SCENARIOS } from "./scenarios.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const TOP = Number(process.env.PROFILE_TOP ?? 25);

if (process.argv[2] === "summarize") {
  const path = process.argv[3];
  if (!path) throw new Error("usage: node benches/profile.mjs summarize FILE.cpuprofile");
  summarize(JSON.parse(readFileSync(path, "utf8")), path);
} else {
  await profileOne(process.argv[2] ?? "memory", process.argv[3] ?? "claimWon");
}

async function profileOne(/** @type {string} */ store, /** @type {string} */ id) {
  const sc = SCENARIOS.find((s) => s.id === id);
  if (!sc) throw new Error(`unknown scenario ${id}; one of ${SCENARIOS.map((s) => s.id).join(", ")}`);
  if (process.env.PROFILE_POOLED_RANDOM === "1") poolRandom();
  const dir = process.env.FENCEPOST_PKG_DIR;
  const lib = await import(dir ? pathToFileURL(join(resolve(dir), "dist", "node.js")).href : "fencepost");
  const n = Number(process.env.PROFILE_N ?? (store === "memory" || store === "baseline" ? 20000 : 3000));
  const makers = /** @type {Record<string, () => any>} */ ({
    memory: () => new lib.Fencepost(lib.memoryStore()),
    baseline: mapCoord,
    s3: () => new lib.Fencepost(lib.s3Store(INSTANT_S3_SETTINGS)),
    aws4fetch: () => aws4fetchCoord(INSTANT_S3_SETTINGS),
  });
  if (!makers[store]) throw new Error(`unknown store ${store}; one of ${Object.keys(makers).join(", ")}`);
  if (store === "s3" || store === "aws4fetch") new InstantS3().install();
  const db = makers[store]();
  const ctx = await sc.setup(db);
  let i = 0;
  for (let k = 0; k < Math.min(n, 5000); k++) await sc.op(db, ctx, i++);

  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 50 }); // µs
  await session.post("Profiler.start");
  const c0 = process.cpuUsage();
  for (let k = 0; k < n; k++) await sc.op(db, ctx, i++);
  const c = process.cpuUsage(c0);
  const { profile } = /** @type {any} */ (await session.post("Profiler.stop"));
  session.disconnect();

  mkdirSync(join(root, ".run/prof"), { recursive: true });
  const out = join(root, `.run/prof/${store}-${id}.cpuprofile`);
  writeFileSync(out, JSON.stringify(profile));
  console.log(`${store} store, ${sc.name}: ${n} ops, ${((c.user + c.system) / n).toFixed(1)} µs CPU/op while profiled (the sampler adds overhead)` +
    `${dir ? `; package ${dir}` : ""}${process.env.PROFILE_POOLED_RANDOM === "1" ? "; getRandomValues pooled" : ""}`);
  summarize(profile, out);
}

/**
 * `crypto.getRandomValues` served from a 4 KiB pool refilled by the real one. The signal-based sampler
 * over-attributes time inside that native call (its syscalls are interrupted by the sampling signal):
 * about half of a memory claim in the profile, about 2 µs of 12 when measured by this substitution.
 * With PROFILE_POOLED_RANDOM=1 the rest of the profile becomes readable (and the saving measurable).
 */
function poolRandom() {
  const real = crypto.getRandomValues.bind(crypto);
  const pool = new Uint8Array(4096);
  let at = pool.length;
  crypto.getRandomValues = /** @type {any} */ ((/** @type {Uint8Array} */ out) => {
    if (out.byteLength > pool.length) return real(out);
    if (at + out.byteLength > pool.length) {
      real(pool);
      at = 0;
    }
    out.set(pool.subarray(at, at + out.byteLength));
    at += out.byteLength;
    return out;
  });
}

/** Top self-time functions and per-category totals of a .cpuprofile. */
function summarize(/** @type {any} */ profile, /** @type {string} */ path) {
  /** @type {Map<number, any>} */
  const nodes = new Map(profile.nodes.map((/** @type {any} */ n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const self = new Map();
  const deltas = profile.timeDeltas ?? [];
  for (let k = 0; k < profile.samples.length; k++) {
    // Each sample's time is the delta to the next sample.
    const dt = deltas[k + 1] ?? 0;
    self.set(profile.samples[k], (self.get(profile.samples[k]) ?? 0) + dt);
  }
  /** @type {Map<string, {name: string, where: string, category: string, us: number}>} */
  const byFn = new Map();
  /** @type {Map<string, number>} */
  const byCategory = new Map();
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const category = categorize(functionName, url);
    if (category === "idle") continue;
    total += us;
    const where = url ? `${shortUrl(url)}${lineNumber >= 0 && !url.startsWith("wasm://") ? `:${lineNumber + 1}` : ""}` : "";
    const key = `${functionName}|${where}`;
    const entry = byFn.get(key) ?? { name: functionName || "(anonymous)", where, category, us: 0 };
    entry.us += us;
    byFn.set(key, entry);
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
  }
  // Inclusive time of fencepost's own wasm functions (each counted once per sample, recursion or not).
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** @type {Map<string, number>} */
  const inclusive = new Map();
  /** @type {Map<string, number>} */
  const byFamily = new Map();
  for (const [id, us] of self) {
    const leaf = nodes.get(id).callFrame;
    if (categorize(leaf.functionName, leaf.url) === "wasm") {
      const fam = family(leaf.functionName);
      byFamily.set(fam, (byFamily.get(fam) ?? 0) + us);
    }
    const seen = new Set();
    for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parent.get(at)) {
      const name = nodes.get(at).callFrame.functionName;
      if (!/^<?fencepost::/.test(name) || seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const pct = (/** @type {number} */ us) => `${((us / total) * 100).toFixed(1)}%`.padStart(6);
  console.log(`\nself time by category (${(total / 1000).toFixed(0)} ms sampled, idle excluded):`);
  for (const [cat, us] of [...byCategory].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(us)}  ${cat}`);
  console.log(`\ntop ${TOP} functions by self time:`);
  for (const e of [...byFn.values()].sort((a, b) => b.us - a.us).slice(0, TOP)) {
    const name = e.name.length > 90 ? `${e.name.slice(0, 87)}…` : e.name;
    console.log(`  ${pct(e.us)}  ${e.category.padEnd(12)} ${name}${e.where && !e.where.startsWith("wasm") ? `  (${e.where})` : ""}`);
  }
  if (byFamily.size > 1) {
    console.log("\nwasm self time by crate / module:");
    for (const [fam, us] of [...byFamily].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${pct(us)}  ${fam}`);
  }
  if (inclusive.size) {
    console.log("\nfencepost wasm functions by inclusive time (self + callees, JS callees included):");
    for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
      console.log(`  ${pct(us)}  ${name.length > 100 ? `${name.slice(0, 97)}…` : name}`);
    }
  }
  console.log(`\nprofile: ${path}`);
}

function categorize(/** @type {string} */ name, /** @type {string} */ url) {
  if (name === "(idle)") return "idle";
  if (name === "(garbage collector)") return "GC";
  if (name === "(program)") return "(program)";
  if (url.startsWith("wasm://") || /^\$?func\d+$|^wasm-function/.test(name)) return "wasm";
  if (url.endsWith("/fencepost.js")) return "glue";
  if (/fencepost\/(api|errors|options|runtime|index|node)\.js$|prof-pkg\/.*\.js$/.test(url)) return "JS layer";
  if (url.includes("/benches/")) return "bench";
  if (url.includes("/aws4fetch/")) return "aws4fetch";
  if (url.startsWith("node:internal/deps/undici")) return "undici";
  if (url.startsWith("node:")) return "node";
  if (!url) return "V8 builtin";
  return "other JS";
}

/** `sha2::sha256::compress256::h…` → `sha2`; `fencepost::store::s3::sigv4::…` → `fencepost::store::s3::sigv4`. */
function family(/** @type {string} */ name) {
  if (/^wasm-to-js|^js-to-wasm/.test(name)) return "wasm↔JS call stubs";
  if (/externref/.test(name)) return "externref table (wasm-bindgen)";
  const path = name.replace(/^<+/, "").replace(/\[[0-9a-f]+\]/g, "").split(/[ <>{}]/)[0].split("::").filter((seg) => seg && !/^h[0-9a-f]{16}$/.test(seg));
  if (path[0] === "fencepost") return path.slice(0, Math.min(path.length - 1, 4)).join("::") || "fencepost";
  if (path[0] === "core" || path[0] === "alloc" || path[0] === "std") return path.slice(0, 2).join("::");
  return path[0] ?? name;
}

function shortUrl(/** @type {string} */ url) {
  return url.replace(/^file:\/\/.*?\/(node_modules|benches|\.run)\//, "$1/").replace(/^node:internal\//, "node:");
}
