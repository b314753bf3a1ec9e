/// <reference lib="esnext.disposable" />
// Type declarations for fencepost. Every duration is in seconds. The error classes' types are
// generated from `errors.js` (see `errors.d.ts`).

export {
  FencepostError, FencepostErrorCode, LeaseLost, LostReason, ConflictError, StorageError, AmbiguousWriteError,
  InvalidArgument, TimeoutError, NotFoundError, CorruptObjectError,
} from "./errors.js";

/** Any value JSON can carry. Numbers must be finite; BigInt, functions, cycles are rejected. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * `T` if it is JSON-shaped: interfaces and type aliases alike (no index signature needed), `Date`s
 * (written through `toJSON`), optional properties. Functions, symbols and `bigint`s map to `never`,
 * so passing them is a type error (and an `InvalidArgument` at run time).
 */
export type JsonSafe<T> = T extends Json | undefined | Date
  ? T // already JSON (this branch also keeps `JsonSafe<Json>` from recursing without end)
  : T extends (...args: any[]) => any
    ? never
    : T extends bigint | symbol
      ? never
      : { [K in keyof T]: JsonSafe<T[K]> };

/**
 * What a value of type `T` reads back as once stored: JSON, so a `Date` (written through its
 * `toJSON`) comes back as its ISO string. `T` itself when it holds no `Date`.
 */
export type Stored<T> = T extends Date
  ? string
  : T extends Json | undefined
    ? T
    : { [K in keyof T]: Stored<T[K]> };

/** A Standard Schema (zod ≥ 3.24, valibot ≥ 1, arktype ≥ 2…): validated on read and before write. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) =>
      | { readonly value: Output; readonly issues?: undefined }
      | { readonly issues: ReadonlyArray<{ readonly message: string }> }
      | Promise<
          | { readonly value: Output; readonly issues?: undefined }
          | { readonly issues: ReadonlyArray<{ readonly message: string }> }
        >;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

type Awaitable<T> = T | PromiseLike<T>;

/** Every async method takes these. */
export interface CallOptions {
  /** Abort the call: waits and retries stop at once; a write in flight is resolved by read-back first. */
  signal?: AbortSignal;
}

/**
 * Instantiate the wasm core yourself — only needed in browsers when the `.wasm` is not served next to
 * the package's `browser.js` (pass the URL your bundler gave `fencepost/fencepost_bg.wasm`, a
 * `Response`, bytes or a `WebAssembly.Module`). Otherwise it is loaded on first use. Idempotent.
 */
export declare function initWasm(source?: string | URL | Response | ArrayBuffer | ArrayBufferView | WasmModule): Promise<void>;

/**
 * A compiled `WebAssembly.Module`, named without the DOM library's `WebAssembly` namespace (which a
 * Node-only project's `lib` does not have): that type where it is declared, else any object.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: any) => infer M } } ? M : object;

// ------------------------------------------------------------------------------------ stores

/** A store handle, made by the functions below. */
export declare class Store {
  protected constructor();
  readonly kind: "memory" | "s3" | "azure" | "gcs" | "r2" | "custom" | "counting" | "fault";
  /** The settings it was made with, as shown by inspection (never a credential): S3, Azure, GCS. */
  readonly endpoint?: string;
  readonly bucket?: string;
  readonly region?: string;
  readonly account?: string;
  readonly container?: string;
  readonly prefix?: string;
  /** The store a `countingStore` or `faultStore` wraps. */
  readonly inner?: Store;
  /** Requests made so far, per operation (only for `countingStore` and `faultStore`; others throw `InvalidArgument`). */
  requestCounts(): { get: number; put: number; delete: number; list: number; total: number };
  resetRequestCounts(): void;
}

/** An in-memory store (tests, demos, browser harnesses). Behaves like S3: its ETag is a digest of the body (identical bytes, identical etags, as S3's MD5). */
export declare function memoryStore(): Store;

