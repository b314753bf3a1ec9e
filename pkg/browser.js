// Browser (and default) entry: fetch the wasm next to this file; served with the package.
import init from "./fencepost.js";
import { install } from "./install.js";

await init({ module_or_path: new URL("./fencepost_bg.wasm", import.meta.url) });
install();

export * from "./api.js";
