// Deno KV (`await Deno.openKv()`; `--unstable-kv`) as a fencepost store, built on customStore.
//
// Layout: fencepost key `k` is one KV entry at `[...namespace, k]` (namespace `["fencepost"]` unless
// given), its value `{data: Uint8Array, meta: Record<string, string>, modified: ms}`; the etag is
// the entry's versionstamp. Create-only and compare-and-swap are atomic operations checking the
// versionstamp (`null`: absent), so the race for a key is KV's own serialised commit.
//
// Deno KV's limits (Deno's `denokv_proto` limits, which `Deno.Kv` enforces client-side before
// anything is sent, throwing a TypeError): a value is at most 65536 bytes (64 KiB) once
// V8-serialised — the whole `{data, meta, modified}` record, so the document itself a little less —
// and a key at most 2048 bytes serialised (docs.deno.com, `Deno.KvKey`); a read returns at most 1000
// entries per batch. Over a limit is refused with an error naming it, never retried or truncated.
//
// Which failures are retried (`retryable: true`): `commit()` answers `{ok: false}` for a failed
// check and throws "for any other reason (storage error, invalid value, etc.)" (Deno's docs of
// `AtomicOperation.commit`). A TypeError or RangeError is an argument Deno refused before sending
// (a value or key too large, a malformed check): asking again gets the same. `BadResource` is a
// closed database, `PermissionDenied`/`NotCapable` missing permissions: not retried either. The
// transient ones are the I/O and network classes of `Deno.errors` (Interrupted, TimedOut,
// ConnectionReset, ConnectionAborted, ConnectionRefused, NotConnected, BrokenPipe, UnexpectedEof,
// Busy, Http: a remote KV Connect database) and errors saying the SQLite database is locked or busy
// or the service is unavailable or timed out. Anything else is reported as it is, not retried.
import { customStore } from "../stores.js";
import { InvalidArgument } from "../errors.js";
import { options } from "../options.js";

/** What `denoKvStore` needs of a `Deno.Kv`. */
const KV_METHODS = ["get", "set", "delete", "list", "atomic"];

/** A Deno KV key part (`Deno.KvKeyPart`). @typedef {string | number | bigint | boolean | Uint8Array} KvKeyPart */

/**
 * The options of `denoKvStore`: those of every JS store, and `namespace`, the key parts before the
 * fencepost key (default `["fencepost"]`; `[]` puts keys at the top level of the database).
 * @typedef {{prefix?: string, timeout?: number, namespace?: readonly KvKeyPart[]}} DenoKvStoreOptions
 */

const DENO_KV_OPTIONS = /** @type {const} */ ({ prefix: "string", timeout: "number", namespace: "object" });

/** Deno KV's largest value, V8-serialised (`denokv_proto::limits::MAX_VALUE_SIZE_BYTES`). */
const MAX_VALUE_BYTES = 65536;
/** Deno KV's largest key, serialised (`denokv_proto::limits::MAX_WRITE_KEY_SIZE_BYTES`). */
const MAX_KEY_BYTES = 2048;
/** Entries per list page (and per KV read: Deno's maximum). */
const PAGE = 1000;

/** A versionstamp as Deno KV writes them: 20 hex digits (anything else cannot match an entry). */
const VERSIONSTAMP = /^[0-9a-f]{20}$/i;

/** `Deno.errors` names of I/O and network failures: transient. */
const TRANSIENT_NAMES = new Set(["Interrupted", "TimedOut", "ConnectionReset", "ConnectionAborted", "ConnectionRefused",
  "NotConnected", "BrokenPipe", "UnexpectedEof", "Busy", "Http"]);
/** Messages of transient failures from SQLite or a remote database. */
const TRANSIENT_MESSAGE = /database is locked|sqlite_busy|\bbusy\b|timed out|timeout|temporarily|unavailable|try again/i;
/** SQLite refusing a transaction for another connection's: nothing of it was written. */
const LOCKED = /database is locked|sqlite_busy/i;
/** Errors Deno throws before sending anything, or for a database it cannot use: never transient. */
const REFUSALS = new Set(["TypeError", "RangeError", "BadResource", "PermissionDenied", "NotCapable", "NotSupported"]);

/** An error the core reads: `retryable`, and a `code` and `status` it keeps. @param {string} message @param {boolean} retryable @param {unknown} [cause] @param {string} [code] @param {number} [status] */
function storeError(message, retryable, cause, code, status) {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { retryable, ...(code && { code }), ...(status && { status }) });
}

