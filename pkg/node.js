// Node.js entry: read the wasm next to this file and instantiate it synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./fencepost.js";
import { install } from "./install.js";

initSync({ module: readFileSync(new URL("./fencepost_bg.wasm", import.meta.url)) });
install();

export * from "./api.js";