export interface S3StoreOptions {
  /** e.g. "https://s3.us-east-1.amazonaws.com", "https://<account>.r2.cloudflarestorage.com", "http://127.0.0.1:8333" */
  endpoint: string;
  bucket: string;
  /** Default "us-east-1" (R2 accepts "auto"). */
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Key prefix: key `k` is stored at `prefix/k`, as CairnDB does. */
  prefix?: string;
  /** Path-style URLs (default true); false for virtual-hosted `bucket.host`. */
  forcePathStyle?: boolean;
  /** Seconds per attempt (default 30): a request with no answer by then is a transport error (a write is then resolved by read-back). */
  timeout?: number;
}

/** An S3-API store over `fetch`, SigV4-signed. */
export declare function s3Store(options: S3StoreOptions): Store;

export interface AzureStoreOptions {
  /** The storage account name (`devstoreaccount1` on Azurite). */
  account: string;
  container: string;
  /** The account key (base64, as the portal shows it): Shared Key authorization. */
  accountKey?: string;
  /** Or a SAS token (with or without its leading `?`) granting read, write, delete and list. */
  sasToken?: string;
  /** Default `https://<account>.blob.core.windows.net`; Azurite: `http://127.0.0.1:10000/devstoreaccount1`. */
  endpoint?: string;
  /** Key prefix: key `k` is stored at `prefix/k`. */
  prefix?: string;
  /** Seconds per attempt (default 30). */
  timeout?: number;
}

/** An Azure Blob Storage store over `fetch` (block blobs; `If-None-Match: *` / `If-Match`). */
export declare function azureStore(options: AzureStoreOptions): Store;

/** A service account's JSON key file, as Google hands it out (the fields gcsStore reads). */
export interface GcsServiceAccountKey {
  client_email: string;
  /** PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). */
  private_key: string;
  private_key_id?: string;
  /** Default `https://oauth2.googleapis.com/token`. */
  token_uri?: string;
  [field: string]: unknown;
}

export interface GcsStoreOptions {
  bucket: string;
  /** A fixed OAuth access token. */
  accessToken?: string;
  /** Or a function giving one (or a Promise of one), asked before each request. */
  getAccessToken?: () => string | Promise<string>;
  /** Or a service account key (object or JSON text): tokens signed with WebCrypto, renewed before they expire. */
  credentials?: GcsServiceAccountKey | string;
  /** Default `https://storage.googleapis.com`; fake-gcs-server: `http://127.0.0.1:4443`. */
  endpoint?: string;
  /** Key prefix: key `k` is stored at `prefix/k`. */
  prefix?: string;
  /** Seconds per attempt (default 30). */
  timeout?: number;
  /**
   * Whether the service honours `ifGenerationMatch` on DELETE: default true for `*.googleapis.com`,
   * false for other endpoints (fake-gcs-server ignores it; deletes then re-read first, as on R2).
   */
  conditionalDelete?: boolean;
}

/** A Google Cloud Storage store over `fetch` (JSON API; the etag is the object generation). */
export declare function gcsStore(options: GcsStoreOptions): Store;

/** Minimal shape of a Workers R2 binding (`env.BUCKET`). */
export interface R2BucketLike {
  get(key: string, ...rest: any[]): Promise<unknown>;
  put(key: string, value: any, ...rest: any[]): Promise<unknown>;
  delete(keys: any, ...rest: any[]): Promise<unknown>;
  list(...rest: any[]): Promise<unknown>;
  head(key: string, ...rest: any[]): Promise<unknown>;
}

/** The options of the stores written in JS (`r2Store`, `customStore`). */
export interface JsStoreOptions {
  /** Key prefix: key `k` is stored at `prefix/k`. */
  prefix?: string;
  /** Seconds per attempt (default 30): a call with no answer by then is abandoned (its `signal` aborted) and counts as a transport error. */
  timeout?: number;
}

