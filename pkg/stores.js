// Store handles: what `new Fencepost(store)` talks to. Only option names and types are checked here;
// the core builds each store and judges the rest — the required S3 settings and their defaults,
// whether a value is an R2 binding, prefixes — once, for Rust users too.

import { InvalidArgument, pinNames } from "./errors.js";
import { SIGNAL_ONLY, options } from "./options.js";
import { CORE, Lazy, core, isReady, run } from "./binding.js";

/** @typedef {import("./fencepost.js").Store} CoreStore */
/** @typedef {"memory" | "s3" | "r2" | "counting" | "fault"} Kind */

/** A store handle: pass it to `new Fencepost(store)`. Made by the store functions below. */
export class Store {
  /** @type {Lazy<CoreStore>} */
  #core;

  /** @internal @param {Kind} kind @param {() => CoreStore} make @param {object} [shown] what inspection shows */
  constructor(kind, make, shown) {
    if (make === undefined) throw new InvalidArgument("a Store is made by memoryStore(), s3Store(), r2Store() or countingStore()");
    this.kind = kind;
    if (shown) Object.assign(this, shown);
    this.#core = new Lazy(make);
  }

  /** @internal */
  [CORE]() {
    return this.#core.get();
  }

  /** Requests made so far, per operation (`countingStore` and `faultStore` only). */
  requestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("requestCounts() needs a countingStore()");
    const [get, put, del, list] = this.#counting();
    return { get, put, delete: del, list, total: get + put + del + list };
  }

  /** Start counting again from zero (`countingStore` only). */
  resetRequestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("resetRequestCounts() needs a countingStore()");
    this.#counting(true);
  }

  #counting(reset = false) {
    if (!isReady()) return [0, 0, 0, 0]; // nothing can have been sent before the core was loaded
    return Array.from(this.#core.get().requestCounts(reset));
  }
}
pinNames({ Store });

const COUNTED = new Set(["counting", "fault"]);

/** The settings inspection shows: those given (the defaults are the core's). */
function shown(/** @type {Record<string, unknown>} */ settings) {
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v != null));
}

/** An in-memory store: tests, demos, the browser harness. Behaves like S3 (ETag = a digest of the body). */
export function memoryStore() {
  return new Store("memory", () => core.memoryStore());
}

const S3_OPTIONS = /** @type {const} */ ({
  endpoint: "string", bucket: "string", region: "string", accessKeyId: "string", secretAccessKey: "string",
  sessionToken: "string", prefix: "string", forcePathStyle: "boolean", timeout: "number",
});

/** An S3-API store over `fetch`, SigV4-signed: AWS S3, R2's S3 endpoint, SeaweedFS, MinIO… */
export function s3Store(/** @type {any} */ settings) {
  if (settings === undefined || settings === null) {
    throw new InvalidArgument("s3Store needs an options object {endpoint, bucket, accessKeyId, secretAccessKey, ...}");
  }
  const o = options(settings, S3_OPTIONS, "s3Store options");
  // A copy: the core reads the settings when it builds the store, which may be on the first call.
  const given = { ...o };
  const { endpoint, bucket, region, prefix } = given;
  return new Store("s3", () => core.s3Store(given), shown({ endpoint, bucket, region, prefix }));
}

/** A store on a Workers R2 binding (`env.BUCKET`), with an optional key prefix. @param {any} bucket @param {any} [settings] */
export function r2Store(bucket, settings) {
  const { prefix } = options(settings, { prefix: "string" }, "r2Store options");
  return new Store("r2", () => core.r2Store(bucket, prefix), shown({ prefix }));
}

/** Wrap a store to count requests per operation: every request costs a Workers subrequest. */
export function countingStore(/** @type {any} */ store) {
  const inner = toStore(store);
  return new Store("counting", () => core.countingStore(inner[CORE]()), { inner });
}

/** A `Store`, or an R2 binding used directly (the core says so when it is not one). */
export function toStore(/** @type {unknown} */ store) {
  return store instanceof Store ? store : r2Store(store);
}

/**
 * `checkStore(store)`: does the store honour what fencepost relies on? Writes only under a fresh
 * `__fencepost_check/<random>/` prefix and deletes what it wrote. `{ok, checks: [{name, ok,
 * required, detail}]}`; `ok` is false when a required check failed.
 * @param {any} store @param {any} [opts]
 * @returns {Promise<{ok: boolean, checks: {name: string, ok: boolean, required: boolean, detail: string}[]}>}
 */
export async function checkStore(store, opts) {
  const s = toStore(store);
  const { signal } = options(opts, SIGNAL_ONLY, "checkStore options");
  const [ok, checks] = await run(() => core.checkStore(s[CORE](), signal));
  /** @type {(row: [string, boolean, boolean, string]) => {name: string, ok: boolean, required: boolean, detail: string}} */
  const named = ([name, passed, required, detail]) => ({ name, ok: passed, required, detail });
  return { ok, checks: checks.map(named) };
}
