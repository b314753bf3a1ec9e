// Rollup: resolve "fencepost" from node_modules (its `default` export condition is the browser
// entry), and put `fencepost_bg.wasm` next to the bundle, where the entry's
// `new URL("./fencepost_bg.wasm", import.meta.url)` looks for it. Rollup itself does not emit files
// referenced by `new URL`, so a five-line plugin does (a copy step in the build script works as well).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { nodeResolve } from "@rollup/plugin-node-resolve";

const fencepostWasm = {
  name: "fencepost-wasm",
  generateBundle() {
    const file = fileURLToPath(import.meta.resolve("fencepost/fencepost_bg.wasm"));
    this.emitFile({ type: "asset", fileName: "fencepost_bg.wasm", source: readFileSync(file) });
  },
};

export default {
  input: "app/main.js",
  output: { dir: "dist/rollup", format: "es" },
  plugins: [nodeResolve(), fencepostWasm],
};