/** A store on a Workers R2 binding. */
export declare function r2Store(bucket: R2BucketLike, options?: JsStoreOptions): Store;

/** An object as a custom store's `get` answers it. */
export interface CustomStoreObject {
  /** The bytes as written (a string is read as UTF-8). */
  data: Uint8Array | ArrayBuffer | ArrayBufferView | string;
  /** The version's etag: any non-empty string that changes with every write of the key and never comes back (not after a delete either). */
  etag: string;
  /** The `meta` given to the `put` that wrote this version, unchanged (fencepost's write tokens). */
  meta: Record<string, string>;
  lastModified?: Date | number | string;
}

/** One entry of a custom store's `list` page. */
export interface CustomStoreEntry {
  key: string;
  etag: string;
  size: number;
  lastModified?: Date | number | string;
}

/**
 * Your own store for `customStore`. Each method may return a Promise; a thrown error (or rejection)
 * becomes a `StorageError`, retried when it has `retryable: true` (its `code` and `status` kept).
 * `signal` aborts when fencepost abandons the attempt (its timeout or the caller's cancel).
 */
export interface CustomStoreImpl {
  /** The object at `key`, or null when there is none. */
  get(key: string, options: { signal?: AbortSignal }): CustomStoreObject | null | Promise<CustomStoreObject | null>;
  /**
   * Write `data` at `key` with `meta` (a record of strings, at most 2 KB, to be returned by `get`),
   * atomically under the condition: `ifNoneMatch: "*"` only if the key is absent, `ifMatch` only if
   * its etag is that one. `{etag}` of the new version, or null when the condition was refused.
   */
  put(key: string, data: Uint8Array, options: { ifMatch?: string; ifNoneMatch?: "*"; meta: Record<string, string>; signal?: AbortSignal }):
    { etag: string } | null | Promise<{ etag: string } | null>;
  /** Delete `key` (a missing key is no error); with `ifMatch`, only while its etag is that one: false when it was not. */
  delete(key: string, options: { ifMatch?: string; signal?: AbortSignal }): boolean | Promise<boolean>;
  /** Keys under `prefix` in ascending order of their UTF-8 bytes (as S3 lists them), after `startAfter`, a page at a time; `cursor` (when a page has one) asks for the next page. A cursor is a place in the key order, not an offset. */
  list(prefix: string, options: { startAfter?: string; cursor?: string; signal?: AbortSignal }):
    { entries: CustomStoreEntry[]; cursor?: string } | Promise<{ entries: CustomStoreEntry[]; cursor?: string }>;
}

/** Your own store: any object with `get`, `put`, `delete` and `list` as `CustomStoreImpl` describes. */
export declare function customStore(impl: CustomStoreImpl, options?: JsStoreOptions): Store;

/** Deno KV (`await Deno.openKv()`) as a store: atomic checks on versionstamps; values up to 64 KiB. */
export declare function denoKvStore(kv: unknown, options?: JsStoreOptions & {
  /** The KV key parts every fencepost key goes under (default `["fencepost"]`). */
  namespace?: readonly (string | number | bigint | boolean | Uint8Array)[];
}): Store;

/** A Durable Object's storage (`ctx.storage`) as a store, used from inside that object: one object's storage for a whole key space. */
export declare function durableObjectStore(storage: unknown, options?: JsStoreOptions): Store;

/** Wrap a store to count requests per operation (each one is a Workers subrequest). */
export declare function countingStore(store: Store | R2BucketLike): Store;

/** One check of `checkStore`. */
export interface StoreCheckResult {
  name: string;
  ok: boolean;
  /** A required check failing makes the store unfit for fencepost; the others inform. */
  required: boolean;
  detail: string;
}

