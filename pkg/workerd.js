// Cloudflare Workers entry: wrangler/workerd import a .wasm file as a compiled WebAssembly.Module
// (no fetch, no eval), which is instantiated synchronously.
import wasmModule from "./fencepost_bg.wasm";
import { initSync } from "./runtime.js";

initSync(wasmModule);

export * from "./index.js";
