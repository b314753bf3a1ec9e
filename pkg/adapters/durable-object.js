// A Durable Object's storage as a fencepost store (`durableObjectStore(ctx.storage)`), built on
// customStore, used from inside that object.
//
// Trade-off: the object is the one serialisation point for the whole key space — every
// coordination call goes through it, so its throughput (of the order of 1,000 requests/s) and its
// location bound all of them, where R2 keys are independent. In exchange every operation is a
// local storage call: no subrequest, no network, and a conditional write is a transaction.
//
// Each key is one storage key under "fencepost:" (the object keeps its other data beside it)
// holding `{data, etag, meta, modified}`; the etag is random (122 bits) per write, so it never
// repeats for a key, even across a delete. Conditional writes read, compare and write inside
// `storage.transaction()`, which workerd runs under blockConcurrencyWhile: concurrent calls —
// other requests or other promises of the same request — wait, so of racing writes one wins.
// Values past the backend's limit (KV-backed: 128 KiB serialised; SQLite-backed: 2 MB with the
// key) are refused here, non-retryable: workerd's local KV-backed objects live in SQLite and
// would take more than production does.

import { InvalidArgument } from "../errors.js";
import { customStore } from "../stores.js";

const ROOT = "fencepost:";
/** KV-backed objects: a value, serialised, at most 128 KiB; keys at most 2 KiB. */
const KV_VALUE_BYTES = 128 * 1024;
const KV_KEY_BYTES = 2048;
/** SQLite-backed objects: key and value together at most 2 MB. */
const SQLITE_ROW_BYTES = 2_000_000;
/** Room for the V8 serialisation of the record's fields around the bytes, strings counted apart. */
const ENVELOPE_BYTES = 96;
/** Entries per `list` page, as S3 pages; read from storage in chunks of at most 16 MiB of values. */
const PAGE = 1000;
const CHUNK_BYTES = 16 * 1024 * 1024;

const utf8 = new TextEncoder();

/** A failure the core reads: not retried (asking again gets the same). @param {string} message @param {string} code @param {number} status */
function refused(message, code, status) {
  return Object.assign(new Error(message), { retryable: false, code, status });
}

/** A string's size in a V8 serialisation, at most: two bytes a character plus its tag and length. @param {string} s */
const serialised = (s) => 2 * s.length + 6;

/** @type {WeakMap<object, boolean>} */
const BACKENDS = new WeakMap();

/** Whether the object is SQLite-backed (SQL runs only there), judged once per storage. @param {any} storage */
function isSqlite(storage) {
  let sqlite = BACKENDS.get(storage);
  if (sqlite === undefined) {
    try {
      storage.sql.exec("SELECT 1");
      sqlite = true;
    } catch {
      sqlite = false;
    }
    BACKENDS.set(storage, sqlite);
  }
  return sqlite;
}

/**
 * A Durable Object's storage (`this.ctx.storage`) as a store for a whole key space.
 * @param {any} storage @param {any} [settings] `{prefix?, timeout?}` as customStore takes them
 */
