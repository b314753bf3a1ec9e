// When the wasm core is ready. Node, Deno and workerd entries instantiate it synchronously at import;
// the browser (default) entry cannot (browsers refuse synchronous compilation of large modules on the
// main thread) and no entry may use top-level `await` (bundlers targeting ES2020 refuse it), so there
// the module is fetched on first use — or when the page calls `initWasm()` itself, e.g. to pass the
// URL its bundler gave the `.wasm`. Handles created before that are bound to the core lazily.

import * as core from "./fencepost.js";
import { FencepostError } from "./errors.js";

/** @type {boolean} */
let ready = false;
/** @type {Promise<void> | null} */
let loading = null;
/** @type {() => unknown} where the default entry finds the `.wasm` */
let defaultSource = () => {
  throw new Error("fencepost: no wasm source configured");
};

/** Synchronous instantiation (Node, Deno, workerd): `module` is bytes or a compiled module. */
export function initSync(/** @type {BufferSource | WebAssembly.Module} */ module) {
  core.initSync({ module });
  ready = true;
}

/** Where to fetch the module from when the first call needs it (browser entry). */
export function setDefaultSource(/** @type {() => unknown} */ source) {
  defaultSource = source;
}

/**
 * Instantiate the wasm core from `source` (a URL, a `Response`, bytes or a compiled module), or from
 * the package's own `fencepost_bg.wasm` next to the entry file. Idempotent; resolves when ready.
 * @param {unknown} [source]
 * @returns {Promise<void>}
 */
export function initWasm(source) {
  if (ready) return Promise.resolve();
  const from = source ?? defaultSource();
  loading ??= (async () => {
    await core.default({ module_or_path: /** @type {any} */ (from) });
    ready = true;
  })().catch((e) => {
    loading = null; // a failed fetch may be retried by the next call
    const where = typeof from === "string" || from instanceof URL ? ` from ${from}` : "";
    throw new FencepostError(
      `fencepost could not load its wasm core${where}: ${e?.message ?? e}. If your bundler serves ` +
        `"fencepost/fencepost_bg.wasm" elsewhere, call initWasm(urlOfThatFile) first (docs/runtimes.md, "Bundlers").`,
      { cause: e },
    );
  });
  return loading;
}

/** Is the core instantiated (so handles can be bound synchronously)? */
export function isReady() {
  return ready;
}

export { core };
