// BENCHMARK BASELINE, not part of fencepost: claim / lease / doc in plain JS on a Map, the yardstick
// for fencepost's `memoryStore()` CPU per operation. Same protocol and wire format as
// `aws4fetch-impl.mjs` (`Coord`: canonical JSON bodies, an MD5 ETag and a random write token per
// write, the same request sequence), but no validation, no schema, no signal, no wasm boundary.
import { createHash } from "node:crypto";
import { Coord, randomToken } from "./aws4fetch-impl.mjs";

const md5 = (/** @type {string} */ s) => createHash("md5").update(s).digest("hex");

/** `Objects` on a JS Map, S3-like (ETag = MD5 of the body, a write token per write). */
export function mapObjects() {
  /** @type {Map<string, {body: string, etag: string, token: string}>} */
  const m = new Map();
  return {
    async get(/** @type {string} */ key) {
      return m.get(key) ?? null;
    },
    async put(/** @type {string} */ key, /** @type {string} */ body, /** @type {{ifAbsent?: boolean, ifMatch?: string}} */ { ifAbsent, ifMatch }) {
      const cur = m.get(key);
      if (ifAbsent && cur !== undefined) return null;
      if (ifMatch !== undefined && (cur === undefined || cur.etag !== ifMatch)) return null;
      const etag = md5(body);
      m.set(key, { body, etag, token: randomToken() });
      return etag;
    },
  };
}

export const mapCoord = () => new Coord(mapObjects());
