// Where one operation's instructions go, function by function, wasm functions by name:
//
//   bash benches/profile.sh --build-only       (a copy of the package whose wasm keeps its names)
//   node benches/instructions-by-function.mjs SCENARIO [PKG_DIR]   (default: .run/prof-pkg/fencepost)
//
// Counted as `instructions.mjs` counts (callgrind, `node --predictable`, the difference between N
// and 2N operations after the same warm-up, over N), but per function, self (exclusive) cost and
// inclusive cost side by side. Callgrind sees V8's compiled wasm as unnamed code; a wasm function
// is entered through its slot in the module's jump table (x64: 64-byte lines of 12 five-byte
// slots, at the start of the module's code space), so callgrind files each function's cost under
// its slot's address, which gives the function's index, and the wasm's name section its name.
// Env: BENCH_INSN_N (1000), BENCH_INSN_WARMUP (3000), BENCH_INSN_TOP (40). Needs valgrind.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { NODE_FLAGS, entryPath } from "./package-entry.mjs";

const [scenario = "claimWon", dir = ".run/prof-pkg/fencepost"] = process.argv.slice(2);
const N = Number(process.env.BENCH_INSN_N ?? 1000);
const WARMUP = Number(process.env.BENCH_INSN_WARMUP ?? 3000);
const TOP = Number(process.env.BENCH_INSN_TOP ?? 40);
const counter = fileURLToPath(new URL("./instructions.mjs", import.meta.url));

const entry = entryPath(dir);
const wasmPath = resolve(entry, "..", "fencepost_bg.wasm");

/** Defined function index → name, from the wasm's name section (indices count imports first). */
function functionNames() {
  const bytes = readFileSync(wasmPath);
  const module = new WebAssembly.Module(bytes);
  const imported = WebAssembly.Module.imports(module).filter((i) => i.kind === "function").length;
  const section = WebAssembly.Module.customSections(module, "name")[0];
  if (!section) throw new Error(`${wasmPath} has no name section: build one with benches/profile.sh`);
  const b = new Uint8Array(section);
  let p = 0;
  const leb = () => {
    let r = 0, shift = 0, x;
    do { x = b[p++]; r |= (x & 0x7f) << shift; shift += 7; } while (x & 0x80);
    return r >>> 0;
  };
  const names = new Map();
  const text = new TextDecoder();
  while (p < b.length) {
    const id = b[p++], end = leb() + p;
    if (id === 1) {
      for (let n = leb(); n > 0; n--) {
        const index = leb(), length = leb();
        // Crate hashes (`[0123456789abcdef]`) only lengthen the names.
        names.set(index - imported, text.decode(b.subarray(p, p + length)).replace(/\[[0-9a-f]{16}\]/g, ""));
        p += length;
      }
    }
    p = end;
  }
  return names;
}

/** Cost per function (self or inclusive) of a run of `count` operations. */
function run(count, work) {
  const out = join(work, `cg.${count}`);
  const r = spawnSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, "--smc-check=all-non-file",
    process.execPath, ...NODE_FLAGS, counter, "--child", pathToFileURL(entry).href, scenario, String(WARMUP + count)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`callgrind failed:\n${r.stderr.slice(-2000)}`);
  const costs = (inclusive) => {
    const a = spawnSync("callgrind_annotate", ["--threshold=100", `--inclusive=${inclusive ? "yes" : "no"}`, out], { encoding: "utf8", maxBuffer: 1 << 28 });
    const rows = new Map();
    for (const line of a.stdout.split("\n")) {
      const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line);
      if (m && /\S/.test(m[2])) rows.set(m[2].trim(), Number(m[1].replaceAll(",", "")));
    }
    return rows;
  };
  return { self: costs(false), inclusive: costs(true) };
}

/** Rows renamed: wasm jump-table slots by function name, other unnamed code as one row. */
function named(rows, names) {
  const addresses = [...rows.keys()].map((k) => /^\?\?\?:0x([0-9a-f]+)/.exec(k)).filter(Boolean).map((m) => BigInt(`0x${m[1]}`));
  // The code space's jump table starts on the page of the lowest address V8's code lives at.
  const high = addresses.filter((a) => a > 0x100000000000n);
  const table = high.length ? high.reduce((x, y) => (y < x ? y : x)) / 4096n * 4096n : 0n;
  const out = new Map();
  for (const [k, v] of rows) {
    const m = /^\?\?\?:0x([0-9a-f]+)/.exec(k);
    let name = k;
    if (m) {
      const offset = Number(BigInt(`0x${m[1]}`) - table);
      const inLine = offset % 64;
      name = offset >= 0 && offset < 1 << 20 && inLine < 60 && inLine % 5 === 0
        ? `wasm ${names.get(Math.floor(offset / 64) * 12 + inLine / 5) ?? "?"}` : "JIT code (JS)";
    }
    out.set(name, (out.get(name) ?? 0) + v);
  }
  return out;
}

const names = functionNames();
const work = mkdtempSync(join(tmpdir(), "insn-"));
try {
  const [a, b] = [run(N, work), run(2 * N, work)];
  const per = (kind) => {
    const x = named(a[kind], names), y = named(b[kind], names);
    return new Map([...y].map(([k, v]) => [k, (v - (x.get(k) ?? 0)) / N]));
  };
  const self = per("self"), inclusive = per("inclusive");
  const total = self.get("PROGRAM TOTALS") ?? 0;
  const wasm = [...self].filter(([k]) => k.startsWith("wasm ")).reduce((s, [, v]) => s + v, 0);
  console.log(`${scenario}: ${Math.round(total)} instructions per operation, ${Math.round(wasm)} of them in wasm (${dir})`);
  // Inclusive costs of wasm functions only (Node's own frames all include everything).
  for (const [title, rows] of [["self", self], ["inclusive (wasm)", inclusive]]) {
    console.log(`\n${title}:`);
    const shown = [...rows].filter(([k]) => k !== "PROGRAM TOTALS" && (rows === self || k.startsWith("wasm ")));
    const top = shown.sort((x, y) => y[1] - x[1]).slice(0, TOP);
    for (const [k, v] of top) console.log(`${String(Math.round(v)).padStart(10)}  ${k.slice(0, 140)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