export function durableObjectStore(storage, settings) {
  const missing = ["get", "put", "delete", "list", "transaction"].filter((m) => typeof storage?.[m] !== "function");
  if (missing.length) {
    throw new InvalidArgument(
      `durableObjectStore needs a Durable Object's storage (ctx.storage, with get, put, delete, list and transaction; missing ${missing.join(", ")})`);
  }
  const backend = () => isSqlite(storage);

  /** Refuses a record the backend would not hold, naming the limit. @param {string} key @param {string} stored @param {object} record */
  function fits(key, stored, /** @type {{data: Uint8Array, etag: string, meta: Record<string, string>}} */ record) {
    let size = ENVELOPE_BYTES + record.data.byteLength + serialised(record.etag);
    for (const [name, value] of Object.entries(record.meta)) size += serialised(name) + serialised(value);
    const keyBytes = utf8.encode(stored).byteLength;
    if (backend()) {
      if (keyBytes + size > SQLITE_ROW_BYTES) {
        throw refused(`${JSON.stringify(key)} is ${record.data.byteLength} bytes (${keyBytes + size} with its key and metadata); a SQLite-backed Durable Object holds at most ${SQLITE_ROW_BYTES} bytes per key and value`,
          "EntityTooLarge", 413);
      }
    } else {
      if (size > KV_VALUE_BYTES) {
        throw refused(`${JSON.stringify(key)} is ${record.data.byteLength} bytes (${size} with its metadata); a KV-backed Durable Object holds at most ${KV_VALUE_BYTES} bytes per value`,
          "EntityTooLarge", 413);
      }
      if (keyBytes > KV_KEY_BYTES) {
        throw refused(`${JSON.stringify(key)} is ${keyBytes} bytes as stored; a KV-backed Durable Object's keys are at most ${KV_KEY_BYTES} bytes`,
          "KeyTooLongError", 400);
      }
    }
  }

  const impl = {
    /** @param {string} key */
    async get(key) {
      const record = await storage.get(ROOT + key);
      if (record === undefined || record === null) return null;
      return { data: record.data, etag: record.etag, meta: record.meta, lastModified: record.modified };
    },

    /** @param {string} key @param {Uint8Array} data @param {{ifMatch?: string, ifNoneMatch?: "*", meta: Record<string, string>}} options */
    async put(key, data, { ifMatch, ifNoneMatch, meta }) {
      const stored = ROOT + key;
      // A copy of the bytes and meta, taken now: the caller's buffers may change while we wait.
      const record = { data: data.slice(), etag: crypto.randomUUID(), meta: { ...meta }, modified: Date.now() };
      fits(key, stored, record);
      if (ifMatch === undefined && ifNoneMatch === undefined) {
        await storage.put(stored, record);
        return { etag: record.etag };
      }
      const won = await storage.transaction(async (/** @type {any} */ txn) => {
        const current = await txn.get(stored);
        const holds = ifNoneMatch === "*" ? current === undefined : current?.etag === ifMatch;
        if (holds) await txn.put(stored, record);
        return holds;
      });
      return won ? { etag: record.etag } : null;
    },

    /** @param {string} key @param {{ifMatch?: string}} options */
    async delete(key, { ifMatch }) {
      const stored = ROOT + key;
      if (ifMatch === undefined) {
        await storage.delete(stored);
        return true;
      }
      return storage.transaction(async (/** @type {any} */ txn) => {
        const current = await txn.get(stored);
        if (current?.etag !== ifMatch) return false;
        await txn.delete(stored);
        return true;
      });
    },

    /**
     * Keys under `prefix` in ascending UTF-8 order (storage's own order), up to PAGE a call, read
     * in chunks so that at most CHUNK_BYTES of values are held at once; the cursor is the last key.
     * @param {string} prefix @param {{startAfter?: string, cursor?: string}} options
     */
    async list(prefix, { startAfter, cursor }) {
      const chunk = Math.max(1, Math.floor(CHUNK_BYTES / (backend() ? SQLITE_ROW_BYTES : KV_VALUE_BYTES)));
      /** @type {{key: string, etag: string, size: number, lastModified: number}[]} */
      const entries = [];
      let after = cursor ?? startAfter;
      for (;;) {
        const limit = Math.min(chunk, PAGE - entries.length);
        /** @type {Map<string, any>} */
        const page = await storage.list({ prefix: ROOT + prefix, ...(after !== undefined && { startAfter: ROOT + after }), limit });
        for (const [stored, record] of page) {
          after = stored.slice(ROOT.length);
          // A value that is no record of this store's (the object's own code wrote it under this
          // key space) is not listed, as the Deno KV adapter does: it failed the whole listing.
          if (!(record?.data instanceof Uint8Array) || typeof record.etag !== "string") continue;
          entries.push({ key: after, etag: record.etag, size: record.data.byteLength, lastModified: record.modified });
        }
        if (page.size < limit) return { entries };
        if (entries.length >= PAGE) return { entries, cursor: after };
      }
    },
  };
  return customStore(impl, settings);
}
