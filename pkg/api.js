// The JS face of fencepost: plain JS classes over the wasm core. This layer does what is JS's to do —
// option names and types, Standard Schema validation, AbortSignal, `await using`, inspection, errors
// constructed in the caller's async stack — and hands everything else to the core: every protocol
// decision (keys, ttl rules, retries, fencing, read-back) is made there, once, for Rust users too.
//
// Handles never expose wasm objects: memory is reclaimed by the garbage collector (no `free()`), and
// a handle whose period is over rejects with a typed error, never a null-pointer message.

import { core, initWasm, isReady } from "./runtime.js";
import { fromFailure, InvalidArgument, LeaseLost } from "./errors.js";
import { func, options, string } from "./options.js";
import { fromJson, jsonCallback, toJson } from "./json.js";

const INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");
/** Package-private access to a handle's core object (not exported by the package's entries). */
export const CORE = Symbol("fencepost.core");
/** Package-private brand of `fencepost/testing`'s manual clocks (other handles have a CORE too). */
export const MANUAL_CLOCK = Symbol("fencepost.manualClock");

// ------------------------------------------------------------------------------------ plumbing

/**
 * A core object made on first use: at once where the wasm is already instantiated (so bad settings
 * throw from the constructor), on the first call otherwise (the browser entry loads the wasm then).
 * @template T
 */
class Lazy {
  /** @param {() => T} make */
  constructor(make) {
    /** @type {(() => T) | null} */
    this.make = make;
    /** @type {T | undefined} */
    this.value = undefined;
    if (isReady()) this.get();
  }

  /** @returns {T} */
  get() {
    if (this.make) {
      const make = this.make;
      try {
        this.value = make();
      } catch (e) {
        throw fromFailure(e);
      }
      this.make = null;
    }
    return /** @type {T} */ (this.value);
  }
}

/**
 * Run one core call for an API method: wait for the wasm if needed, and turn the core's failure
 * records into typed errors here — in the async chain of the caller, so their stack shows the
 * caller's own frame. (`signal`s are passed through to the core, which stops waits and retries
 * and settles a write in flight before it rejects.)
 * @template T
 * @param {() => Promise<T> | T} call
 * @returns {Promise<T>}
 */
async function run(call) {
  if (!isReady()) await initWasm();
  try {
    return await call();
  } catch (e) {
    throw fromFailure(e);
  }
}

/**
 * `util.inspect` / Deno inspect / `console.log` of a handle: `name` and `fields`. The name is
 * given, not read from the class: bundlers rename colliding classes (esbuild turns this `Lease`,
 * next to the wasm glue's own, into `Lease2`).
 */
function inspectable(/** @type {Function} */ Class, /** @type {string} */ name, /** @type {(self: any) => object} */ fields) {
  Object.defineProperty(Class.prototype, INSPECT, {
    value(/** @type {number} */ _depth, /** @type {any} */ opts, /** @type {any} */ inspect) {
      return `${name} ${inspect ? inspect(fields(this), opts) : JSON.stringify(fields(this))}`;
    },
  });
  Object.defineProperty(Class.prototype, DENO_INSPECT, {
    value(/** @type {any} */ inspect, /** @type {any} */ opts) {
      return `${name} ${inspect(fields(this), opts)}`;
    },
  });
}

const signalOnly = { signal: "signal" };

// ------------------------------------------------------------------------------------ stores

/** A store handle: pass it to `new Fencepost(store)`. Made by the store functions below. */
export class Store {
  /** @type {Lazy<any>} */
  #core;

  /** @internal @param {string} kind @param {() => any} make @param {object} [shown] what inspection shows */
  constructor(kind, make, shown) {
    if (make === undefined) throw new InvalidArgument("a Store is made by memoryStore(), s3Store(), r2Store() or countingStore()");
    /** "memory" | "s3" | "r2" | "counting" */
    this.kind = kind;
    if (shown) Object.assign(this, shown);
    this.#core = new Lazy(make);
  }

