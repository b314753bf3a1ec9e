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
/** Whether the load in progress was given its source (else it is the default place). */
let loadingGiven = false;
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
  // A source given while a load from the default place is on its way (a call came first) is
  // tried when that one fails, rather than ignored.
  if (loading === null || (source !== undefined && !loadingGiven)) {
    const before = loading;
    const load = before === null ? fromSource(source) : before.catch(() => {}).then(() => (ready ? undefined : fromSource(source)));
    const attempt = load.catch((e) => {
      if (loading === attempt) [loading, loadingGiven] = [null, false]; // a failed fetch may be retried by the next call
      throw e;
    });
    [loading, loadingGiven] = [attempt, source !== undefined];
  }
  return /** @type {Promise<void>} */ (loading);
}

/** For a call: the core ready, following a load that a later `initWasm(url)` took over from the one
 * the call first waited on. */
export async function whenReady() {
  for (;;) {
    const waited = initWasm();
    try {
      return await waited;
    } catch (e) {
      if (loading === null || loading === waited) throw e;
    }
  }
}

/** One load of the core from `source`, or from the default place (which may itself be unknown to a
 * bundle that has no `import.meta.url`); its failure a `FencepostError` saying what to do. */
async function fromSource(/** @type {unknown} */ source) {
  /** @type {unknown} */
  let from;
  try {
    from = source ?? defaultSource();
    await core.default({ module_or_path: /** @type {any} */ (from) });
    ready = true;
  } catch (e) {
    const where = typeof from === "string" || from instanceof URL ? ` from ${from}` : "";
    throw new FencepostError(
      `fencepost could not load its wasm core${where}: ${/** @type {any} */ (e)?.message ?? e}. If your bundler serves ` +
        `"fencepost/fencepost_bg.wasm" elsewhere, call initWasm(urlOfThatFile) first (docs/runtimes.md, "Bundlers").`,
      { cause: e },
    );
  }
}

/** Is the core instantiated (so handles can be bound synchronously)? */
export function isReady() {
  return ready;
}

export { core };
