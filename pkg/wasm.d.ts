// Types of the `fencepost/fencepost_bg.wasm` export: the wasm core as an asset. What importing it
// gives depends on the tool that loads it — its URL (esbuild's `file` loader and other URL/asset
// loaders) or a compiled module (wrangler, workerd) — and either is what `initWasm()` takes:
//
//   import wasm from "fencepost/fencepost_bg.wasm";
//   import { initWasm } from "fencepost";
//   initWasm(wasm);
declare const wasm: string | import("./index.js").WasmModule;
export default wasm;
