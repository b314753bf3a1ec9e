// Browser (and default) entry: no top-level await. The wasm next to this file is fetched on the first
// call (or when the page calls `initWasm(url)` with the URL its bundler gave the `.wasm`). The
// `new URL(…, import.meta.url)` form is what Vite, webpack and Rollup plugins recognise as an asset.
import { setDefaultSource } from "./runtime.js";

setDefaultSource(() => new URL("./fencepost_bg.wasm", import.meta.url));

export * from "./index.js";
