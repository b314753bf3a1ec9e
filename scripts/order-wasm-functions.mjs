// Orders the wasm's functions so that gzip compresses them better, by renaming them in the name
// section: `wasm-opt --reorder-functions-by-name` then lays them out in that order (binaryen
// renumbers every call and table entry; nothing outside the wasm sees a function's index).
//
// Why: gzip finds repeats only within the last 32 KB it has read, and a Rust wasm is full of
// near-copies (one monomorphized function per type, one state machine per `async fn`) that the
// compiler emits far apart. Placed next to each other they compress against each other: on the
// package's wasm this is about 2.3 % of its gzipped size for no change in the code. Ordering by
// name, by size or by call count was measured too, and each was larger than the compiler's own
// order (docs/benchmarks.md).
//
// How: greedy. Start from the largest function (or the START-th largest); then repeatedly place next the function whose
// distinct 4-byte sequences are most often found among those of the last 32 KB placed (gzip's
// window, or another span given), each sequence weighted down by the number of functions it
// occurs in (sequences in every function, such as common instruction pairs, say little). Deterministic for a given wasm.
// No library does this for wasm; it is ~100 lines of plain code over the binary format.
//
// usage: node scripts/order-wasm-functions.mjs IN.wasm OUT.wasm [WINDOW [START]]   (IN with a name section,
// e.g. from `wasm-opt -g`; OUT is IN with its name section replaced by one naming each function by
// its place; WINDOW, the bytes of placed code compared with, 32768 by default; START, which
// function goes first: 0 the largest, 1 the next largest… Run `wasm-opt
// --reorder-functions-by-name --strip-debug` on OUT.) A heuristic's result moves by several hundred
// bytes with any change to the code and with where it starts, so scripts/build-pkg.sh tries
// several windows and starts and keeps the smallest.
import { readFileSync, writeFileSync } from "node:fs";

const SHINGLE = 4; // bytes per sequence compared
const WINDOW = Number(process.argv[4] ?? 32 * 1024); // gzip's (deflate's) window by default
const START = Number(process.argv[5] ?? 0); // the START-th largest function is placed first
const COMMON = 1000; // sequences found in more functions than this are ignored (too common to help)

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node scripts/order-wasm-functions.mjs IN.wasm OUT.wasm [WINDOW]");
  process.exit(2);
}
const { imported, bodies, sections } = readModule(readFileSync(input));
const order = greedyOrder(bodies);
writeFileSync(output, Buffer.concat([...sections, nameSection(imported, order)]));

/** The count of imported functions, each defined function's body, and every section but `name`. */
function readModule(/** @type {Buffer} */ wasm) {
  let at = 8;
  const leb = () => {
    let value = 0, shift = 0, byte;
    do {
      byte = wasm[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  // Function indices count the imported functions first (V8 reads the import section for us).
  const imported = WebAssembly.Module.imports(new WebAssembly.Module(wasm)).filter((i) => i.kind === "function").length;
  /** @type {Buffer[]} */
  const bodies = [];
  const sections = [wasm.subarray(0, 8)];
  while (at < wasm.length) {
    const start = at;
    const id = wasm[at++];
    const end = leb() + at;
    if (id === 0) {
      const nameLength = leb();
      if (wasm.toString("utf8", at, at + nameLength) === "name") {
        at = end;
        continue;
      }
    } else if (id === 10) {
      for (let i = leb(); i > 0; i--) {
        const size = leb();
        bodies.push(wasm.subarray(at, at + size));
        at += size;
      }
    }
    sections.push(wasm.subarray(start, end));
    at = end;
  }
  if (!bodies.length) throw new Error(`${input}: no code section`);
  return { imported, bodies, sections };
}

/** The defined functions' indices (0 = the first body) in the order to lay them out. */
function greedyOrder(/** @type {Buffer[]} */ bodies) {
  const count = bodies.length;
  const shingles = bodies.map((body) => {
    const seen = new Set();
    for (let i = 0; i + SHINGLE <= body.length; i++) seen.add(body.readInt32LE(i));
    return [...seen];
  });
  /** @type {Map<number, number[]>} sequence → the functions it occurs in */
  const holders = new Map();
  shingles.forEach((list, f) => {
    for (const s of list) {
      const fs = holders.get(s);
      if (fs) fs.push(f);
      else holders.set(s, [f]);
    }
  });
  // score[f]: the weighted count of f's sequences now in the window, kept as the window moves.
  const score = new Float64Array(count);
  /** @type {Map<number, number>} sequence → its occurrences in the window (by function) */
  const inWindow = new Map();
  const credit = (/** @type {number} */ s, /** @type {number} */ sign) => {
    const fs = /** @type {number[]} */ (holders.get(s));
    if (fs.length > COMMON) return;
    const weight = sign / Math.log2(1 + fs.length);
    for (const f of fs) score[f] += weight;
  };
  const placed = new Uint8Array(count);
  const order = [];
  const window = [];
  let windowBytes = 0;
  let next = 0;
  next = [...bodies.keys()].sort((a, b) => bodies[b].length - bodies[a].length || a - b)[Math.min(START, count - 1)];
  while (order.length < count) {
    placed[next] = 1;
    order.push(next);
    for (const s of shingles[next]) {
      const n = inWindow.get(s) ?? 0;
      inWindow.set(s, n + 1);
      if (n === 0) credit(s, 1);
    }
    window.push(next);
    windowBytes += bodies[next].length;
    while (windowBytes - bodies[window[0]].length > WINDOW) {
      const out = /** @type {number} */ (window.shift());
      windowBytes -= bodies[out].length;
      for (const s of shingles[out]) {
        const n = /** @type {number} */ (inWindow.get(s));
        if (n > 1) inWindow.set(s, n - 1);
        else inWindow.delete(s), credit(s, -1);
      }
    }
    let best = -1;
    let bestShare = -1;
    for (let f = 0; f < count; f++) {
      if (placed[f]) continue;
      const share = score[f] / (shingles[f].length + 1);
      if (share > bestShare) (bestShare = share), (best = f);
    }
    next = best;
  }
  return order;
}

/** A name section naming imported function i `i` and the defined function placed n-th `f<n>`,
 * zero-padded so that names sort as places do. */
function nameSection(/** @type {number} */ imported, /** @type {number[]} */ order) {
  const leb = (/** @type {number} */ n) => {
    const bytes = [];
    do {
      const low = n % 128;
      n = Math.floor(n / 128);
      bytes.push(n ? low | 0x80 : low);
    } while (n);
    return Buffer.from(bytes);
  };
  const text = (/** @type {string} */ s) => Buffer.concat([leb(Buffer.byteLength(s)), Buffer.from(s)]);
  const names = new Array(imported + order.length);
  for (let i = 0; i < imported; i++) names[i] = `i${i}`;
  const width = String(order.length).length;
  order.forEach((f, place) => (names[imported + f] = `f${String(place).padStart(width, "0")}`));
  const entries = names.map((name, index) => Buffer.concat([leb(index), text(name)]));
  const functionNames = Buffer.concat([leb(names.length), ...entries]);
  const payload = Buffer.concat([text("name"), Buffer.from([1]), leb(functionNames.length), functionNames]);
  return Buffer.concat([Buffer.from([0]), leb(payload.length), payload]);
}
