// What the instruction-count scripts share: the module `import("fencepost")` loads in Node from the
// package in a directory (its manifest's `exports["."]`, conditions resolved as Node resolves them,
// or `main`; they run other builds of the package than the installed one), and the flags of the
// Node they count in.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The entry file's path. @param {string} dir */
export function entryPath(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let entry = manifest.exports?.["."] ?? manifest.main;
  while (entry && typeof entry === "object") entry = entry.node ?? entry.import ?? entry.default;
  return resolve(dir, entry);
}

// V8's predictable mode: no background threads, a garbage-collection schedule that does not
// follow the clock, a fixed hash seed. Without it the same run's count moved by 5 % (when a
// concurrent compile or a timed collection lands differs from run to run); with it, by 0.02 %.
// And the wasm compiled by the optimizing compiler from the start (`--no-liftoff`): V8 otherwise
// runs each wasm function through its baseline compiler first and moves it up when it is hot,
// and which functions had moved up when the two counts were taken differed between runs, so
// the same build's figure moved by up to a factor of two (a lost claim 134,000 to 157,000, a
// doc.update 155,000 to 323,000). Without the baseline tier, a lost claim's wasm instructions
// were the same to the instruction in two runs. A steady loop's hot code is optimized code in
// real use too; `BENCH_INSN_NODE_FLAGS` replaces these flags (e.g. "--predictable" alone).
export const NODE_FLAGS = process.env.BENCH_INSN_NODE_FLAGS?.split(" ").filter(Boolean) ?? ["--predictable", "--no-liftoff"];
