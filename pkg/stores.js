// Store handles: what `new Fencepost(store)` talks to. A handle is plain data, its recipe (kind,
// id, settings); the core builds the store from it. Only option names and types are checked here;
// the core judges the rest — the required S3 settings and their defaults, whether a value is an
// R2 binding, prefixes — once, for Rust users too.

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, options } from "./options.js";
import { RECIPE, fixedFields, handleClasses, holdsState, isReady, nextId, run, runSync } from "./binding.js";
import { customHost, r2Host } from "./host-stores.js";

/** @typedef {"memory" | "s3" | "azure" | "gcs" | "r2" | "custom" | "counting" | "fault"} Kind */

/** A store handle: pass it to `new Fencepost(store)`. Made by the store functions below. */
export class Store {
  /** What the core builds the store from. @type {Record<string, unknown>} */
  #recipe;

  /** @internal @param {Kind} kind @param {Record<string, unknown>} recipe @param {object} [shown] what inspection shows */
  constructor(kind, recipe, shown) {
    if (recipe === undefined) throw new InvalidArgument("a Store is made by memoryStore(), s3Store(), azureStore(), gcsStore(), r2Store(), customStore() or countingStore()");
    /** @readonly @type {Kind} */
    this.kind;
    // The settings shown by inspection (never a credential), each there only when given.
    /** @readonly @type {string | undefined} */
    this.endpoint;
    /** @readonly @type {string | undefined} */
    this.bucket;
    /** @readonly @type {string | undefined} */
    this.region;
    /** @readonly @type {string | undefined} */
    this.account;
    /** @readonly @type {string | undefined} */
    this.container;
    /** @readonly @type {string | undefined} */
    this.prefix;
    /** The store a counting or fault store wraps. @readonly @type {Store | undefined} */
    this.inner;
    fixedFields(this, { kind, ...shown });
    const id = nextId();
    this.#recipe = { ...recipe, kind, id };
    // Memory and fault stores are state the core holds for this handle.
    if (STATEFUL.has(kind)) holdsState(this, id);
    // Bad settings throw here where the wasm is loaded (else from the first call).
    if (isReady()) runSync("store.open", this.#recipe);
  }

  /** @internal */
  get [RECIPE]() {
    return this.#recipe;
  }

  /** Requests made so far, per operation (`countingStore` and `faultStore` only). */
  requestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("requestCounts() needs a countingStore() or a faultStore()");
    const { get, put, delete: del, list } = this.#counting();
    return { get, put, delete: del, list, total: get + put + del + list };
  }

  /** Start counting again from zero (`countingStore` only). */
  resetRequestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("resetRequestCounts() needs a countingStore() or a faultStore()");
    this.#counting(true);
  }

  /** @returns {{get: number, put: number, delete: number, list: number}} */
  #counting(reset = false) {
    // A counting store's counts are this handle's own array, which the core adds to.
    const counts = /** @type {number[] | undefined} */ (this.#recipe.counts);
    if (counts) {
      const [get, put, del, list] = counts;
      if (reset) counts.fill(0);
      return { get, put, delete: del, list };
    }
    if (!isReady()) return { get: 0, put: 0, delete: 0, list: 0 }; // nothing can have been sent before the core was loaded
    return runSync("store.counts", this.#recipe, { args: { reset } }).json;
  }
}
handleClasses({ Store });

const COUNTED = new Set(["counting", "fault"]);
const STATEFUL = new Set(["memory", "fault"]);

/** The settings inspection shows: those given (the defaults are the core's). */
function shown(/** @type {Record<string, unknown>} */ settings) {
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v != null));
}

/**
 * An in-memory store: tests, demos, the browser harness. Behaves like S3 (ETag = a digest of the body).
 * @param {unknown} [opts]
 */
export function memoryStore(opts) {
  // It has no options: a name given is a mistake, said so as for every other call.
  options(opts, {}, "memoryStore options");
  return new Store("memory", {});
}

/** The credentials of each store's settings, kept off the object the handle holds. */
const CREDENTIALS = new WeakMap();
/** Reads a credential where the core asks the settings for it. */
const READ_CREDENTIALS = {
  get(/** @type {Record<string, unknown>} */ open, /** @type {string | symbol} */ name) {
    const hidden = CREDENTIALS.get(open);
    return hidden !== undefined && Object.hasOwn(hidden, name) ? hidden[name] : open[/** @type {string} */ (name)];
  },
};

/**
 * `given` as the core reads it, its credentials (`names`) out of sight: a browser's console lists
 * a handle's private fields, and through them its recipe's settings, but not what a module-level
 * WeakMap holds for them, nor a Proxy's answers (it shows the Proxy's target: the other settings).
 * @param {Record<string, unknown>} given @param {string[]} names
 */
function hidingCredentials(given, names) {
  /** @type {Record<string, unknown>} */
  const open = {};
  /** @type {Record<string, unknown>} */
  const hidden = {};
  for (const [name, value] of Object.entries(given)) (names.includes(name) ? hidden : open)[name] = value;
  CREDENTIALS.set(open, hidden);
  return new Proxy(open, READ_CREDENTIALS);
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
  return new Store("s3", { settings: hidingCredentials(given, ["accessKeyId", "secretAccessKey", "sessionToken"]) },
    shown({ endpoint, bucket, region, prefix }));
}

const AZURE_OPTIONS = /** @type {const} */ ({
  account: "string", container: "string", accountKey: "string", sasToken: "string", endpoint: "string",
  prefix: "string", timeout: "number",
});