/** What Deno KV threw, as a store error: the limits named, transient failures retryable. @param {unknown} e @param {string} key */
function fromKv(e, key) {
  const name = e instanceof Error ? e.name : "";
  const message = e instanceof Error ? e.message : String(e);
  if (name === "TypeError" && /value too large/i.test(message)) return tooLarge(key, undefined, e);
  if (name === "TypeError" && /key too large/i.test(message)) {
    const shown = key.length > 60 ? `${key.slice(0, 60)}…` : key;
    return storeError(`Deno KV refused the key ${JSON.stringify(shown)}: a KV key (the namespace's parts and the key) is at most ` +
      `${MAX_KEY_BYTES} bytes serialised (${message})`, false, e, "KeyTooLongError");
  }
  // The message first: Deno throws SQLite's "database is locked" (another process or handle
  // writing the file) as a TypeError, which would otherwise read as a refused argument.
  const retryable = TRANSIENT_MESSAGE.test(message) || (!REFUSALS.has(name) && TRANSIENT_NAMES.has(name));
  // SQLite's "locked" or "busy" refuses a transaction before it commits anything: as a 503, the
  // core retries the write without reading it back (which other writers could leave unproven).
  const status = LOCKED.test(message) ? 503 : undefined;
  return storeError(`Deno KV: ${message}`, retryable, e, name && name !== "Error" ? name : undefined, status);
}

/** A write over the value limit. @param {string} key @param {number | undefined} bytes @param {unknown} [cause] */
function tooLarge(key, bytes, cause) {
  const size = bytes === undefined ? "" : ` (at least ${bytes} bytes)`;
  return storeError(`Deno KV refused the object at ${JSON.stringify(key)}${size}: a Deno KV value is at most ${MAX_VALUE_BYTES} ` +
    "bytes (64 KiB) serialised, the object's data and metadata together", false, cause, "EntityTooLarge");
}

/** A KV call's answer; what it throws, as a store error. @template T @param {string} key @param {() => Promise<T>} fn */
async function kvCall(key, fn) {
  try {
    return await fn();
  } catch (e) {
    throw fromKv(e, key);
  }
}

/** The fewest bytes `{data, meta, modified}` can take V8-serialised (each string's UTF-16 length is at most its bytes). @param {Uint8Array} data @param {Record<string, string>} meta */
function leastBytes(data, meta) {
  let n = data.byteLength;
  for (const [k, v] of Object.entries(meta)) n += k.length + v.length;
  return n;
}

/** The code points of `s` compared as UTF-8 bytes compare (the order S3 and Deno KV list in). @param {string} a @param {string} b */
function compareUtf8(a, b) {
  const x = a[Symbol.iterator](), y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next(), q = y.next();
    if (p.done || q.done) return p.done && q.done ? 0 : p.done ? -1 : 1;
    const d = /** @type {number} */ (p.value.codePointAt(0)) - /** @type {number} */ (q.value.codePointAt(0));
    if (d !== 0) return d;
  }
}

/**
 * The least string after every string that starts with `prefix` (in UTF-8 byte order): `prefix`
 * with its last code point incremented (past the surrogates; a last U+10FFFF dropped and the one
 * before incremented). Undefined when there is none (empty, or all U+10FFFF).
 * @param {string} prefix
 */