/**
 * Does `store` honour what fencepost relies on? Required: create-only refused on an existing key,
 * `If-Match` refused with a stale etag and on a missing key, one winner of a 16-way create race,
 * write tokens round-trip, a written key is listed. Informational: conditional DELETE, the store
 * clock's offset. Writes only under `__fencepost_check/<random>/` and deletes what it wrote.
 */
export declare function checkStore(store: Store | R2BucketLike, options?: CallOptions): Promise<{ ok: boolean; checks: StoreCheckResult[] }>;

// ------------------------------------------------------------------------------------ Fencepost

export interface FencepostOptions {
  /** Retries of transient store failures: exponential backoff with full jitter. */
  retry?: { maxAttempts?: number; baseDelay?: number; maxDelay?: number };
  /** Where "now" comes from (ms since the epoch, or a Date); default `Date.now`. */
  now?: () => number | Date;
  /**
   * Whose time lease deadlines are written and judged in: `"local"` (default: `now`), or `"store"`:
   * `now` corrected by the offset the S3 store's `Date` headers show, so a client whose clock is
   * minutes off neither steals a live lease nor writes deadlines others see as expired. Stores
   * without a `Date` (R2 binding, memory) use the local clock.
   */
  clock?: "local" | "store" | import("./testing.js").ManualClock;
  /**
   * Hears every request, every call's end and every lease transition, synchronously (keep it
   * quick; queue the work). What it throws is dropped: it never changes a call's outcome.
   */
  onEvent?: (event: FencepostEvent) => void;
}

/** One request to the store (each attempt of a retried request is one). */
export interface RequestEvent {
  type: "request";
  op: "get" | "put" | "delete" | "list";
  /** The key (the prefix for a list). */
  key: string;
  /** The HTTP status, or what it would be for stores without HTTP (200; 404 missing; 412 condition refused; 204 delete); null when no answer came. */
  status: number | null;
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  ms: number;
  /** "ok", "absent", "not-modified" (a conditional read of an unchanged key: 304), "refused", "abandoned" (cancelled in flight), or the failure's kind: "transient", "conflict", "indeterminate", "fatal". */
  outcome: "ok" | "absent" | "not-modified" | "refused" | "abandoned" | "transient" | "conflict" | "indeterminate" | "fatal";
}

/** A call of the API ended. */
export interface CallEvent {
  type: "call";
  /** "claim", "lease", "withLease", "attachLease", "cooperativeWrite", "inspect", "breakLease", "prune", "once", "watch" (one per item it yields), "doc.get", "doc.update", "doc.delete", "counter.add", "counter.value", "lease.renew", "lease.write", "lease.updateState", "lease.release", "semaphore.acquire", "semaphore.withPermit", "semaphore.holders", "objects.get", "objects.put", "objects.delete", "objects.list", "objects.entries" (one per page), "objects.waitFor". */
  method: string;
  /** The key (the prefix for prune, objects.list and objects.entries). */
  key: string;
  /** Requests the call made, all of them: a call holding a lease throughout (withLease, once, withPermit) counts its acquisition, renewals, the writes through the lease and the release. */
  requests: number;
  ms: number;
  /** "ok", or the error's `code` ("ABORTED" when cancelled by its signal, "CALLBACK" when a callback — a transition, a withLease function — failed with an error other than fencepost's own). */
  outcome: "ok" | import("./errors.js").FencepostErrorCode | "ABORTED" | "CALLBACK";
}

/** A lease changed hands or state, as this process saw it. */
export interface LeaseEvent {
  type: "lease";
  key: string;
  /** The period's epoch (for "broken": the epoch written). */
  epoch: number;
  action: "acquired" | "renewed" | "released" | "lost" | "broken";
  /** With "lost": why the period ended. */
  reason?: "released" | "expired" | "stolen" | "deleted";
}

export type FencepostEvent = RequestEvent | CallEvent | LeaseEvent;

export interface ClaimResult<T> {
  /** True for exactly one caller. */
  won: boolean;
  key: string;
  /** The winner's value (yours if you won), as stored: a `Date` in it reads back as its ISO string. */
  value: Stored<T>;
  etag: string;
}

