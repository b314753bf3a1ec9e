// Layer 0 on its own: conditional get / put / delete / list / waitFor on raw bytes. What the core
// hands back as arrays gets its field names here.

import { InvalidArgument, StorageError } from "./errors.js";
import { SIGNAL_ONLY, isA, options, string } from "./options.js";
import { handleClasses, run } from "./binding.js";
import { checked } from "./events.js";
import { queuedIterator } from "./iterator.js";

const GET_OPTIONS = /** @type {const} */ ({ ifNoneMatch: "string", signal: "signal" });
const PUT_OPTIONS = /** @type {const} */ ({ ifAbsent: "boolean", ifMatch: "string", signal: "signal" });
const ENTRIES_OPTIONS = /** @type {const} */ ({ startAfter: "string", signal: "signal" });
/** Pages a listing follows at most (as the core's listings): a store past it is broken. */
const MAX_LIST_PAGES = 100_000;
const WAIT_OPTIONS = /** @type {const} */ ({ timeout: "number", pollInterval: "number", changedFrom: "string", signal: "signal" });

/** Layer 0: conditional get / put / delete / list / waitFor on raw bytes. */
export class Objects {
  #db;

  /** @internal */
  constructor(/** @type {import("./stores.js").Store} */ store, /** @type {import("./binding.js").Recipe} */ db) {
    if (db === undefined) throw new InvalidArgument("Objects are made by db.objects or objects(store)");
    /** @readonly */
    this.store = store;
    this.#db = db;
  }

  /**
   * `{data: Uint8Array, etag}` or null; with `ifNoneMatch`, `{notModified: true}` while the etag is still that one.
   * @overload
   * @param {string} key @param {{signal?: AbortSignal | null}} [opts]
   * @returns {Promise<{data: Uint8Array, etag: string} | null>}
   */
  /**
   * @overload
   * @param {string} key @param {{ifNoneMatch: string, signal?: AbortSignal | null}} opts
   * @returns {Promise<{data: Uint8Array, etag: string} | {notModified: true} | null>}
   */
  /** @param {string} key @param {any} [opts] @returns {Promise<any>} */
  async get(key, opts) {
    const { ifNoneMatch, signal } = checked(this.#db, "objects.get", key, () => {
      string(key, "key");
      return options(opts, GET_OPTIONS, "get options");
    });
    const r = await run("objects.get", this.#db, { args: { key, ifNoneMatch: ifNoneMatch ?? undefined }, signal });
    return r.json?.notModified ? { notModified: true } : stored(r);
  }