function afterPrefix(prefix) {
  const points = Array.from(prefix, (c) => /** @type {number} */ (c.codePointAt(0)));
  while (points.length) {
    const last = /** @type {number} */ (points.pop());
    if (last < 0x10ffff) {
      points.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}

const CURSOR = "after:";

/** The entry's value, checked to be a fencepost object. @param {unknown} value */
function stored(value) {
  const v = /** @type {any} */ (value);
  if (typeof v !== "object" || v === null || !(v.data instanceof Uint8Array)) return undefined;
  const meta = typeof v.meta === "object" && v.meta !== null ? v.meta : {};
  return { data: /** @type {Uint8Array} */ (v.data), meta: /** @type {Record<string, string>} */ (meta),
    modified: typeof v.modified === "number" ? v.modified : undefined };
}

/** `namespace` checked: an array of KV key parts. @param {unknown} ns @returns {KvKeyPart[]} */
function namespaceOf(ns) {
  if (ns === undefined || ns === null) return ["fencepost"];
  const part = (/** @type {unknown} */ p) => ["string", "number", "bigint", "boolean"].includes(typeof p) || p instanceof Uint8Array;
  if (!Array.isArray(ns) || !ns.every(part)) {
    throw new InvalidArgument("denoKvStore options.namespace must be an array of Deno KV key parts (strings, numbers, bigints, booleans or Uint8Arrays)");
  }
  return [...ns];
}

/**
 * A store on Deno KV (`await Deno.openKv(path?)`): each fencepost key one KV entry at
 * `[...namespace, key]`, create-only and compare-and-swap as atomic versionstamp checks. Values
 * are at most 64 KiB (Deno KV's limit): a larger write is refused with an error naming it.
 * @param {unknown} kv a `Deno.Kv`
 * @param {DenoKvStoreOptions} [settings]
 */
export function denoKvStore(kv, settings) {
  const missing = KV_METHODS.filter((m) => typeof (/** @type {any} */ (kv)?.[m]) !== "function");
  if (missing.length) {
    throw new InvalidArgument(`denoKvStore needs a Deno.Kv (await Deno.openKv()): an object with ${KV_METHODS.join(", ")} methods (missing ${missing.join(", ")})`);
  }
  const { prefix, timeout, namespace } = options(settings, DENO_KV_OPTIONS, "denoKvStore options");
  const ns = namespaceOf(namespace);
  const db = /** @type {any} */ (kv);
  const at = (/** @type {string} */ key) => [...ns, key];

  const impl = {
    /** @param {string} key @param {{signal?: AbortSignal}} options */
    async get(key, { signal }) {
      signal?.throwIfAborted();
      const entry = await kvCall(key, () => db.get(at(key)));
      if (entry?.versionstamp === null || entry?.versionstamp === undefined) return null;
      const object = stored(entry.value);
      if (!object) throw storeError(`Deno KV entry ${JSON.stringify(key)} holds something other than a fencepost object`, false);
      return { data: object.data, etag: entry.versionstamp, meta: object.meta, lastModified: object.modified };
    },

    /**
     * @param {string} key @param {Uint8Array} data
     * @param {{ifMatch?: string, ifNoneMatch?: "*", meta: Record<string, string>, signal?: AbortSignal}} options
     */
    async put(key, data, { ifMatch, ifNoneMatch, meta, signal }) {
      signal?.throwIfAborted();
      const value = { data, meta: { ...meta }, modified: Date.now() };
      const least = leastBytes(data, value.meta);
      if (least > MAX_VALUE_BYTES) throw tooLarge(key, least);
      if (ifNoneMatch !== "*" && ifMatch === undefined) {
        const done = await kvCall(key, () => db.set(at(key), value));
        return { etag: done.versionstamp };
      }
      if (ifNoneMatch !== "*" && !VERSIONSTAMP.test(/** @type {string} */ (ifMatch))) return null; // no entry has that etag
      const versionstamp = ifNoneMatch === "*" ? null : /** @type {string} */ (ifMatch).toLowerCase();
      const done = await kvCall(key, () => db.atomic().check({ key: at(key), versionstamp }).set(at(key), value).commit());
      return done.ok ? { etag: done.versionstamp } : null;
    },

    /** @param {string} key @param {{ifMatch?: string, signal?: AbortSignal}} options */
    async delete(key, { ifMatch, signal }) {
      signal?.throwIfAborted();
      if (ifMatch === undefined) {
        await kvCall(key, () => db.delete(at(key)));
        return true;
      }
      if (!VERSIONSTAMP.test(ifMatch)) return false;
      const done = await kvCall(key, () => db.atomic().check({ key: at(key), versionstamp: ifMatch.toLowerCase() }).delete(at(key)).commit());
      return done.ok === true;
    },

    // KV's `prefix` selector matches whole key parts, so a string prefix is the range
    // [prefix, afterPrefix(prefix)) of the part after the namespace; strings order by their UTF-8
    // bytes there, as S3 lists. Past `startAfter` (exclusive) is from `startAfter + "\0"`, the least
    // string after it. The cursor is the last key read (the range restarts after it): a page is
    // one stateless read, whatever the core passes again with the cursor.
    /** @param {string} prefix @param {{startAfter?: string, cursor?: string, signal?: AbortSignal}} options */
    async list(prefix, { startAfter, cursor, signal }) {
      signal?.throwIfAborted();
      let after = startAfter;
      if (cursor !== undefined && cursor !== null) {
        if (!cursor.startsWith(CURSOR)) throw storeError(`Deno KV list: ${JSON.stringify(cursor)} is not a cursor this store gave`, false);
        const last = cursor.slice(CURSOR.length);
        if (after === undefined || compareUtf8(last, after) > 0) after = last;
      }
      const from = after !== undefined && compareUtf8(after, prefix) >= 0 ? after + "\0" : prefix;
      const end = afterPrefix(prefix);
      if (end !== undefined && compareUtf8(from, end) >= 0) return { entries: [] };
      const selector = end === undefined ? { prefix: ns, start: at(from) } : { start: at(from), end: at(end) };
      /** @type {{key: string, etag: string, size: number, lastModified: number | undefined}[]} */
      const entries = [];
      /** @type {string | undefined} */
      let last;
      let read = 0, pastStrings = false;
      const listing = db.list(selector, { limit: PAGE, batchSize: PAGE });
      await kvCall(prefix, async () => {
        for await (const entry of listing) {
          read++;
          const part = entry.key[ns.length];
          // Past the strings (numbers, bigints, booleans sort after them): nothing of ours follows.
          if (typeof part !== "string") {
            pastStrings = true;
            break;
          }
          last = part;
          if (entry.key.length !== ns.length + 1 || !part.startsWith(prefix)) continue; // not a fencepost object
          const object = stored(entry.value);
          if (!object) continue;
          entries.push({ key: part, etag: entry.versionstamp, size: object.data.byteLength, lastModified: object.modified });
        }
      });
      const more = !pastStrings && read === PAGE && last !== undefined;
      return more ? { entries, cursor: CURSOR + last } : { entries };
    },
  };
  return customStore(impl, { prefix, timeout });
}