export interface LeaseOptions extends CallOptions {
  /** Seconds, > 0. */
  ttl: number;
  /** Default: a fresh random 128-bit URL-safe token. Knowing it lets you `attachLease`. */
  holder?: string;
  /** Take over an expired (or released) lease; default true. */
  stealIfExpired?: boolean;
  /** Seconds to keep trying while it is held by someone else (backoff with jitter, a release is noticed within about a second); then `null`. */
  wait?: number;
}

export interface WithLeaseOptions extends LeaseOptions {
  /** Acquisition as a transition (see `LeaseOptionsWithState`); its type is `withLease`'s own. */
  stateFn?: (state: any) => any;
  /** Keep-alive interval, seconds (default ttl/3). */
  every?: number;
}

/** What `lease.keepAlive()` returns. */
export interface KeepAlive {
  /** Stop renewing; resolves once a renewal in flight has settled. */
  stop(): Promise<void>;
}

export interface LeaseOptionsWithState<S> extends LeaseOptions {
  /** Acquisition as a transition: gets the previous state (null when fresh), returns the new one. Pure; may run more than once. Throw to refuse. */
  stateFn: (state: S | null) => Awaitable<JsonSafe<S>>;
}

export declare class Fencepost {
  constructor(store: Store | R2BucketLike, options?: FencepostOptions);
  /** The store this instance talks to. */
  readonly store: Store;
  /** Put-if-absent: exactly one caller wins; losers get the winner's value. 1 request won, 2 lost. */
  claim<T>(key: string, value: JsonSafe<T>, options?: CallOptions): Promise<ClaimResult<T>>;
  /** Acquire, or null when held by someone else. 2 requests to acquire, 1 when held. */
  lease<S>(key: string, options: LeaseOptionsWithState<S>): Promise<Lease<S> | null>;
  /** Without `stateFn`, a fresh lease's state is null (a steal keeps the previous state). */
  lease<S = Json>(key: string, options: LeaseOptions & { stateFn?: undefined }): Promise<Lease<S | null> | null>;
  /**
   * Acquire (waiting up to `wait`), keep the lease alive while `fn(lease, signal)` runs, release it
   * when `fn` settles (also when it throws). `null` without calling `fn` when not acquired. `signal`
   * aborts when the lease is lost (or the caller's `signal` aborts); `fn` runs to its end, then the
   * call rejects with `fn`'s error, else with the `LeaseLost` if the lease was lost meanwhile, else
   * with a failed release's error.
   */
  withLease<S, R = unknown>(
    key: string,
    options: WithLeaseOptions & { stateFn: (state: S | null) => Awaitable<JsonSafe<S>> },
    fn: (lease: Lease<S>, signal: AbortSignal) => Awaitable<R>,
  ): Promise<R | null>;
  /** Without `stateFn`, a fresh lease's state is null (a steal keeps the previous state). */
  withLease<S = Json, R = unknown>(
    key: string,
    options: WithLeaseOptions & { stateFn?: undefined },
    fn: (lease: Lease<S | null>, signal: AbortSignal) => Awaitable<R>,
  ): Promise<R | null>;
  /** Change a lease's state from outside, without fencing the holder. null if there is no lease. */
  cooperativeWrite<S = Json>(key: string, fn: (state: S | null) => Awaitable<JsonSafe<S>>, options?: CallOptions): Promise<S | null>;
  /** A handle on `holder`'s current period (one read, no write), or null. */
  attachLease<S = Json>(key: string, options: { holder: string; ttl: number } & CallOptions): Promise<Lease<S> | null>;
  /** What `key` holds, for operators: a lease with its period judged now, JSON, or bytes. null when absent. 1 request. */
  inspect(key: string, options?: CallOptions): Promise<Inspection | null>;
  /**
   * Break a lease, fencing-safe: write the next epoch as released (state kept, or `state`). The old
   * holder's next write rejects with `LeaseLost` (reason "stolen"); the next acquirer gets a higher
   * epoch. null when there is no lease document. 2 requests.
   */
  breakLease(key: string, options?: { state?: Json } & CallOptions): Promise<BrokenLease | null>;
  /**
   * Delete the objects under `prefix` last modified more than `olderThan` seconds ago, never a held
   * lease (conditional DELETE where the store has one, else a re-read right before). `dryRun`:
   * delete nothing, report what would go. Only for key spaces that do not recur (past ticks): a
   * deleted claim can be claimed again. One list per page, then a read and a delete per old object.
   */
  prune(prefix: string, options: { olderThan: number; dryRun?: boolean } & CallOptions): Promise<{ deleted: number; kept: number; keys: string[] }>;
  /** A handle on a JSON document; with a schema, values are the schema's output. */
  doc<T = Json>(key: string, options?: { schema?: StandardSchemaV1<unknown, T> }): Doc<T>;
  /** A sharded counter over `shards` (default 16, at most 1000) docs at `key/<i>` (no request). */
  counter(key: string, options?: { shards?: number }): Counter;
  /**
   * Run `fn(signal)` once per key, its result recorded: `{status: "done", value, ran}` (`ran` only
   * for the call whose run recorded it; 1 request when done), or `{status: "running", deadlineAt}`
   * while another holder runs it, after waiting up to `wait` seconds (default 0) for it to finish
   * or expire. `fn` runs under a lease of `ttl` seconds (default 60) kept alive meanwhile; `signal`
   * aborts when it is lost. When `fn` throws, the failure is recorded and rethrown, and the next
   * call runs `fn` again; a runner that died is replaced after its ttl. Its result must be JSON.
   */
  once<F extends (signal: AbortSignal) => unknown>(
    key: string,
    fn: F & ((signal: AbortSignal) => Awaitable<OnceValue<Awaited<ReturnType<F>>>>),
    options?: OnceOptions,
  ): Promise<OnceResult<Awaited<ReturnType<F>>>>;
  /** At most `limit` holders at once; each permit is a `Lease` on slot `key/<i>`, fenced by its epoch. No request. */
  semaphore(key: string, options: { limit: number; ttl: number }): Semaphore;
  /**
   * The key's state (what `inspect` answers; null while absent), then each change of its etag (a
   * deletion once), polled every `interval` seconds (default 1) with a conditional read: one
   * request per interval. Leave the loop to stop; aborting `signal` stops it and throws its reason.
   */
  watch(key: string, options?: { interval?: number } & CallOptions): AsyncIterableIterator<Inspection | null>;
  /** Layer 0 on the same store. */
  readonly objects: Objects;
}

