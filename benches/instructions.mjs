// Instructions per operation on the memory store, counted by valgrind's callgrind (`npm run
// bench:instructions`): a CPU figure that does not move with the machine's load. Time per call on
// a shared 2-core machine varies by 20–50 % from one run to the next, which hides any regression
// smaller than that; an instruction count repeats to within 0.1 %, so two builds of the package
// can be compared call for call ("no per-call CPU regression").
//
//   node benches/instructions.mjs [PKG_DIR ...]     (default: node_modules/fencepost, the installed package)
//
// Each scenario of benches/scenarios.mjs runs in a fresh Node under callgrind twice, after the same
// setup and WARMUP operations: once for N more operations, once for 2N. The figure is the
// difference over N, so Node's start, the package's import, the warm-up and the optimizing
// compiler's work (done within the warm-up) cancel out; what remains is the steady cost of one
// call: the JS layer, the boundary and the core, and the garbage collection they cause.
// Env: BENCH_INSN_N (2000), BENCH_INSN_WARMUP (3000), BENCH_INSN_ONLY (comma list of scenario ids).
// Needs valgrind (Debian's package); about 20 s per scenario and package.
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

import { NODE_FLAGS, entryPath } from "./package-entry.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const self = fileURLToPath(import.meta.url);

// The child: set up, run `count` operations of one scenario, exit.
if (process.argv[2] === "--child") {
  const [entry, id, count] = process.argv.slice(3);
  const lib = await import(entry);
  const sc = SCENARIOS.find((s) => s.id === id);
  if (!sc) throw new Error(`no scenario ${id}`);
  const db = new lib.Fencepost(lib.memoryStore());
  const ctx = await sc.setup(db);
  let last;
  for (let i = 0; i < Number(count); i++) last = await sc.op(db, ctx, i);
  if (!sc.check(last)) throw new Error(`${id}: unexpected result ${JSON.stringify(last)}`);
  process.exit(0);
}

const N = Number(process.env.BENCH_INSN_N ?? 2000);
const WARMUP = Number(process.env.BENCH_INSN_WARMUP ?? 3000);
const only = process.env.BENCH_INSN_ONLY?.split(",");

try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  console.error("bench:instructions needs valgrind (apt-get install valgrind)");
  process.exit(1);
}



/** Instructions callgrind counts for a child running `count` operations. */
function instructions(/** @type {string} */ entry, /** @type {string} */ id, /** @type {number} */ count) {
  const run = spawnSync("valgrind", ["--tool=callgrind", "--callgrind-out-file=/dev/null", "--smc-check=all-non-file",
    process.execPath, ...NODE_FLAGS, self, "--child", entry, id, String(count)], { encoding: "utf8" });
  const collected = /Collected\s*:\s*(\d+)/.exec(run.stderr);
  if (run.status !== 0 || !collected) throw new Error(`${id} under callgrind failed:\n${run.stderr.slice(-2000)}`);
  return Number(collected[1]);
}

const dirs = process.argv.slice(2).length ? process.argv.slice(2) : ["node_modules/fencepost"];
const scenarios = SCENARIOS.filter((s) => !only || only.includes(s.id));
console.log(`instructions per operation (callgrind; (count at ${WARMUP}+${2 * N} − count at ${WARMUP}+${N}) / ${N}; node ${process.version})`);
const header = ["", ...dirs];
const rows = [];
for (const sc of scenarios) {
  const row = [sc.name];
  for (const dir of dirs) {
    const entry = pathToFileURL(entryPath(dir)).href;
    const once = instructions(entry, sc.id, WARMUP + N);
    const twice = instructions(entry, sc.id, WARMUP + 2 * N);
    row.push(String(Math.round((twice - once) / N)));
  }
  rows.push(row);
  console.log(row.join("\t"));
}
const widths = header.map((_, c) => Math.max(...[header, ...rows].map((r) => r[c].length)));
console.log();
for (const r of [header, ...rows]) console.log(r.map((cell, c) => (c ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join("  "));
