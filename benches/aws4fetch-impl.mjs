// BENCHMARK BASELINE, not part of fencepost: the least code a user would write to get claim, lease
// and doc over S3 with aws4fetch (https://github.com/mhart/aws4fetch), so `benches/run.mjs` can put
// fencepost's CPU per request and ops/s next to it. The same protocol (`Coord`) also runs over a JS
// Map (`benches/map-baseline.mjs`) for the memory-store comparison.
//
// Protocol (fencepost's wire protocol, docs/semantics.md: "Wire format", reduced to the happy path plus lost races):
//   claim  — PUT If-None-Match: * ; on 412 GET the winner (retry if it vanished, 8 attempts)
//   lease  — GET ; absent → PUT If-None-Match: * {epoch: 1} ; expired/released → PUT If-Match {epoch+1}
//            held → null ; renew / release → PUT If-Match (on 412: re-read, absorb a cooperative
//            write of the same period, else LeaseLost)
//   doc    — get: GET ; update: GET + If-Match PUT (If-None-Match: * when absent), 10 attempts
// Documents are canonical JSON (sorted keys, no spaces, non-ASCII as \uXXXX), timestamps
// YYYY-MM-DDTHH:MM:SS.ffffffZ, every write tagged with a random x-amz-meta token, as fencepost does.
//
// Shortcuts (so it is a fair *lower bound* of the work, not a replacement):
//   - no ambiguous-write resolution: a lost response is an error, never read back via the token;
//   - retries: only aws4fetch's own (5xx/429, `retries: 3`), which can re-send a conditional PUT
//     that had landed — fencepost's retry layer does not do that;
//   - no key validation, no Standard Schema, no AbortSignal, no keep-alive, no store clock, no
//     history of replaced tokens, no list/waitFor/cooperativeWrite/attach;
//   - aws4fetch's default for S3 signs `X-Amz-Content-Sha256: UNSIGNED-PAYLOAD` (fencepost hashes
//     every body); set BENCH_AWS4_SIGN_PAYLOAD=1 to hash it here too;
//   - canonical JSON sorts keys by UTF-16 code unit (differs from code point order only for keys
//     with astral-plane characters) and prints numbers as JS does (1e+21, not Python's 1e21).
import { randomBytes, createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";

// ----------------------------------------------------------------------------- wire format

const NON_ASCII = /[\u0080-\uffff]/g;
const escapeChar = (/** @type {string} */ c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");

/** Canonical JSON: `json.dumps(v, sort_keys=True, separators=(",", ":"))`. */
export function canonicalJson(/** @type {unknown} */ value) {
  return JSON.stringify(sortKeys(value)).replace(NON_ASCII, escapeChar);
}

function sortKeys(/** @type {any} */ v) {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(sortKeys);
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
  return out;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ` (millisecond clock, so the last three digits are 0). */
export const timestamp = (/** @type {number} */ ms) => new Date(ms).toISOString().replace("Z", "000Z");

export const randomToken = () => randomBytes(16).toString("base64url");

export class LeaseLost extends Error {
  code = "LEASE_LOST";
}

// ----------------------------------------------------------------------------- the protocol

/**
 * @typedef {{ body: string, etag: string }} Stored
 * @typedef {{
 *   get(key: string): Promise<Stored | null>,
 *   put(key: string, body: string, cond: { ifAbsent?: boolean, ifMatch?: string }): Promise<string | null>,
 * }} Objects  put → the new etag, or null when the precondition failed
 */

/** claim / lease / doc over any `Objects`. */
export class Coord {
  constructor(/** @type {Objects} */ objects, { now = Date.now } = {}) {
    this.objects = objects;
    this.now = now;
  }

  async claim(/** @type {string} */ key, /** @type {unknown} */ value) {
    const body = canonicalJson(value);
    for (let attempt = 0; attempt < 8; attempt++) {
      const etag = await this.objects.put(key, body, { ifAbsent: true });
      if (etag !== null) return { won: true, key, value, etag };
      const winner = await this.objects.get(key);
      if (winner !== null) return { won: false, key, value: JSON.parse(winner.body), etag: winner.etag };
    }
    throw new Error(`claim ${key}: the key kept vanishing`);
  }

  /** @param {string} key @param {{ttl: number, holder?: string, stealIfExpired?: boolean, stateFn?: (s: any) => any}} o */
  async lease(key, { ttl, holder = randomToken(), stealIfExpired = true, stateFn }) {
    for (let attempt = 0; attempt < 10; attempt++) {
      const got = await this.objects.get(key);
      const now = this.now();
      /** @type {any} */
      let doc;
      if (got === null) {
        doc = { epoch: 1, holder, deadline_at: timestamp(now + ttl * 1000), state: stateFn ? stateFn(null) : null };
      } else {
        const cur = JSON.parse(got.body);
        const expired = cur.holder === null || Date.parse(cur.deadline_at) <= now;
        if (!expired || (cur.holder !== null && !stealIfExpired)) return null;
        doc = { epoch: cur.epoch + 1, holder, deadline_at: timestamp(now + ttl * 1000), state: stateFn ? stateFn(cur.state) : cur.state };
      }
      const etag = await this.objects.put(key, canonicalJson(doc), got === null ? { ifAbsent: true } : { ifMatch: got.etag });
      if (etag !== null) return new BaselineLease(this, key, doc, etag, ttl);
    }
    return null;
  }

  doc(/** @type {string} */ key) {
    return new BaselineDoc(this, key);
  }
}

class BaselineLease {
  #released = false;
  constructor(/** @type {Coord} */ coord, /** @type {string} */ key, /** @type {any} */ doc, /** @type {string} */ etag, /** @type {number} */ ttl) {
    this.coord = coord;
    this.key = key;
    this.doc = doc;
    this.etag = etag;
    this.ttl = ttl;
  }

  get epoch() {
    return this.doc.epoch;
  }

  renew() {
    return this.#write((d, now) => ({ ...d, deadline_at: timestamp(now + this.ttl * 1000) }));
  }

  release(/** @type {{state?: unknown}} */ { state } = {}) {
    return this.#write((d, now) => ({ ...d, holder: null, deadline_at: timestamp(now), state: state === undefined ? d.state : state }), true);
  }

  async #write(/** @type {(d: any, now: number) => any} */ next, release = false) {
    if (this.#released) throw new LeaseLost(`lease ${this.key} was released`);
    for (let attempt = 0; attempt < 3; attempt++) {
      const doc = next(this.doc, this.coord.now());
      const etag = await this.coord.objects.put(this.key, canonicalJson(doc), { ifMatch: this.etag });
      if (etag !== null) {
        this.doc = doc;
        this.etag = etag;
        if (release) this.#released = true;
        return;
      }
      // Guard failed: same period (a cooperative write) → absorb and retry; else lost.
      const got = await this.coord.objects.get(this.key);
      const cur = got && JSON.parse(got.body);
      if (!cur || cur.epoch !== this.doc.epoch || cur.holder !== this.doc.holder) break;
      this.doc = { ...this.doc, state: cur.state };
      this.etag = /** @type {Stored} */ (got).etag;
    }
    throw new LeaseLost(`lease ${this.key} is lost`);
  }
}

class BaselineDoc {
  constructor(/** @type {Coord} */ coord, /** @type {string} */ key) {
    this.coord = coord;
    this.key = key;
  }

  async get() {
    const got = await this.coord.objects.get(this.key);
    return got === null ? null : { value: JSON.parse(got.body), etag: got.etag };
  }

  /** @param {(v: any) => any} fn @param {{create?: unknown, maxAttempts?: number}} o */
  async update(fn, { create, maxAttempts = 10 } = {}) {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const got = await this.coord.objects.get(this.key);
      if (got === null && create === undefined) throw new Error(`doc ${this.key} does not exist and no create value was given`);
      const value = fn(got === null ? structuredClone(create) : JSON.parse(got.body));
      const etag = await this.coord.objects.put(this.key, canonicalJson(value), got === null ? { ifAbsent: true } : { ifMatch: got.etag });
      if (etag !== null) return value;
    }
    throw new Error(`doc ${this.key}: ${maxAttempts} conflicting attempts`);
  }
}

// ----------------------------------------------------------------------------- S3 via aws4fetch

/**
 * `Objects` on S3 through aws4fetch (path-style URLs).
 * @param {{endpoint: string, bucket: string, region?: string, accessKeyId: string, secretAccessKey: string, prefix?: string}} o
 * @returns {Objects}
 */
export function aws4fetchObjects({ endpoint, bucket, region = "us-east-1", accessKeyId, secretAccessKey, prefix = "" }) {
  const client = new AwsClient({ accessKeyId, secretAccessKey, service: "s3", region, retries: 3 });
  const base = `${endpoint.replace(/\/+$/, "")}/${bucket}/`;
  const full = prefix ? prefix.replace(/\/*$/, "/") : "";
  const signPayload = process.env.BENCH_AWS4_SIGN_PAYLOAD === "1";
  const url = (/** @type {string} */ key) => base + (full + key).split("/").map(encodeURIComponent).join("/");
  const fail = async (/** @type {Response} */ res, /** @type {string} */ what) => {
    const text = await res.text();
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    return new Error(`${what}: HTTP ${res.status}${code ? ` ${code}` : ""}`);
  };
  return {
    async get(key) {
      const res = await client.fetch(url(key), { method: "GET", headers: { "cache-control": "no-cache" } });
      if (res.status === 404) {
        await res.arrayBuffer();
        return null;
      }
      if (!res.ok) throw await fail(res, `GET ${key}`);
      return { body: await res.text(), etag: /** @type {string} */ (res.headers.get("etag")) };
    },
    async put(key, body, { ifAbsent, ifMatch }) {
      /** @type {Record<string, string>} */
      const headers = { "content-type": "application/json", "x-amz-meta-token": randomToken() };
      if (ifAbsent) headers["if-none-match"] = "*";
      if (ifMatch !== undefined) headers["if-match"] = ifMatch;
      if (signPayload) headers["x-amz-content-sha256"] = createHash("sha256").update(body).digest("hex");
      const res = await client.fetch(url(key), { method: "PUT", headers, body });
      // 412; AWS answers If-Match on a missing key with 404 NoSuchKey.
      if (res.status === 412 || (res.status === 404 && ifMatch !== undefined)) {
        await res.arrayBuffer();
        return null;
      }
      if (!res.ok) throw await fail(res, `PUT ${key}`);
      await res.arrayBuffer();
      return /** @type {string} */ (res.headers.get("etag"));
    },
  };
}

/** claim / lease / doc over S3 via aws4fetch. */
export function aws4fetchCoord(/** @type {Parameters<typeof aws4fetchObjects>[0]} */ settings) {
  return new Coord(aws4fetchObjects(settings));
}