export interface OnceOptions extends CallOptions {
  /** Seconds the run's lease lasts (default 60): a runner that dies is replaced after this long. */
  ttl?: number;
  /** Seconds to wait for a running holder to finish or expire (default 0: answer "running" at once). */
  wait?: number;
  holder?: string;
  /** Keep-alive interval, seconds (default ttl/3). */
  every?: number;
}

/** A result `once` can record: JSON (`undefined` is none: a function that returns nothing is refused). */
export type OnceValue<R> = 0 extends 1 & R ? R : [R] extends [undefined | void] ? never : JsonSafe<R>;

/** What `db.once` answered. */
export type OnceResult<R> = { status: "done"; value: Stored<R>; ran: boolean } | { status: "running"; deadlineAt: Date };

/** A counting semaphore whose permits are fenced leases. */
export declare class Semaphore {
  private constructor();
  readonly key: string;
  readonly limit: number;
  readonly ttl: number;
  /** A permit on a free or expired slot, or null when all are held (after waiting up to `wait` seconds). 2 requests when the first slot tried is free; at most `limit` reads + 1 write otherwise. */
  acquire(options?: { holder?: string; wait?: number } & CallOptions): Promise<Lease<unknown> | null>;
  /** Run `fn(permit, signal)` holding a permit kept alive meanwhile, released when `fn` settles (as `withLease`); null without calling `fn` when none could be had. */
  withPermit<R>(options: { holder?: string; wait?: number; every?: number } & CallOptions, fn: (permit: Lease<unknown>, signal: AbortSignal) => Awaitable<R>): Promise<R | null>;
  withPermit<R>(fn: (permit: Lease<unknown>, signal: AbortSignal) => Awaitable<R>): Promise<R | null>;
  /** The unexpired permits, by slot: one list, then one read per slot. */
  holders(options?: CallOptions): Promise<{ slot: number; epoch: number; holder: string; deadlineAt: Date }[]>;
}

