// Node.js entry (Bun's too): read the wasm next to this file and instantiate it synchronously.
// `fs` comes from `process.getBuiltinModule` (Node ≥ 20.16, Bun, Deno), not `import … from "node:fs"`:
// that import builds an ES module facade of all of `fs`, about 1.4 ms of `import("fencepost")`
// (measured). Older Node 20 releases take it through `createRequire`, whose import costs 0.3 ms.
import { createRequire } from "node:module";
import { initSync } from "./runtime.js";
import { FencepostError } from "./errors.js";

// `fencepost_bg.wasm` next to this file. Bundled into a CommonJS file, `import.meta` is empty and
// `__dirname` is the bundle's folder.
const next = import.meta.url
  ? new URL("./fencepost_bg.wasm", import.meta.url)
  : `${typeof __dirname === "string" ? __dirname : "."}/fencepost_bg.wasm`;
const fs = process.getBuiltinModule?.("node:fs") ?? createRequire(next)("node:fs");
initSync(readWasm());

/** The wasm's bytes. Bundled, the `.wasm` is where the build put it, or nowhere: then the error says what to do. */
function readWasm() {
  try {
    return fs.readFileSync(next);
  } catch (e) {
    const path = next instanceof URL ? (process.getBuiltinModule?.("node:url")?.fileURLToPath(next) ?? next.href) : next;
    throw new FencepostError(
      `fencepost could not read its wasm core at ${path} (${e?.code ?? e}). In a bundle for Node, keep ` +
        `fencepost external or copy node_modules/fencepost/dist/fencepost_bg.wasm next to the bundle ` +
        `(docs/runtimes.md, "Bundling for Node").`,
      { cause: e },
    );
  }
}

export * from "./index.js";