  /** `{etag}`, or null when `{ifAbsent}` / `{ifMatch}` did not hold. */
  async put(/** @type {string} */ key, /** @type {any} */ data, /** @type {any} */ opts) {
    const c = checked(this.#db, "objects.put", key, () => {
      string(key, "key");
      const o = options(opts, PUT_OPTIONS, "put options");
      const args = { key, ifAbsent: o.ifAbsent ?? undefined, ifMatch: o.ifMatch ?? undefined };
      return { args, callbacks: { data: toBytes(data) }, signal: o.signal };
    });
    return (await run("objects.put", this.#db, c)).json;
  }

  /** Delete; a missing key is a no-op. */
  async delete(/** @type {string} */ key, /** @type {any} */ opts) {
    const { signal } = checked(this.#db, "objects.delete", key, () => {
      string(key, "key");
      return options(opts, SIGNAL_ONLY, "delete options");
    });
    await run("objects.delete", this.#db, { args: { key }, signal });
  }

  /** Keys under `prefix` (default ""), ascending, relative to the store prefix. */
  async list(/** @type {string | undefined} */ prefix, /** @type {any} */ opts) {
    const { signal } = checked(this.#db, "objects.list", prefix ?? "", () => {
      if (prefix !== undefined && prefix !== null) string(prefix, "prefix");
      return options(opts, SIGNAL_ONLY, "list options");
    });
    return /** @type {string[]} */ ((await run("objects.list", this.#db, { args: { prefix: prefix ?? "" }, signal })).json);
  }

  /**
   * The objects under `prefix` (default ""), in key order, page by page — `{key, etag, size,
   * lastModified}` — as an async iterable: a prefix of 100,000 keys never becomes one array. One
   * list request per page; `startAfter` starts after that key.
   * @param {string} [prefix] @param {{startAfter?: string, signal?: AbortSignal}} [opts]
   * @returns {AsyncGenerator<{key: string, etag: string | undefined, size: number | undefined, lastModified: Date | null}, undefined, undefined>}
   */
  entries(prefix, opts) {
    const db = this.#db;
    /** The checked options: the first `next()` checks them, as a generator's body would. */
    let o = /** @type {{startAfter?: string | null, signal?: AbortSignal | null} | undefined} */ (undefined);
    /** The page being handed out, and where in it. @type {any[]} */
    let page = [];
    let at = 0;
    /** @type {string | undefined} */
    let cursor;
    /** The last key handed out: the core drops what a later page repeats or puts before it. @type {string | undefined} */
    let after;
    let pages = 0;
    return queuedIterator(async () => {
      // Aborted between steps: nothing is in flight, so the step rejects with the signal's reason,
      // even one the page at hand could answer (and that ends the listing).
      if (o?.signal?.aborted) throw o.signal.reason;
      while (at === page.length) {
        // Cursors that go round in a circle (a broken store) end the listing as every listing's do.
        if (pages++ === MAX_LIST_PAGES) {
          throw new StorageError(`LIST ${JSON.stringify(prefix ?? "")}: still truncated after ${MAX_LIST_PAGES} pages`, { s3Code: "MalformedResponse" });
        }
        if (o === undefined) {
          o = checked(db, "objects.entries", prefix ?? "", () => {
            if (prefix !== undefined && prefix !== null) string(prefix, "prefix");
            return options(opts, ENTRIES_OPTIONS, "entries options");
          });
        } else if (cursor === undefined) {
          return { done: true, value: undefined };
        }
        const args = { prefix: prefix ?? "", startAfter: o.startAfter ?? undefined, cursor, after };
        const { entries, next } = (await run("objects.entriesPage", db, { args, signal: o.signal })).json;
        [page, at, cursor] = [entries, 0, next ?? undefined];
      }
      const { key, etag, size, lastModified } = page[at++];
      after = key;
      return { done: false, value: { key, etag: etag ?? undefined, size: size ?? undefined, lastModified: lastModified === null ? null : new Date(lastModified) } };
    });
  }

  /** Poll until the key exists (or its etag differs from `changedFrom`); `TimeoutError` after `timeout`. */
  async waitFor(/** @type {string} */ key, /** @type {any} */ opts) {
    const c = checked(this.#db, "objects.waitFor", key, () => {
      string(key, "key");
      const o = options(opts, WAIT_OPTIONS, "waitFor options");
      const args = { key, timeout: o.timeout ?? undefined, pollInterval: o.pollInterval ?? undefined, changedFrom: o.changedFrom ?? undefined };
      return { args, signal: o.signal };
    });
    const found = await run("objects.waitFor", this.#db, c);
    return /** @type {StoredObject} */ (stored(found)); // found or a TimeoutError: never null
  }
}
handleClasses({ Objects });

/** @typedef {{data: Uint8Array, etag: string}} StoredObject */

/** A stored object from the core's reply (null stays null). @returns {StoredObject | null} */
function stored(/** @type {import("./binding.js").Reply} */ r) {
  return r.json && { data: /** @type {Uint8Array} */ (r.bytes), etag: r.json.etag };
}

const UTF8 = new TextEncoder();

/** Object data: a Uint8Array, an ArrayBuffer (or a view of one), or a string (stored as UTF-8). */
function toBytes(/** @type {unknown} */ data) {
  if (typeof data === "string") return UTF8.encode(string(data, "data"));
  try {
    // A view of a detached buffer reads as empty; viewing its buffer again is what throws.
    if (data instanceof Uint8Array) return data.byteLength === 0 ? new Uint8Array(data.buffer, 0, 0) : data;
    if (isA(data, "ArrayBuffer")) return new Uint8Array(/** @type {ArrayBuffer} */ (data));
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  } catch {
    // A buffer transferred elsewhere (postMessage, structuredClone): V8 refuses to view it.
    throw new InvalidArgument("data is a detached ArrayBuffer (it was transferred): nothing to write");
  }
  throw new InvalidArgument("data must be a Uint8Array, an ArrayBuffer or a string");
}