/** What `db.inspect(key)` found. */
export type Inspection = {
  key: string;
  etag: string;
  /** Bytes stored. */
  size: number;
  /** When the store last wrote it (S3: whole seconds), or null when it does not say. */
  lastModified: Date | null;
} & (
  | { kind: "lease"; value: Json; lease: LeaseInspection }
  | { kind: "json"; value: Json; lease?: undefined }
  | { kind: "bytes"; value: Uint8Array; lease?: undefined }
);

/** A lease document judged at the time of the read. */
export interface LeaseInspection {
  epoch: number;
  /** A credential: whoever knows it can attach. */
  holder: string | null;
  /** null for a released document written without a deadline. */
  deadlineAt: Date | null;
  /** Released, or at or past its deadline: anyone may acquire it now. */
  expired: boolean;
  /** No holder: released, or broken. */
  released: boolean;
  /** Seconds until the deadline; negative once past; null without a deadline (as `deadlineAt`). */
  expiresIn: number | null;
  state: Json;
}

/** What `db.breakLease(key)` broke. */
export interface BrokenLease {
  key: string;
  /** The epoch written (released): the previous one plus one. */
  epoch: number;
  previous: { epoch: number; holder: string | null; deadlineAt: Date | null; expired: boolean; released: boolean };
}

/** One ownership period `(key, epoch, holder)`. Any write may reject with `LeaseLost`: stop then. */
export declare class Lease<S = Json> implements AsyncDisposable {
  private constructor();
  readonly key: string;
  /** The fence token: strictly increases with each acquisition. */
  readonly epoch: number;
  /** A credential (whoever knows it can attach): redacted when the lease is inspected or logged. */
  readonly holder: string;
  readonly ttl: number;
  /** The state this handle last saw or wrote. */
  readonly state: S;
  readonly deadlineAt: Date;
  readonly etag: string | undefined;
  readonly released: boolean;
  /** Aborted (reason: a `LeaseLost`) as soon as this handle learns its period is over. */
  readonly signal: AbortSignal;
  /** deadline = now + ttl; state kept (cooperative writes absorbed). 1 request (3 after a cooperative write). */
  renew(options?: CallOptions): Promise<void>;
  /** Guarded read-modify-write; `fn` sees the freshest state. Resolves to the state written. */
  updateState(fn: (state: S) => Awaitable<JsonSafe<S>>, options?: CallOptions): Promise<S>;
  /** Guarded replace (discards unseen cooperative writes). */
  write(state: JsonSafe<S>, options?: CallOptions): Promise<S>;
  /**
   * Renew in the background every `every` seconds (default ttl/3) until stopped, released or lost;
   * failed renewals are retried within the deadline, and when one cannot succeed before it, `signal`
   * aborts (a `LeaseLost`) before the deadline passes. Idempotent.
   */
  keepAlive(options?: { every?: number }): KeepAlive;
  /** holder = null, deadline = now, optional final state. Every call through the handle then rejects with `LeaseLost`. */
  release(options?: { state?: JsonSafe<S> } & CallOptions): Promise<void>;
  /** `await using lease = await db.lease(…)`: stops keep-alive, then releases (nothing to do when already over). */
  [Symbol.asyncDispose](): Promise<void>;
  /** A snapshot for logs, without the holder. */
  toJSON(): { key: string; epoch: number; ttl: number; state: S; deadlineAt: string; etag: string | null; released: boolean };
}