  /** @internal */
  [CORE]() {
    return this.#core.get();
  }

  /** Requests made so far, per operation (`countingStore` and `faultStore` only). */
  requestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("requestCounts() needs a countingStore()");
    const [get, put, del, list] = this.#counting();
    return { get, put, delete: del, list, total: get + put + del + list };
  }

  /** Start counting again from zero (`countingStore` only). */
  resetRequestCounts() {
    if (!COUNTED.has(this.kind)) throw new InvalidArgument("resetRequestCounts() needs a countingStore()");
    this.#counting(true);
  }

  #counting(reset = false) {
    if (!isReady()) return [0, 0, 0, 0]; // nothing can have been sent before the core was loaded
    return Array.from(this.#core.get().requestCounts(reset));
  }
}

const COUNTED = new Set(["counting", "fault"]);

/** An in-memory store: tests, demos, the browser harness. Behaves like S3 (ETag = MD5 of the body). */
export function memoryStore() {
  return new Store("memory", () => core.memoryStore());
}

const S3_OPTIONS = {
  endpoint: "string", bucket: "string", region: "string", accessKeyId: "string", secretAccessKey: "string",
  sessionToken: "string", prefix: "string", forcePathStyle: "boolean", timeout: "number",
};

/** An S3-API store over `fetch`, SigV4-signed: AWS S3, R2's S3 endpoint, SeaweedFS, MinIO… */
export function s3Store(/** @type {any} */ settings) {
  if (settings === undefined || settings === null) {
    throw new InvalidArgument("s3Store needs an options object {endpoint, bucket, accessKeyId, secretAccessKey, ...}");
  }
  const o = options(settings, S3_OPTIONS, "s3Store options");
  for (const name of ["endpoint", "bucket", "accessKeyId", "secretAccessKey"]) {
    if (o[name] === undefined || o[name] === null) throw new InvalidArgument(`s3Store options.${name} is required`);
  }
  const region = o.region ?? "us-east-1";
  const shown = { endpoint: o.endpoint, bucket: o.bucket, region, prefix: o.prefix ?? "" };
  return new Store("s3", () => core.s3Store(o.endpoint, o.bucket, region, o.accessKeyId, o.secretAccessKey,
    o.sessionToken ?? undefined, o.prefix ?? undefined, o.forcePathStyle !== false, o.timeout ?? undefined), shown);
}

/** A store on a Workers R2 binding (`env.BUCKET`), with an optional key prefix. */
export function r2Store(/** @type {any} */ bucket, /** @type {any} */ settings) {
  const o = options(settings, { prefix: "string" }, "r2Store options");
  if (!looksLikeBucket(bucket)) {
    throw new InvalidArgument("r2Store needs an R2 bucket binding (env.BUCKET): an object with get, put, delete, list and head");
  }
  return new Store("r2", () => core.r2Store(bucket, o.prefix ?? undefined), { prefix: o.prefix ?? "" });
}

/** Wrap a store to count requests per operation: every request costs a Workers subrequest. */
export function countingStore(/** @type {any} */ store) {
  const inner = toStore(store);
  return new Store("counting", () => core.countingStore(inner[CORE]()), { inner });
}

function looksLikeBucket(/** @type {any} */ b) {
  return b !== null && typeof b === "object" && ["get", "put", "delete", "list", "head"].every((m) => typeof b[m] === "function");
}

/** A `Store`, or an R2 binding used directly. */
export function toStore(/** @type {unknown} */ store) {
  if (store instanceof Store) return store;
  if (looksLikeBucket(store)) return r2Store(store);
  throw new InvalidArgument(
    "store must be a Store (memoryStore(), s3Store({...}), r2Store(env.BUCKET)) or an R2 bucket binding",
  );
}

// ------------------------------------------------------------------------------------ Fencepost

