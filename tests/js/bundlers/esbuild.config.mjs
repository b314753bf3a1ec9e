// esbuild, two ways. esbuild leaves `new URL("./fencepost_bg.wasm", import.meta.url)` alone, and in
// an ES module bundle that is relative to the bundle, so either
//  - `copy`: bundle, then copy fencepost's `.wasm` next to the bundle; or
//  - `initWasm`: import "fencepost/fencepost_bg.wasm" with the `file` loader (its URL) and pass it to
//    `initWasm()` before the first call (app/main-initwasm.js).
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const copy = {
  options: { entryPoints: ["app/main.js"], bundle: true, format: "esm", minify: true, outdir: "dist/esbuild" },
  after(outdir) {
    copyFileSync(fileURLToPath(import.meta.resolve("fencepost/fencepost_bg.wasm")), join(outdir, "fencepost_bg.wasm"));
  },
};

export const initWasm = {
  options: {
    entryPoints: { main: "app/main-initwasm.js" }, bundle: true, format: "esm", minify: true,
    outdir: "dist/esbuild-initwasm", loader: { ".wasm": "file" },
  },
};
