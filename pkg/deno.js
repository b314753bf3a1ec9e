// Deno entry: load the wasm next to this file through its file URL.
import init from "./fencepost.js";
import { install } from "./install.js";

await init({ module_or_path: new URL("./fencepost_bg.wasm", import.meta.url) });
install();

export * from "./api.js";
