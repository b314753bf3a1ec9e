// Node.js entry (Bun's too): read the wasm next to this file and instantiate it synchronously.
// `fs` comes from `process.getBuiltinModule` (Node ≥ 20.16, Bun, Deno), not `import … from "node:fs"`:
// that import builds an ES module facade of all of `fs`, about 1.4 ms of `import("fencepost")`
// (measured). Older Node 20 releases take it through `createRequire`, whose import costs 0.3 ms.
import { createRequire } from "node:module";
import { initSync } from "./runtime.js";

const fs = process.getBuiltinModule?.("node:fs") ?? createRequire(import.meta.url)("node:fs");
initSync(fs.readFileSync(new URL("./fencepost_bg.wasm", import.meta.url)));

export * from "./index.js";
