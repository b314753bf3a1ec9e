// Deno entry: read the wasm next to this file (needs --allow-read) and instantiate it synchronously.
import { initSync } from "./runtime.js";

initSync(Deno.readFileSync(new URL("./fencepost_bg.wasm", import.meta.url)));

export * from "./index.js";
