// Type declarations for fencepost. Every duration is in seconds.

/** Any value JSON can carry. Numbers must be finite; BigInt, functions, cycles are rejected. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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

type Awaitable<T> = T | Promise<T>;

// ------------------------------------------------------------------------------------ stores

/** An opaque store handle. */
export declare class Store {
  private constructor();
  /** "memory" | "s3" | "r2" | "counting" */
  readonly kind: string;
  /** Requests made so far, per operation (only for `countingStore`). */
  requestCounts(): { get: number; put: number; delete: number; list: number; total: number };
  resetRequestCounts(): void;
  free(): void;
}

/** An in-memory store (tests, demos, browser harnesses). Behaves like S3: ETag = MD5 of the body. */
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
}

/** An S3-API store over `fetch`, SigV4-signed. */
export declare function s3Store(options: S3StoreOptions): Store;

/** Minimal shape of a Workers R2 binding (`env.BUCKET`). */
export interface R2BucketLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown, options?: unknown): Promise<unknown>;
  delete(key: string): Promise<unknown>;
  list(options?: unknown): Promise<unknown>;
  head(key: string): Promise<unknown>;
}

/** A store on a Workers R2 binding. */
export declare function r2Store(bucket: R2BucketLike, options?: { prefix?: string }): Store;

/** Wrap a store to count requests per operation (each one is a Workers subrequest). */
export declare function countingStore(store: Store | R2BucketLike): Store;

// ------------------------------------------------------------------------------------ Fencepost

export interface FencepostOptions {
  /** Retries of transient store failures: exponential backoff with full jitter. */
  retry?: { maxAttempts?: number; baseDelay?: number; maxDelay?: number };
  /** Where "now" comes from (ms since the epoch, or a Date); default `Date.now`. */
  now?: () => number | Date;
}

export interface ClaimResult<T extends Json = Json> {
  /** True for exactly one caller. */
  won: boolean;
  key: string;
  /** The winner's value (yours if you won). */
  value: T;
  etag: string;
}

export interface LeaseOptions<S extends Json = Json> {
  /** Seconds, > 0. */
  ttl: number;
  /** Default: a fresh random 128-bit URL-safe token. Knowing it lets you `attachLease`. */
  holder?: string;
  /** Take over an expired (or released) lease; default true. */
  stealIfExpired?: boolean;
  /** Acquisition as a transition: gets the previous state (null when fresh), returns the new one. Pure; may run more than once. Throw to refuse. */
  stateFn?: (state: S | null) => Awaitable<S>;
}

export declare class Fencepost {
  constructor(store: Store | R2BucketLike, options?: FencepostOptions);
  /** Put-if-absent: exactly one caller wins; losers get the winner's value. 1 request won, 2 lost. */
  claim<T extends Json>(key: string, value: T): Promise<ClaimResult<T>>;
  /** Acquire, or null when held by someone else. 2 requests to acquire, 1 when held. */
  lease<S extends Json = Json>(key: string, options: LeaseOptions<S>): Promise<Lease<S> | null>;
  /** Change a lease's state from outside, without fencing the holder. null if there is no lease. */
  cooperativeWrite<S extends Json = Json>(key: string, fn: (state: S) => Awaitable<S>): Promise<S | null>;
  /** A handle on `holder`'s current period (one read, no write), or null. */
  attachLease<S extends Json = Json>(key: string, options: { holder: string; ttl: number }): Promise<Lease<S> | null>;
  doc<T extends Json = Json>(key: string, options?: { schema?: StandardSchemaV1<unknown, T> }): Doc<T>;
  /** Layer 0 on the same store. */
  readonly objects: Objects;
  free(): void;
}

/** One ownership period `(key, epoch, holder)`. Any write may reject with `LeaseLost`: stop then. */
export declare class Lease<S extends Json = Json> {
  private constructor();
  readonly key: string;
  /** The fence token: strictly increases with each acquisition. */
  readonly epoch: number;
  readonly holder: string;
  readonly ttl: number;
  readonly state: S;
  readonly deadlineAt: Date;
  readonly etag: string | undefined;
  readonly released: boolean;
  /** deadline = now + ttl; state kept (cooperative writes absorbed). 1 request (3 after a cooperative write). */
  renew(): Promise<void>;
  /** Guarded read-modify-write; `fn` sees the freshest state. Resolves to the state written. */
  updateState(fn: (state: S) => Awaitable<S>): Promise<S>;
  /** Guarded replace (discards unseen cooperative writes). */
  write(state: S): Promise<S>;
  /** holder = null, deadline = now, optional final state. The handle is dead afterwards. */
  release(options?: { state?: S }): Promise<void>;
  free(): void;
}

/** A JSON document updated by compare-and-swap. */
export declare class Doc<T extends Json = Json> {
  private constructor();
  readonly key: string;
  get(): Promise<{ value: T; etag: string } | null>;
  /** Read, apply, CAS; retried on conflict (2 requests per attempt). Resolves to the value written. */
  update(fn: (value: T) => Awaitable<T>, options?: { create?: T; maxAttempts?: number }): Promise<T>;
  /** Idempotent. */
  delete(): Promise<void>;
  free(): void;
}

export interface StoredObject {
  data: Uint8Array;
  etag: string;
}

/** Layer 0 on its own: the same as `new Fencepost(store, options).objects`. */
export declare function objects(store: Store | R2BucketLike, options?: FencepostOptions): Objects;

/** Layer 0: a conditional key-value store. */
export declare class Objects {
  private constructor();
  get(key: string): Promise<StoredObject | null>;
  /** null when the precondition did not hold. `etag` is null only if the write landed but has already been replaced. */
  put(key: string, data: Uint8Array | ArrayBuffer | ArrayBufferView | string, options?: { ifAbsent?: boolean; ifMatch?: string }): Promise<{ etag: string | null } | null>;
  delete(key: string): Promise<void>;
  /** Keys under `prefix`, ascending, all pages. */
  list(prefix?: string): Promise<string[]>;
  /** Poll until the key exists (or its etag differs from `changedFrom`). Default timeout 30 s, poll 1 s. */
  waitFor(key: string, options?: { timeout?: number; pollInterval?: number; changedFrom?: string }): Promise<StoredObject>;
  free(): void;
}

// ------------------------------------------------------------------------------------ errors

export declare class FencepostError extends Error {
  /** Stable, machine-readable. */
  readonly code: string;
}
export declare class LeaseLost extends FencepostError {
  readonly code: "LEASE_LOST";
  readonly key: string;
  readonly reason: string;
}
export declare class ConflictError extends FencepostError {
  readonly code: "CONFLICT";
  readonly key: string;
  readonly attempts: number;
}
export declare class StorageError extends FencepostError {
  /** The store's error code (e.g. "SignatureDoesNotMatch"), or "STORAGE_ERROR". */
  readonly code: string;
  readonly s3Code?: string;
  readonly status?: number;
}
export declare class AmbiguousWriteError extends StorageError {
  readonly code: "AMBIGUOUS_WRITE";
  readonly key: string;
}
export declare class InvalidArgument extends FencepostError {
  readonly code: "INVALID_ARGUMENT";
  /** Standard Schema issues, when a schema rejected the value. */
  readonly issues?: ReadonlyArray<{ readonly message: string }>;
}
export declare class TimeoutError extends FencepostError {
  readonly code: "TIMEOUT";
  readonly key: string;
  readonly timeout: number;
}
export declare class NotFoundError extends FencepostError {
  readonly code: "NOT_FOUND";
  readonly key: string;
}
export declare class CorruptObjectError extends FencepostError {
  readonly code: "CORRUPT";
  readonly key: string;
}