/** An Azure Blob Storage store over `fetch`: a container, Shared Key (the account key) or a SAS token. */
export function azureStore(/** @type {any} */ settings) {
  if (settings === undefined || settings === null) {
    throw new InvalidArgument("azureStore needs an options object {account, container, accountKey | sasToken, ...}");
  }
  const given = { ...options(settings, AZURE_OPTIONS, "azureStore options") };
  const { account, container, endpoint, prefix } = given;
  return new Store("azure", { settings: hidingCredentials(given, ["accountKey", "sasToken"]) },
    shown({ account, container, endpoint, prefix }));
}

const GCS_OPTIONS = /** @type {const} */ ({
  bucket: "string", accessToken: "string", getAccessToken: "function", credentials: "any", endpoint: "string",
  prefix: "string", timeout: "number", conditionalDelete: "boolean",
});

/**
 * A Google Cloud Storage store over `fetch` (the JSON API). Authorized by an OAuth `accessToken`, a
 * `getAccessToken()` function returning one (or a Promise of one), or a service account's JSON key
 * (`credentials`, an object or its text): its tokens are signed with this runtime's WebCrypto and
 * renewed by the core before they expire.
 */
export function gcsStore(/** @type {any} */ settings) {
  if (settings === undefined || settings === null) {
    throw new InvalidArgument("gcsStore needs an options object {bucket, accessToken | getAccessToken | credentials, ...}");
  }
  const { credentials, ...rest } = options(settings, GCS_OPTIONS, "gcsStore options");
  const given = { ...rest, serviceAccount: credentials == null ? undefined : serviceAccount(credentials) };
  const { bucket, endpoint, prefix } = given;
  return new Store("gcs", { settings: hidingCredentials(given, ["accessToken", "getAccessToken", "serviceAccount"]) },
    shown({ bucket, endpoint, prefix }));
}

/**
 * A service account key file (object or JSON text) as the core takes it: who it is, where its
 * tokens come from, and `sign`, RS256 with its private key through WebCrypto (imported on first use).
 * @param {unknown} credentials
 */
function serviceAccount(credentials) {
  /** @type {any} */
  let key = credentials;
  if (typeof key === "string") {
    try {
      key = JSON.parse(key);
    } catch {
      throw new InvalidArgument("gcsStore options.credentials must be a service account key (its JSON object or text)");
    }
  }
  const fields = ["client_email", "private_key"];
  if (typeof key !== "object" || key === null || fields.some((f) => typeof key[f] !== "string")) {
    throw new InvalidArgument("gcsStore options.credentials needs client_email and private_key (a service account key)");
  }
  const pem = /** @type {string} */ (key.private_key);
  /** @type {Promise<CryptoKey> | undefined} */
  let imported;
  const signingKey = () =>
    (imported ??= crypto.subtle.importKey("pkcs8", pemBytes(pem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false,
      ["sign"]));
  return {
    clientEmail: key.client_email,
    tokenUri: typeof key.token_uri === "string" ? key.token_uri : "https://oauth2.googleapis.com/token",
    privateKeyId: typeof key.private_key_id === "string" ? key.private_key_id : undefined,
    /** @param {Uint8Array<ArrayBuffer>} message */
    sign: async (message) => crypto.subtle.sign("RSASSA-PKCS1-v1_5", await signingKey(), message),
  };
}

/** The DER bytes of a PEM block (`-----BEGIN PRIVATE KEY-----` … base64 … `-----END …`). @param {string} pem */
function pemBytes(pem) {
  const base64 = pem.replace(/-----(BEGIN|END)[^-]*-----/g, "").replace(/\s+/g, "");
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

const JS_STORE_OPTIONS = /** @type {const} */ ({ prefix: "string", timeout: "number" });

/** A store on a Workers R2 binding (`env.BUCKET`), with an optional key prefix. @param {any} bucket @param {any} [settings] */
export function r2Store(bucket, settings) {
  const { prefix, timeout } = options(settings, JS_STORE_OPTIONS, "r2Store options");
  return new Store("r2", { host: r2Host(bucket), prefix: prefix ?? undefined, timeout }, shown({ prefix }));
}

/**
 * Your own store: an object with `get`, `put`, `delete` and `list` (see the `CustomStoreImpl`
 * type) honouring create-only (`ifNoneMatch: "*"`) and compare-and-swap (`ifMatch`) atomically,
 * and keeping `meta`. Every request gets the core's retries, read-backs, counting and events, and
 * a `signal` aborted when the attempt is abandoned (after `timeout` seconds, default 30, or a cancel).
 * @param {any} impl @param {any} [settings]
 */
export function customStore(impl, settings) {
  const { prefix, timeout } = options(settings, JS_STORE_OPTIONS, "customStore options");
  return new Store("custom", { host: customHost(impl), prefix: prefix ?? undefined, timeout }, shown({ prefix }));
}

/**
 * Wrap a store to count requests per operation: every request costs a Workers subrequest.
 * @param {any} store @param {unknown} [opts]
 */
export function countingStore(store, opts) {
  options(opts, {}, "countingStore options");
  const inner = toStore(store);
  // The counts, `[get, put, delete, list]`: plain data of this handle, which the core adds to
  // through `count` (so the core keeps nothing for it).
  const counts = [0, 0, 0, 0];
  return new Store("counting", { inner: inner[RECIPE], counts, count: (/** @type {number} */ i) => counts[i]++ }, { inner });
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
  return (await run("checkStore", s[RECIPE], { signal })).json;
}
