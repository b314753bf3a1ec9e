// A store of one's own, as a user writes one for `customStore`: objects in a JS Map, with
// create-only and compare-and-swap writes, meta kept per version, keys listed in UTF-8 byte order a
// page at a time. The suites run the whole JS conformance suite on it, so the custom-store path
// (pkg/host-stores.js, the core's JsStore) is covered with its request counts; the adapters on real
// services (Deno KV, Durable Objects) are covered in their runtimes.

const bytes = (/** @type {string} */ k) => new TextEncoder().encode(k);

/** -1, 0, 1 as `a` sorts before, with or after `b` by UTF-8 bytes (as S3 lists). */
function byBytes(/** @type {string} */ a, /** @type {string} */ b) {
  const [x, y] = [bytes(a), bytes(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length - y.length;
}

/**
 * The `impl` of a custom store over a Map; `pageSize` keys a list page (1,000 as S3: the suite
 * counts list requests). The `ignore…`, `etag…`, `…Meta` and `offsetCursor` flags break it the ways
 * store conformance must catch.
 */
export function mapStoreImpl({ pageSize = 1000, ignoreIfMatch = false, ignoreIfNoneMatch = false, ignoreDeleteIfMatch = false, loseMeta = false,
  etagPerKey = false, etagOfBytes = false, firstMetaOnly = false, dropMeta = undefined, offsetCursor = false } = {}) {
  /** @type {Map<string, {data: Uint8Array, etag: string, meta: Record<string, string>, lastModified: number}>} */
  const objects = new Map();
  let version = 0;
  return {
    get(/** @type {string} */ key) {
      const o = objects.get(key);
      return o ? { ...o, data: o.data.slice() } : null;
    },
    put(/** @type {string} */ key, /** @type {Uint8Array} */ data, /** @type {any} */ { ifMatch, ifNoneMatch, meta }) {
      const current = objects.get(key);
      if (!ignoreIfNoneMatch && ifNoneMatch === "*" && current) return null;
      if (!ignoreIfMatch && ifMatch !== undefined && current?.etag !== ifMatch) return null;
      // Quoted as an HTTP ETag header is: a store built over an HTTP API hands these out, and gets
      // them back exactly so.
      // (Flaws: `etagPerKey`, a count per key, which starts again after a delete; `etagOfBytes`, a
      // hash of the bytes, which the same bytes bring back; `firstMetaOnly`, meta cut to its first entry;
      // `dropMeta`, one named entry left out.)
      const etag = etagPerKey ? `"v${Number(current?.etag.slice(2, -1) ?? 0) + 1}"`
        : etagOfBytes ? `"h${[...data].reduce((h, b) => (h * 31 + b) >>> 0, 7)}"` : `"v${++version}"`;
      const kept = loseMeta ? {} : firstMetaOnly ? Object.fromEntries(Object.entries(meta).slice(0, 1))
        : Object.fromEntries(Object.entries(meta).filter(([name]) => name !== dropMeta));
      objects.set(key, { data: data.slice(), etag, meta: kept, lastModified: Date.now() });
      return { etag };
    },
    delete(/** @type {string} */ key, /** @type {any} */ { ifMatch }) {
      if (!ignoreDeleteIfMatch && ifMatch !== undefined && objects.get(key)?.etag !== ifMatch) return false;
      objects.delete(key);
      return true;
    },
    list(/** @type {string} */ prefix, /** @type {any} */ { startAfter, cursor }) {
      // (`offsetCursor`, a flaw: the cursor counts the entries listed before it.)
      const skip = offsetCursor ? Number(cursor ?? 0) : 0;
      const after = offsetCursor ? startAfter : cursor ?? startAfter;
      const keys = [...objects.keys()].filter((k) => k.startsWith(prefix) && (after === undefined || byBytes(k, after) > 0)).sort(byBytes).slice(skip);
      const page = keys.slice(0, pageSize);
      const entries = page.map((key) => {
        const o = /** @type {any} */ (objects.get(key));
        return { key, etag: o.etag, size: o.data.length, lastModified: o.lastModified };
      });
      const more = keys.length > pageSize;
      return { entries, cursor: !more ? undefined : offsetCursor ? String(skip + pageSize) : page[page.length - 1] };
    },
  };
}
