// Node.js entry: read the wasm next to this file and instantiate it synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./runtime.js";

initSync(readFileSync(new URL("./fencepost_bg.wasm", import.meta.url)));

export * from "./index.js";
