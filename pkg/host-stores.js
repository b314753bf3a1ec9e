// Stores written in JS, as the core calls them (`src/store/js.rs`): four calls with fixed shapes
// — `get(key, ifNoneMatch?, signal)`, `put(key, data, condition?, meta, signal)`, `delete(key,
// ifMatch?, signal)`, `list(prefix, startAfter?, cursor?, signal)` — whose failures all reject with
// one shape, `{message, retryable, code?, status?}`. The core adds the per-attempt timeout, the
// retries, the read-back of a write whose answer was lost, counting and events, as for every store.
//
// `customHost` checks a user's object (`customStore`) against the documented interface, answer by
// answer, so a store that answers something else fails with a message naming what it answered;
// `r2Host` is a Workers R2 binding through the same door.

import { InvalidArgument } from "./errors.js";
import { isA } from "./options.js";

/** @typedef {{message: string, retryable: boolean, code?: string, status?: number}} HostFailure */

/**
 * Why a call failed, as the core reads it (the store's own error is kept as `cause`).
 * @param {string} message @param {boolean} retryable @param {unknown} cause @param {string} [code] @param {number} [status]
 */
function failure(message, retryable, cause, code, status) {
  return Object.assign(new Error(message, { cause }), { retryable, code, status });
}

/** A store error as the core reads it: retried when the store says `retryable: true`. @param {any} e */
function fromThrown(e) {
  const message = typeof e?.message === "string" ? e.message : String(e);
  const code = typeof e?.code === "string" ? e.code : undefined;
  const status = typeof e?.status === "number" ? e.status : undefined;
  return failure(message, e?.retryable === true, e, code, status);
}

/** A store's answer the interface does not allow: never retried (asking again gets the same). */
function malformed(/** @type {string} */ what) {
  return failure(`answered ${what}`, false, undefined, "MalformedResponse");
}

/**
 * `fn()`'s answer; whatever it throws (or rejects with) becomes a failure the core reads, as
 * `toFailure` classifies it (a custom store's own `retryable`, by default).
 * @template T @param {() => T} fn @param {(e: any) => Error} [toFailure]
 */
async function calling(fn, toFailure = fromThrown) {
  try {
    return await fn();
  } catch (e) {
    throw toFailure(e);
  }
}

/** The methods of the four calls `obj` lacks. @param {any} obj */
const missingCalls = (obj) => ["get", "put", "delete", "list"].filter((m) => typeof obj?.[m] !== "function");

const isRecord = (/** @type {unknown} */ v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** `lastModified` as milliseconds: a `Date`, milliseconds or an ISO string; undefined when absent. @param {unknown} t @param {string} where */
function millis(t, where) {
  if (t === undefined || t === null) return undefined;
  const ms = isA(t, "Date") ? Date.prototype.getTime.call(t) : typeof t === "number" ? t : typeof t === "string" ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms)) throw malformed(`${where} lastModified ${JSON.stringify(String(t))}, not a Date, milliseconds or an ISO time`);
  return ms;
}

/** An etag: a non-empty string. @param {unknown} etag @param {string} where */
function etagOf(etag, where) {
  if (typeof etag !== "string" || etag === "") throw malformed(`${where} without an etag (a non-empty string)`);
  return etag;
}

/** Bytes as the store gave them: a `Uint8Array`, another view, an `ArrayBuffer` or a string (UTF-8). @param {unknown} data */
function bytesOf(data) {
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (isA(data, "ArrayBuffer")) return new Uint8Array(/** @type {ArrayBuffer} */ (data));
  if (typeof data === "string") return new TextEncoder().encode(data);
  throw malformed("data that is not bytes (a Uint8Array, an ArrayBuffer or a string)");
}

/** `meta`: a record of strings (fencepost's write tokens travel there). @param {unknown} meta */
function metaOf(meta) {
  if (meta === undefined || meta === null) return {};
  if (!isRecord(meta) || Object.values(/** @type {object} */ (meta)).some((v) => typeof v !== "string")) {
    throw malformed("meta that is not a record of strings");
  }
  return meta;
}

/**
 * A user's store object as the core calls it, its answers checked against the interface:
 * `get(key, {signal})` → `{data, etag, meta, lastModified?} | null`; `put(key, data, {ifMatch?,
 * ifNoneMatch?, meta, signal})` → `{etag} | null`; `delete(key, {ifMatch?, signal})` → boolean;
 * `list(prefix, {startAfter?, cursor?, signal})` → `{entries: [{key, etag, size, lastModified?}], cursor?}`.
 * @param {any} impl
 */
