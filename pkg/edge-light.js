// Vercel Edge Functions entry (the "edge-light" condition; Next.js's edge runtime too): their
// bundlers import `.wasm?module` as a compiled WebAssembly.Module (no fetch, no eval), which is
// instantiated synchronously, as in Workers.
import wasmModule from "./fencepost_bg.wasm?module";
import { initSync } from "./runtime.js";

initSync(wasmModule);

export * from "./index.js";
