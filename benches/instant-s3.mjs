// An instant, in-process S3 for benchmarks: a `fetch` that answers from memory, so a store's CPU per
// request can be measured with no network, no sockets and no server in the figures.
//
// Enough of the S3 API for claim / lease / doc: GetObject, PutObject (If-None-Match: *, If-Match →
// 412), DeleteObject (If-Match), ListObjectsV2 (prefix, continuation-token, max-keys). ETag = "md5 of
// the body", x-amz-meta-* headers stored and echoed, a Date header, 404 NoSuchKey with an XML body.
// Path-style URLs (`http://host/bucket/key`); signatures are not checked. Answers are real `Response`
// objects (what undici's fetch hands back), so a client's cost of reading headers and body counts.
//
// Accepts both calling shapes: `fetch(url, {method, headers, body})` (headers as pairs, a Headers or
// a record; fencepost's wasm passes pairs and a Uint8Array) and `fetch(request)` (aws4fetch).
// `record()` logs every call so `replay()` can send exactly the same requests with no library in
// between: the "raw fetch floor" a library's CPU is compared with.
import { createHash } from "node:crypto";

const encoder = new TextEncoder();
const md5 = (/** @type {Uint8Array} */ b) => createHash("md5").update(b).digest("hex");
const xmlEscape = (/** @type {string} */ s) =>
  s.replace(/[<>&'"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;" })[c] ?? c);

/**
 * @typedef {{ body: Uint8Array, etag: string, meta: [string, string][], contentType: string, lastModified: string }} Obj
 * @typedef {{ kind: "init" | "request", url: string, init: any, status: number }} Logged
 */

export class InstantS3 {
  /** @type {Map<string, Obj>} bucket/key → object (entries are replaced, never mutated) */
  objects = new Map();
  calls = 0;
  /** @type {Logged[] | null} */
  log = null;
  /** @type {typeof fetch | undefined} */
  #saved;
  #dateSecond = -1;
  #date = "";
  #requestId = 0;

  /** The fake `fetch` (bound: can be handed around). */
  fetch = (/** @type {any} */ input, /** @type {any} */ init) => this.#handle(input, init);

  /** Replace `globalThis.fetch` until `uninstall()`. */
  install() {
    this.#saved = globalThis.fetch;
    globalThis.fetch = /** @type {any} */ (this.fetch);
    return this;
  }

  uninstall() {
    if (this.#saved) globalThis.fetch = this.#saved;
    this.#saved = undefined;
  }

  snapshot() {
    return new Map(this.objects);
  }

  restore(/** @type {Map<string, Obj>} */ snapshot) {
    this.objects = new Map(snapshot);
  }

  record() {
    this.log = [];
  }

  /** Stop recording; the calls made since `record()`. */
  stop() {
    const log = this.log ?? [];
    this.log = null;
    return log;
  }

  async #handle(/** @type {any} */ input, /** @type {any} */ init) {
    this.calls++;
    /** @type {string} */ let url;
    /** @type {string} */ let method;
    /** @type {Record<string, string>} */ const headers = Object.create(null);
    /** @type {Uint8Array | undefined} */ let body;
    /** @type {Logged | undefined} */ let logged;
    if (typeof input === "string" || input instanceof URL) {
      url = String(input);
      method = (init?.method ?? "GET").toUpperCase();
      const h = init?.headers;
      if (h) for (const [k, v] of Array.isArray(h) || h instanceof Headers ? h : Object.entries(h)) headers[k.toLowerCase()] = v;
      body = toBytes(init?.body);
      if (this.log) logged = { kind: "init", url, init, status: 0 };
    } else {
      url = input.url;
      method = input.method;
      for (const [k, v] of input.headers) headers[k] = v;
      if (method !== "GET" && method !== "HEAD") body = new Uint8Array(await input.arrayBuffer());
      if (this.log) logged = { kind: "request", url, init: { method, headers: Object.entries(headers), body }, status: 0 };
    }
    const response = this.#answer(url, method, headers, body ?? new Uint8Array(0));
    if (logged) {
      logged.status = response.status;
      /** @type {Logged[]} */ (this.log).push(logged);
    }
    return response;
  }

  #answer(/** @type {string} */ url, /** @type {string} */ method, /** @type {Record<string, string>} */ h, /** @type {Uint8Array} */ body) {
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const queryStart = url.indexOf("?", pathStart);
    const path = pathStart < 0 ? "/" : url.slice(pathStart, queryStart < 0 ? undefined : queryStart);
    const query = queryStart < 0 ? "" : url.slice(queryStart + 1);
    const slash = path.indexOf("/", 1);
    const bucket = slash < 0 ? path.slice(1) : path.slice(1, slash);
    const key = slash < 0 ? "" : decodeURIComponent(path.slice(slash + 1));
    if (key === "") {
      if (method === "GET" && /(^|&)list-type=2(&|$)/.test(query)) return this.#list(bucket, new URLSearchParams(query));
      return this.#error(400, "InvalidRequest", "only object requests and ListObjectsV2 are modelled");
    }
    const id = `${bucket}/${key}`;
    const cur = this.objects.get(id);
    switch (method) {
      case "GET":
      case "HEAD": {
        if (!cur) return this.#error(404, "NoSuchKey", "The specified key does not exist.");
        const headers = this.#headers(cur.etag, cur.body.length, cur.contentType);
        headers.push(["last-modified", cur.lastModified]);
        for (const pair of cur.meta) headers.push(pair);
        return new Response(method === "HEAD" ? null : cur.body, { status: 200, headers });
      }
      case "PUT": {
        if (h["if-none-match"] === "*" && cur) return this.#error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold");
        const ifMatch = h["if-match"];
        if (ifMatch !== undefined && (!cur || !etagMatches(ifMatch, cur.etag))) {
          return this.#error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold");
        }
        /** @type {[string, string][]} */
        const meta = [];
        for (const k in h) if (k.startsWith("x-amz-meta-")) meta.push([k, h[k]]);
        const etag = `"${md5(body)}"`;
        this.objects.set(id, { body: body.slice(), etag, meta, contentType: h["content-type"] ?? "binary/octet-stream", lastModified: this.#dateHeader() });
        return new Response(null, { status: 200, headers: this.#headers(etag, 0, undefined) });
      }
      case "DELETE": {
        const ifMatch = h["if-match"];
        if (ifMatch !== undefined && (!cur || !etagMatches(ifMatch, cur.etag))) {
          return this.#error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold");
        }
        this.objects.delete(id);
        return new Response(null, { status: 204, headers: this.#headers(undefined, 0, undefined) });
      }
      default:
        return this.#error(405, "MethodNotAllowed", `${method} is not modelled`);
    }
  }

  #list(/** @type {string} */ bucket, /** @type {URLSearchParams} */ q) {
    const prefix = q.get("prefix") ?? "";
    const after = q.get("continuation-token") ? Buffer.from(/** @type {string} */ (q.get("continuation-token")), "base64url").toString() : (q.get("start-after") ?? "");
    const max = Math.min(Number(q.get("max-keys") ?? 1000), 1000);
    const full = `${bucket}/${prefix}`;
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(full)).map((k) => k.slice(bucket.length + 1)).filter((k) => k > after).sort();
    const page = keys.slice(0, max);
    const truncated = keys.length > max;
    const contents = page
      .map((k) => {
        const o = /** @type {Obj} */ (this.objects.get(`${bucket}/${k}`));
        return `<Contents><Key>${xmlEscape(k)}</Key><LastModified>${new Date(o.lastModified).toISOString()}</LastModified><ETag>${xmlEscape(o.etag)}</ETag><Size>${o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      })
      .join("");
    const next = truncated ? `<NextContinuationToken>${Buffer.from(page[page.length - 1]).toString("base64url")}</NextContinuationToken>` : "";
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${xmlEscape(bucket)}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${next}${contents}</ListBucketResult>`;
    const bytes = encoder.encode(xml);
    return new Response(bytes, { status: 200, headers: this.#headers(undefined, bytes.length, "application/xml") });
  }

  #error(/** @type {number} */ status, /** @type {string} */ code, /** @type {string} */ message) {
    const bytes = encoder.encode(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message><RequestId>${this.#requestId}</RequestId></Error>`);
    return new Response(bytes, { status, headers: this.#headers(undefined, bytes.length, "application/xml") });
  }

  /** What every S3 response carries. */
  #headers(/** @type {string | undefined} */ etag, /** @type {number} */ length, /** @type {string | undefined} */ contentType) {
    /** @type {[string, string][]} */
    const headers = [
      ["date", this.#dateHeader()],
      ["server", "InstantS3"],
      ["x-amz-request-id", String(++this.#requestId)],
      ["content-length", String(length)],
    ];
    if (contentType) headers.push(["content-type", contentType]);
    if (etag) headers.push(["etag", etag], ["accept-ranges", "bytes"]);
    return headers;
  }

  #dateHeader() {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.#dateSecond) {
      this.#dateSecond = second;
      this.#date = new Date(second * 1000).toUTCString();
    }
    return this.#date;
  }
}

function etagMatches(/** @type {string} */ header, /** @type {string} */ etag) {
  if (header.trim() === "*") return true;
  const bare = etag.replace(/"/g, "");
  return header.split(",").some((e) => e.trim().replace(/^W\//, "").replace(/"/g, "") === bare);
}

function toBytes(/** @type {unknown} */ body) {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError("InstantS3: unsupported body type");
}

/**
 * Pre-build the inputs of a recorded run, in the shape the library passed them: `(url, init)` as
 * recorded, or a fresh `Request` (single-use) for each `fetch(request)` call.
 * @param {Logged[]} log
 * @returns {[any, any][]}
 */
export function prebuild(log) {
  return log.map((c) => (c.kind === "init" ? [c.url, c.init] : [new Request(c.url, c.init), undefined]));
}

/**
 * The raw fetch floor: send pre-built calls one after another and read each body, as any client
 * must; no library in between. Resolves to the number of answers whose status differs from `log`.
 * @param {InstantS3} s3 @param {[any, any][]} calls @param {Logged[]} log
 */
export async function replay(s3, calls, log) {
  let mismatches = 0;
  for (let i = 0; i < calls.length; i++) {
    const res = await s3.fetch(calls[i][0], calls[i][1]);
    await res.arrayBuffer();
    if (res.status !== log[i].status) mismatches++;
  }
  return mismatches;
}