export function customHost(impl) {
  const missing = missingCalls(impl);
  if (missing.length) throw new InvalidArgument(`customStore needs an object with get, put, delete and list methods (missing ${missing.join(", ")})`);
  return {
    conditionalGet: false, // `get` takes no condition: the core compares etags itself
    conditionalDelete: true,
    /** @param {string} key @param {string | undefined} _ifNoneMatch @param {AbortSignal | undefined} signal */
    async get(key, _ifNoneMatch, signal) {
      const got = await calling(() => impl.get(key, { signal }));
      if (got === null || got === undefined) return null;
      if (!isRecord(got)) throw malformed("something that is neither null nor {data, etag, meta}");
      return { data: bytesOf(got.data), etag: etagOf(got.etag, "an object"), meta: metaOf(got.meta), modified: millis(got.lastModified, "an object's") };
    },
    /** @param {string} key @param {Uint8Array} data @param {string | undefined} condition @param {Record<string, string>} meta @param {AbortSignal | undefined} signal */
    async put(key, data, condition, meta, signal) {
      const when = condition === undefined ? {} : condition === "*" ? { ifNoneMatch: "*" } : { ifMatch: condition };
      const put = await calling(() => impl.put(key, data, { ...when, meta, signal }));
      // Only `null` is a refusal: a `put` that answers nothing (a forgotten `return`) may have
      // written, and taking it for a refusal would make fencepost retry over its own write.
      if (put === null) {
        if (condition === undefined) throw malformed("null (refused) to a write without a condition");
        return null;
      }
      if (!isRecord(put)) throw malformed(put === undefined ? "nothing (undefined) to a write: return {etag}, or null when the condition was refused" : "something that is neither null nor {etag}");
      return etagOf(put.etag, "a write");
    },
    /** @param {string} key @param {string | undefined} ifMatch @param {AbortSignal | undefined} signal */
    async delete(key, ifMatch, signal) {
      const deleted = await calling(() => impl.delete(key, ifMatch === undefined ? { signal } : { ifMatch, signal }));
      if (ifMatch !== undefined && typeof deleted !== "boolean") throw malformed("something that is not a boolean to a delete with ifMatch");
      // A plain delete may answer nothing (`undefined`); anything else but a boolean is a broken store.
      if (deleted !== undefined && typeof deleted !== "boolean") throw malformed("something that is not a boolean to a delete");
      return deleted !== false;
    },
    /** @param {string} prefix @param {string | undefined} startAfter @param {string | undefined} cursor @param {AbortSignal | undefined} signal */
    async list(prefix, startAfter, cursor, signal) {
      const page = await calling(() => impl.list(prefix, { startAfter, cursor, signal }));
      if (!isRecord(page) || !Array.isArray(page.entries)) throw malformed("something that is not {entries: [...], cursor?}");
      if (page.cursor !== undefined && page.cursor !== null && typeof page.cursor !== "string") throw malformed("a cursor that is not a string");
      const entries = page.entries.map((/** @type {any} */ e) => {
        if (!isRecord(e) || typeof e.key !== "string") throw malformed("an entry without a key");
        if (typeof e.size !== "number" || !(e.size >= 0)) throw malformed(`${JSON.stringify(e.key)} without a size`);
        return { key: e.key, etag: etagOf(e.etag, JSON.stringify(e.key)), size: e.size, modified: millis(e.lastModified, `${JSON.stringify(e.key)}'s`) };
      });
      return { entries, cursor: page.cursor || undefined };
    },
  };
}

/** An R2 binding's failure: `TypeError`s and `RangeError`s are arguments it refused (nothing was
 * sent: not retried); anything else is the service's, after which a write may have landed. */
function fromR2(/** @type {unknown} */ e) {
  const refused = e instanceof TypeError || e instanceof RangeError;
  return failure(e instanceof Error ? e.message : String(e), !refused, e, refused ? "InvalidArgument" : undefined);
}

/** A call of the R2 binding. @param {() => Promise<any>} fn */
const r2 = (fn) => calling(fn, fromR2);

/**
 * A Workers R2 binding (`env.BUCKET`) as the core calls a store: `onlyIf` for create-only, etag
 * match and the conditional read, `customMetadata` for the write tokens (the names the S3 store
 * sends as `x-amz-meta-*`, so the binding and R2's S3 endpoint see the same provenance), cursor
 * pages. It has no conditional delete (`prune` re-reads right before deleting).
 * @param {any} bucket
 */
export function r2Host(bucket) {
  if (missingCalls(bucket).length) {
    throw new InvalidArgument("expected an R2 bucket binding (an object with get, put, delete and list methods)");
  }
  const uploaded = (/** @type {any} */ o) => (o.uploaded instanceof Date ? o.uploaded.getTime() : undefined);
  return {
    conditionalGet: true,
    conditionalDelete: false,
    /** @param {string} key @param {string | undefined} ifNoneMatch */
    async get(key, ifNoneMatch) {
      const o = await r2(() => (ifNoneMatch === undefined ? bucket.get(key) : bucket.get(key, { onlyIf: { etagDoesNotMatch: ifNoneMatch } })));
      if (o === null || o === undefined) return null;
      // A failed `onlyIf` answers the object's metadata without a body: R2's 304.
      if (typeof o.arrayBuffer !== "function") return { notModified: true };
      return { data: new Uint8Array(await r2(() => o.arrayBuffer())), etag: o.etag, meta: o.customMetadata ?? {}, modified: uploaded(o) };
    },
    /** @param {string} key @param {Uint8Array} data @param {string | undefined} condition @param {Record<string, string>} meta */
    async put(key, data, condition, meta) {
      const onlyIf = condition === undefined ? undefined : condition === "*" ? { etagDoesNotMatch: "*" } : { etagMatches: condition };
      const options = { customMetadata: meta, httpMetadata: { contentType: "application/json" }, ...(onlyIf && { onlyIf }) };
      const o = await r2(() => bucket.put(key, data, options));
      // Landed without an etag: the empty one makes the core read back to learn which version it is.
      return o === null || o === undefined ? null : (o.etag ?? "");
    },
    /** @param {string} key */
    async delete(key) {
      await r2(() => bucket.delete(key));
      return true;
    },
    /** @param {string} prefix @param {string | undefined} startAfter @param {string | undefined} cursor */
    async list(prefix, startAfter, cursor) {
      const page = await r2(() => bucket.list({ prefix, limit: 1000, ...(cursor ? { cursor } : startAfter ? { startAfter } : {}) }));
      if (!Array.isArray(page?.objects)) throw failure("no objects array", true, undefined);
      if (page.truncated && typeof page.cursor !== "string") throw malformed("a truncated page without a cursor");
      const entries = page.objects.map((/** @type {any} */ o) => ({ key: o.key, etag: o.etag, size: o.size, modified: uploaded(o) }));
      return { entries, cursor: page.truncated ? page.cursor : undefined };
    },
  };
}