/** A JSON document updated by compare-and-swap. */
export declare class Doc<T = Json> {
  private constructor();
  readonly key: string;
  get(options?: CallOptions): Promise<{ value: T; etag: string } | null>;
  /**
   * Read, apply, CAS; retried on conflict (2 requests per attempt). From the version this handle
   * last read or wrote, one guarded PUT first: 1 request when nobody else wrote since. `fresh`
   * reads first. Resolves to the value written.
   */
  update(fn: (value: T) => Awaitable<JsonSafe<T>>, options?: { create?: JsonSafe<T>; maxAttempts?: number; fresh?: boolean } & CallOptions): Promise<T>;
  /** Forget the version the `Fencepost` remembers of the key (for every handle on it): the next `update` reads first, as `{fresh: true}` does. No request. */
  forget(): void;
  /** Idempotent. */
  delete(options?: CallOptions): Promise<void>;
}

/** A counter sharded over docs at `key/<i>`, past a store's per-key write limit. */
export declare class Counter {
  private constructor();
  readonly key: string;
  /** Add `n` (default 1; a whole number, negative to subtract) to one shard chosen at random: 1 request when that shard's version is known, else 2. Exact under contention and lost responses. */
  add(n?: number, options?: CallOptions): Promise<void>;
  /** The sum of every shard: one read per shard, together. */
  value(options?: CallOptions): Promise<number>;
}

export interface StoredObject {
  data: Uint8Array;
  etag: string;
}

/** Layer 0 on its own: the same as `new Fencepost(store, options).objects`. */
export declare function objects(store: Store | R2BucketLike, options?: FencepostOptions): Objects;

/** Layer 0: a conditional key-value store. */
/** One object of `objects.entries()`. Fields a store does not list are undefined (null for the date). */
export interface ObjectEntry {
  key: string;
  etag: string | undefined;
  size: number | undefined;
  lastModified: Date | null;
}

export declare class Objects {
  private constructor();
  readonly store: Store;
  get(key: string, options?: CallOptions): Promise<StoredObject | null>;
  /** A conditional read: `{notModified: true}` (a 304 without the body) while the etag is still `ifNoneMatch`. 1 request. */
  get(key: string, options: { ifNoneMatch: string } & CallOptions): Promise<StoredObject | { notModified: true } | null>;
  /** null when the precondition did not hold. `etag` is null only if the write landed but has already been replaced. */
  put(
    key: string,
    data: Uint8Array | ArrayBuffer | ArrayBufferView | string,
    options?: ({ ifAbsent?: boolean; ifMatch?: undefined } | { ifAbsent?: false; ifMatch?: string }) & CallOptions,
  ): Promise<{ etag: string | null } | null>;
  delete(key: string, options?: CallOptions): Promise<void>;
  /** Keys under `prefix`, ascending, all pages. */
  list(prefix?: string, options?: CallOptions): Promise<string[]>;
  /**
   * The objects under `prefix`, in key order, page by page as an async iterable (a prefix of
   * 100,000 keys never becomes one array): one list request per page; `startAfter` starts after that key.
   */
  entries(prefix?: string, options?: { startAfter?: string } & CallOptions): AsyncGenerator<ObjectEntry, void, undefined>;
  /** Poll until the key exists (or its etag differs from `changedFrom`). Default timeout 30 s, poll 1 s. */
  waitFor(key: string, options?: { timeout?: number; pollInterval?: number; changedFrom?: string } & CallOptions): Promise<StoredObject>;
}