const FENCEPOST_OPTIONS = { retry: "object", now: "function", clock: "any" };
const RETRY_OPTIONS = { maxAttempts: "number", baseDelay: "number", maxDelay: "number" };
const LEASE_OPTIONS = {
  ttl: "number", holder: "string", stealIfExpired: "boolean", stateFn: "function", wait: "number", signal: "signal",
};
const WITH_LEASE_OPTIONS = { ...LEASE_OPTIONS, every: "number" };
const ATTACH_OPTIONS = { holder: "string", ttl: "number", signal: "signal" };

/** `new Fencepost(store, options?)`: claim, lease, doc and objects on one store. */
export class Fencepost {
  /** @type {Lazy<any>} */
  #core;
  /** @type {Objects | undefined} */
  #objects;

  constructor(/** @type {any} */ store, /** @type {any} */ settings) {
    const o = options(settings, FENCEPOST_OPTIONS, "Fencepost options");
    const r = options(o.retry, RETRY_OPTIONS, "Fencepost options.retry");
    const manual = o.clock != null && typeof o.clock === "object" && o.clock[MANUAL_CLOCK] === true ? o.clock : null;
    if (o.clock != null && o.clock !== "local" && o.clock !== "store" && !manual) {
      throw new InvalidArgument('Fencepost options.clock must be "local", "store" or a manualClock() from fencepost/testing');
    }
    if (manual && o.now != null) throw new InvalidArgument("Fencepost options: give a manualClock as clock, or now, not both");
    const storeClock = o.clock === "store";
    /** The store this instance talks to. @type {Store} */
    this.store = toStore(store);
    const st = this.store;
    this.#core = new Lazy(() => new core.Fencepost(st[CORE](), o.now ?? undefined, r.maxAttempts ?? undefined,
      r.baseDelay ?? undefined, r.maxDelay ?? undefined, storeClock, manual?.[CORE]().share()));
  }

  /** Put-if-absent: `{won, key, value, etag}`; losers get the winner's value. */
  async claim(/** @type {string} */ key, /** @type {unknown} */ value, /** @type {any} */ opts) {
    string(key, "key");
    const { signal } = options(opts, signalOnly, "claim options");
    const json = toJson(value, "value");
    const [won, k, winner, etag] = await run(() => this.#core.get().claim(key, json, signal ?? undefined));
    return { won, key: k, value: JSON.parse(winner), etag };
  }

  /** Acquire a lease: a `Lease`, or null when held by someone else. */
  async lease(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    if (opts === undefined || opts === null) {
      throw new InvalidArgument("lease options {ttl, holder?, stealIfExpired?, stateFn?} are required");
    }
    const o = options(opts, LEASE_OPTIONS, "lease options");
    if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("lease options.ttl (seconds) is required");
    const inner = await run(() => this.#core.get().lease(key, o.ttl, o.holder ?? undefined,
      o.stealIfExpired ?? undefined, o.stateFn ? jsonCallback(o.stateFn, "stateFn's result") : undefined,
      o.wait ?? undefined, o.signal ?? undefined));
    return inner ? new Lease(inner) : null;
  }

  /**
   * Acquire (waiting up to `wait` seconds), keep the lease alive while `fn(lease, signal)` runs,
   * release it when `fn` settles (also when it throws). Resolves to `fn`'s result, or `null`
   * without calling `fn` when the lease could not be acquired. `signal` aborts when the lease is
   * lost (or the caller's `signal` aborts); if the lease was lost while `fn` ran, the call rejects
   * with that `LeaseLost` even if `fn` resolved, since its work was not fenced to the end.
   */
  async withLease(/** @type {string} */ key, /** @type {any} */ opts, /** @type {Function} */ fn) {
    func(fn, "withLease's third argument");
    if (opts === undefined || opts === null) throw new InvalidArgument("withLease options {ttl, ...} are required");
    const { every, ...leaseOptions } = options(opts, WITH_LEASE_OPTIONS, "withLease options");
    const lease = await this.lease(key, leaseOptions);
    if (!lease) return null;
    const signal = leaseOptions.signal ? AbortSignal.any([lease.signal, leaseOptions.signal]) : lease.signal;
    /** @type {{stop(): Promise<void>} | undefined} */
    let keeper;
    let failed = false;
    try {
      keeper = lease.keepAlive({ every }); // inside: a bad `every` still releases the lease
      const out = await fn(lease, signal);
      if (lease.signal.aborted && !lease.released) throw lease.signal.reason;
      return out;
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      await keeper?.stop();
      // A failed release must not hide `fn`'s own error (the lease then expires at its deadline).
      await lease[ASYNC_DISPOSE]().catch((e) => {
        if (!failed) throw e;
      });
    }
  }

  /** Change a lease's state from outside (not fenced): the new state, or null if there is no lease. */
  async cooperativeWrite(/** @type {string} */ key, /** @type {Function} */ fn, /** @type {any} */ opts) {
    string(key, "key");
    func(fn, "cooperativeWrite's second argument");
    const { signal } = options(opts, signalOnly, "cooperativeWrite options");
    const transition = jsonCallback(fn, "the callback's result");
    return fromJson(await run(() => this.#core.get().cooperativeWrite(key, transition, signal ?? undefined)));
  }

  /** Re-attach to the holder's current period: a `Lease`, or null. One read, no write. */
  async attachLease(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    const o = options(opts, ATTACH_OPTIONS, "attachLease options");
    if (o.holder === undefined || o.holder === null) throw new InvalidArgument("attachLease options.holder is required");
    if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("attachLease options.ttl (seconds) is required");
    const inner = await run(() => this.#core.get().attachLease(key, o.holder, o.ttl, o.signal ?? undefined));
    return inner ? new Lease(inner) : null;
  }

  /** A handle on a JSON document; `{schema}`: any Standard Schema (zod, valibot, arktype…). */
  doc(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    const { schema } = options(opts, { schema: "object" }, "doc options");
    if (schema !== undefined && schema !== null && typeof schema?.["~standard"]?.validate !== "function") {
      throw new InvalidArgument("doc options.schema must implement Standard Schema (zod, valibot, arktype…)");
    }
    return new Doc(key, schema ?? undefined, () => this.#core.get().doc(key));
  }

  /** Layer 0 (get / conditional put / delete / list / waitFor) on the same store. */
  get objects() {
    return (this.#objects ??= new Objects(this.store, () => this.#core.get().objects()));
  }
}

/** `objects(store, options?)`: layer 0 on its own (the same as `new Fencepost(store, options).objects`). */
export function objects(/** @type {any} */ store, /** @type {any} */ settings) {
  return new Fencepost(store, settings).objects;
}

// ------------------------------------------------------------------------------------ Lease

/** The reason a released lease's `signal` carries. */
const released = (/** @type {string} */ key) =>
  new LeaseLost(`lease ${JSON.stringify(key)} was released`, { key, reason: "released" });

const live = (/** @type {(core: any) => unknown} */ read) => ({
  enumerable: true,
  get() {
    return read(/** @type {any} */ (this)[CORE]());
  },
});
const LIVE_FIELDS = {
  /** The state this handle last saw or wrote. */
  state: live((c) => JSON.parse(c.stateJson)),
  deadlineAt: live((c) => new Date(c.deadlineMs)),
  etag: live((c) => c.etag ?? undefined),
  released: live((c) => c.released),
};

/** One ownership period `(key, epoch, holder)`. Every write is guarded; `LeaseLost` means stop. */
export class Lease {
  #core;
  #holder;
  /** Made when `signal` is first asked for (an AbortController per lease is not free). */
  /** @type {AbortController | undefined} */
  #ended;
  /** Why the period is over: the error, or a maker for it (a release's reason is made only when
   * someone looks: an Error's stack is the costliest part of a release). */
  /** @type {LeaseLost | (() => LeaseLost) | undefined} */
  #endedBy;
  /** @type {{stop(): Promise<void>} | undefined} */
  #keeper;

  /** @internal */
  constructor(/** @type {any} */ inner) {
    if (inner === undefined) throw new InvalidArgument("a Lease is made by db.lease() or db.attachLease()");
    this.#core = inner;
    /** @readonly @type {string} */
    this.key = inner.key;
    this.#holder = inner.holder;
    /** The fence token: strictly increases with each acquisition. @readonly @type {number} */
    this.epoch = inner.epoch;
    /** @readonly @type {number} */
    this.ttl = inner.ttl;
    // What changes with each write — including keep-alive's renewals in the background — is read
    // from the core when asked: own enumerable accessors, so spreads, `Object.keys` and every
    // inspector see them as fields.
    Object.defineProperties(this, LIVE_FIELDS);
  }

  /** The holder token: a credential (whoever knows it can attach), so inspection redacts it. */
  get holder() {
    return this.#holder;
  }

  /** Aborted (reason: a `LeaseLost`) as soon as this handle learns its period is over. */
  get signal() {
    if (!this.#ended) {
      this.#ended = new AbortController();
      if (this.#endedBy) this.#ended.abort(this.#endReason());
    }
    return this.#ended.signal;
  }

  /** The core handle, whose getters give what changes with each write (see LIVE_FIELDS). */
  [CORE]() {
    return this.#core;
  }

  /**
   * One call through the handle: a `LeaseLost` (or a release) ends the handle's period, which
   * aborts `signal`.
   * @template T @param {() => Promise<T>} call @returns {Promise<T>}
   */
  async #call(call) {
    try {
      return await run(call);
    } catch (e) {
      if (e instanceof LeaseLost) this.#end(e);
      throw e;
    }
  }

  #end(/** @type {LeaseLost | (() => LeaseLost)} */ reason) {
    if (this.#endedBy) return;
    this.#endedBy = reason;
    if (this.#ended) this.#ended.abort(this.#endReason());
  }

  /** @returns {LeaseLost} */
  #endReason() {
    if (typeof this.#endedBy === "function") this.#endedBy = this.#endedBy();
    return /** @type {LeaseLost} */ (this.#endedBy);
  }

  /** deadline = now + ttl; the state is kept (cooperative writes absorbed). */
  async renew(/** @type {any} */ opts) {
    const { signal } = options(opts, signalOnly, "renew options");
    await this.#call(() => this.#core.renew(signal ?? undefined));
  }

  /** Guarded read-modify-write of the state; resolves to the state written. */
  async updateState(/** @type {Function} */ fn, /** @type {any} */ opts) {
    func(fn, "updateState's argument");
    const { signal } = options(opts, signalOnly, "updateState options");
    const transition = jsonCallback(fn, "updateState's result");
    return JSON.parse(await this.#call(() => this.#core.updateState(transition, signal ?? undefined)));
  }

  /** Guarded replace of the state (unseen cooperative writes are discarded). */
  async write(/** @type {unknown} */ state, /** @type {any} */ opts) {
    const { signal } = options(opts, signalOnly, "write options");
    const json = toJson(state, "state");
    return JSON.parse(await this.#call(() => this.#core.write(json, signal ?? undefined)));
  }

  /** holder = null, deadline = now; `{state}` optionally sets a final state. */
  async release(/** @type {any} */ opts) {
    const o = options(opts, { state: "any", signal: "signal" }, "release options");
    const hasState = opts != null && Object.hasOwn(opts, "state") && opts.state !== undefined;
    const json = hasState ? toJson(o.state, "release options.state") : undefined;
    await this.#call(() => this.#core.release(json, o.signal ?? undefined));
    this.#end(() => released(this.key));
  }

  /**
   * Renew in the background every `every` seconds (default ttl/3) until stopped, released or lost.
   * Failed renewals are retried within the deadline; when a renewal cannot succeed before it,
   * `signal` aborts (reason: `LeaseLost`) before the deadline passes. Idempotent: a second call
   * returns the same handle. `stop()` resolves once keep-alive has stopped (a renewal in flight
   * settled).
   * @returns {{stop(): Promise<void>}}
   */
  keepAlive(/** @type {any} */ opts) {
    const { every } = options(opts, { every: "number" }, "keepAlive options");
    if (this.#keeper) return this.#keeper;
    if (this.#endedBy) throw this.#endReason();
    const stop = new AbortController();
    let running;
    try {
      running = this.#core.keepAlive(every ?? undefined, stop.signal);
    } catch (e) {
      throw fromFailure(e);
    }
    const done = Promise.resolve(running).then(
      () => this.released && this.#end(() => released(this.key)),
      (/** @type {unknown} */ e) => {
        const err = fromFailure(e);
        if (err instanceof LeaseLost) this.#end(err);
      },
    );
    const keeper = {
      stop: async () => {
        stop.abort();
        await done;
      },
    };
    this.#keeper = keeper;
    return keeper;
  }

  /** `await using lease = …`: releases at the end of the scope (nothing to do when already over). */
  async [ASYNC_DISPOSE]() {
    await this.#keeper?.stop();
    if (this.#endedBy) return;
    try {
      await this.release();
    } catch (e) {
      if (!(e instanceof LeaseLost)) throw e;
    }
  }

  /** A snapshot for logs (`JSON.stringify(lease)`), without the holder token (a credential). */
  toJSON() {
    const { key, epoch, ttl, state, deadlineAt, etag, released } = this;
    return { key, epoch, ttl, state, deadlineAt: deadlineAt.toISOString(), etag: etag ?? null, released };
  }
}
inspectable(Lease, "Lease", (l) => {
  const { key, epoch, ttl, state, deadlineAt, etag, released } = l;
  return { key, epoch, holder: "[redacted]", ttl, state, deadlineAt, etag, released };
});

// ------------------------------------------------------------------------------------ Doc

const UPDATE_OPTIONS = { create: "any", maxAttempts: "number", signal: "signal" };

/** A JSON document updated by compare-and-swap. */
export class Doc {
  /** @type {Lazy<any>} */
  #core;
  #schema;

  /** @internal */
  constructor(/** @type {string} */ key, /** @type {any} */ schema, /** @type {() => any} */ make) {
    if (make === undefined) throw new InvalidArgument("a Doc is made by db.doc(key)");
    /** @readonly */
    this.key = key;
    this.#schema = schema;
    this.#core = new Lazy(make);
  }

  /** `{value, etag}` or null; with a schema, `value` is the schema's output. */
  async get(/** @type {any} */ opts) {
    const { signal } = options(opts, signalOnly, "get options");
    const got = await run(() => this.#core.get().get(signal ?? undefined));
    if (!got) return null;
    const value = JSON.parse(got[0]);
    return { value: this.#schema ? await validate(this.#schema, value, this.key) : value, etag: got[1] };
  }

  /** Read, apply `fn`, compare-and-swap, retry on conflict; resolves to the value written. */
  async update(/** @type {Function} */ fn, /** @type {any} */ opts) {
    func(fn, "update's first argument");
    const o = options(opts, UPDATE_OPTIONS, "update options");
    const schema = this.#schema, key = this.key;
    // With a schema, `fn` sees a valid value (the schema's output) and its result is validated
    // (and transformed) before it is written.
    const transition = schema
      ? async (/** @type {unknown} */ v) => validate(schema, await fn(await validate(schema, v, key)), key)
      : fn;
    const hasCreate = opts != null && Object.hasOwn(opts, "create") && opts.create !== undefined;
    const create = hasCreate ? toJson(o.create, "update options.create") : undefined;
    const written = await run(() => this.#core.get().update(jsonCallback(transition, "update's result"), create,
      o.maxAttempts ?? undefined, o.signal ?? undefined));
    return JSON.parse(written);
  }

  /** Delete the document (idempotent). */
  async delete(/** @type {any} */ opts) {
    const { signal } = options(opts, signalOnly, "delete options");
    await run(() => this.#core.get().delete(signal ?? undefined));
  }
}

/**
 * Standard Schema validation (sync or async): the schema's output, or an InvalidArgument carrying
 * the issues.
 */
async function validate(/** @type {any} */ schema, /** @type {unknown} */ value, /** @type {string} */ key) {
  const result = await schema["~standard"].validate(value);
  if (!result.issues) return result.value;
  const messages = result.issues.map((/** @type {any} */ i) => i.message).join("; ");
  throw new InvalidArgument(`value does not match the schema: ${messages}`, { key, issues: result.issues });
}

// ------------------------------------------------------------------------------------ Objects

const PUT_OPTIONS = { ifAbsent: "boolean", ifMatch: "string", signal: "signal" };
const WAIT_OPTIONS = { timeout: "number", pollInterval: "number", changedFrom: "string", signal: "signal" };

/** Layer 0: conditional get / put / delete / list / waitFor on raw bytes. */
export class Objects {
  /** @type {Lazy<any>} */
  #core;

  /** @internal */
  constructor(/** @type {Store} */ store, /** @type {() => any} */ make) {
    if (make === undefined) throw new InvalidArgument("Objects are made by db.objects or objects(store)");
    /** @readonly */
    this.store = store;
    this.#core = new Lazy(make);
  }

  /** `{data: Uint8Array, etag}` or null. */
  async get(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    const { signal } = options(opts, signalOnly, "get options");
    return stored(await run(() => this.#core.get().get(key, signal ?? undefined)));
  }

  /** `{etag}`, or null when `{ifAbsent}` / `{ifMatch}` did not hold. */
  async put(/** @type {string} */ key, /** @type {any} */ data, /** @type {any} */ opts) {
    string(key, "key");
    const o = options(opts, PUT_OPTIONS, "put options");
    const bytes = toBytes(data);
    const written = await run(() => this.#core.get().put(key, bytes, o.ifAbsent === true, o.ifMatch ?? undefined,
      o.signal ?? undefined));
    return written && { etag: written[0] };
  }

  /** Delete; a missing key is a no-op. */
  async delete(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    const { signal } = options(opts, signalOnly, "delete options");
    await run(() => this.#core.get().delete(key, signal ?? undefined));
  }

  /** Keys under `prefix` (default ""), ascending, relative to the store prefix. */
  async list(/** @type {string | undefined} */ prefix, /** @type {any} */ opts) {
    if (prefix !== undefined && prefix !== null) string(prefix, "prefix");
    const { signal } = options(opts, signalOnly, "list options");
    return await run(() => this.#core.get().list(prefix ?? "", signal ?? undefined));
  }

  /** Poll until the key exists (or its etag differs from `changedFrom`); `TimeoutError` after `timeout`. */
  async waitFor(/** @type {string} */ key, /** @type {any} */ opts) {
    string(key, "key");
    const o = options(opts, WAIT_OPTIONS, "waitFor options");
    return stored(await run(() => this.#core.get().waitFor(key, o.timeout ?? undefined, o.pollInterval ?? undefined,
      o.changedFrom ?? undefined, o.signal ?? undefined)));
  }
}

/** `[data, etag]` from the core as `{data, etag}` (null stays null). */
function stored(/** @type {[Uint8Array, string] | null} */ o) {
  return o && { data: o[0], etag: o[1] };
}

const UTF8 = new TextEncoder();

/** Object data: a Uint8Array, an ArrayBuffer (or a view of one), or a string (stored as UTF-8). */
function toBytes(/** @type {unknown} */ data) {
  if (typeof data === "string") return UTF8.encode(string(data, "data"));
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new InvalidArgument("data must be a Uint8Array, an ArrayBuffer or a string");
}

// Class names stated (see `inspectable`): default inspection prints `constructor.name`.
for (const [C, name] of /** @type {const} */ ([[Fencepost, "Fencepost"], [Lease, "Lease"], [Doc, "Doc"],
  [Objects, "Objects"], [Store, "Store"]])) {
  Object.defineProperty(C, "name", { value: name });
}
