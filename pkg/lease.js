// lease: expiring ownership with an epoch fence token — acquiring, re-attaching, cooperative writes
// from outside, and the `Lease` handle. Whether a handle's period is over, and why, is the core's
// to know (`Lease::ended`); the handle's `signal` follows it.

import { InvalidArgument, LeaseLost, fromFailure, pinNames } from "./errors.js";
import { SIGNAL_ONLY, func, options, string } from "./options.js";
import { fromJson, jsonCallback, toJson } from "./json.js";
import { ASYNC_DISPOSE, CORE, attempt, inspectable, run } from "./binding.js";

/** @typedef {import("./binding.js").Lazy<import("./fencepost.js").Fencepost>} LazyDb */
/** @typedef {import("./fencepost.js").Lease} CoreLease */

const LEASE_OPTIONS = /** @type {const} */ ({
  ttl: "number", holder: "string", stealIfExpired: "boolean", stateFn: "function", wait: "number", signal: "signal",
});
const WITH_LEASE_OPTIONS = /** @type {const} */ ({ ...LEASE_OPTIONS, every: "number" });
const ATTACH_OPTIONS = /** @type {const} */ ({ holder: "string", ttl: "number", signal: "signal" });

/** `db.lease(key, opts)`: a `Lease`, or null when held by someone else. @param {LazyDb} db @param {string} key @param {any} opts */
export async function acquire(db, key, opts) {
  string(key, "key");
  if (opts === undefined || opts === null) {
    throw new InvalidArgument("lease options {ttl, holder?, stealIfExpired?, stateFn?} are required");
  }
  const o = options(opts, LEASE_OPTIONS, "lease options");
  if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("lease options.ttl (seconds) is required");
  const ttl = o.ttl;
  const stateFn = o.stateFn ? jsonCallback(o.stateFn, "stateFn's result") : undefined;
  return handle(await run(() => db.get().lease(key, ttl, o.holder, o.stealIfExpired, stateFn, o.wait, o.signal)));
}

/** `db.attachLease(key, {holder, ttl})`: one read, no write. @param {LazyDb} db @param {string} key @param {any} opts */
export async function attach(db, key, opts) {
  string(key, "key");
  const { holder, ttl, signal } = options(opts, ATTACH_OPTIONS, "attachLease options");
  if (holder === undefined || holder === null) throw new InvalidArgument("attachLease options.holder is required");
  if (ttl === undefined || ttl === null) throw new InvalidArgument("attachLease options.ttl (seconds) is required");
  return handle(await run(() => db.get().attachLease(key, holder, ttl, signal)));
}

/** `db.cooperativeWrite(key, fn)`: the new state, or null. @param {LazyDb} db @param {string} key @param {Function} fn @param {any} opts */
export async function cooperativeWrite(db, key, fn, opts) {
  string(key, "key");
  func(fn, "cooperativeWrite's second argument");
  const { signal } = options(opts, SIGNAL_ONLY, "cooperativeWrite options");
  const transition = jsonCallback(fn, "the callback's result");
  return fromJson(await run(() => db.get().cooperativeWrite(key, transition, signal)));
}

const BREAK_OPTIONS = /** @type {const} */ ({ state: "any", signal: "signal" });

/**
 * `db.breakLease(key, {state?})`: write the next epoch as released, so the stuck holder is fenced
 * (its next write rejects with `LeaseLost`, reason "stolen") and the next acquirer gets a higher
 * epoch. `null` without a lease document, else `{key, epoch, previous}`. Two requests.
 * @param {LazyDb} db @param {string} key @param {any} opts
 */
export async function breakLease(db, key, opts) {
  string(key, "key");
  const o = options(opts, BREAK_OPTIONS, "breakLease options");
  const state = opts != null && Object.hasOwn(opts, "state") && o.state !== undefined ? toJson(o.state, "breakLease options.state") : undefined;
  const broken = await run(() => db.get().breakLease(key, state, o.signal));
  if (broken === null) return null;
  const [epoch, view] = broken;
  const { epoch: was, holder, deadlineAt, expired, released } = leaseView(view);
  return { key, epoch, previous: { epoch: was, holder, deadlineAt, expired, released } };
}

/**
 * A judged lease period from the core (`inspect`'s lease, `breakLease`'s previous one) as
 * `{epoch, holder, deadlineAt, expired, released, expiresIn, state}`.
 * @param {any[]} view
 */
export function leaseView(view) {
  const [epoch, holder, deadlineMs, expired, released, expiresIn, state] = view;
  const deadlineAt = deadlineMs === undefined ? null : new Date(deadlineMs);
  return { epoch, holder, deadlineAt, expired, released, expiresIn, state: JSON.parse(state) };
}

/** A core lease (or null) as a handle. @param {CoreLease | null | undefined} inner */
function handle(inner) {
  return inner ? new Lease(inner) : null;
}

/**
 * `db.withLease(key, opts, fn)`: acquire (waiting up to `wait` seconds), keep the lease alive while
 * `fn(lease, signal)` runs, release it when `fn` settles (also when it throws). Resolves to `fn`'s
 * result, or `null` without calling `fn` when the lease could not be acquired. The core runs it
 * (`with_lease`), so Rust and JS behave the same: `signal` aborts when the lease is lost (or the
 * caller's `signal` aborts), `fn` runs on to its end, and then the call rejects with `fn`'s error,
 * else with the `LeaseLost` (its work was not fenced to the end); a failed release after `fn`
 * resolved rejects with that failure, while `fn`'s own error is never hidden by one.
 * @param {LazyDb} db @param {string} key @param {any} opts @param {Function} fn
 */
export async function withLease(db, key, opts, fn) {
  func(fn, "withLease's third argument");
  if (opts === undefined || opts === null) throw new InvalidArgument("withLease options {ttl, ...} are required");
  const o = options(opts, WITH_LEASE_OPTIONS, "withLease options");
  if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("withLease options.ttl (seconds) is required");
  const ttl = o.ttl;
  const stateFn = o.stateFn ? jsonCallback(o.stateFn, "stateFn's result") : undefined;
  const body = (/** @type {CoreLease} */ inner) => {
    const lease = new Lease(inner);
    const signal = o.signal ? AbortSignal.any([lease.signal, o.signal]) : lease.signal;
    // Keep-alive runs inside the core: the handle hears from it when the period ends.
    Promise.resolve(inner.whenEnded()).then(() => lease[FOLLOW_END]());
    return fn(lease, signal);
  };
  return run(() => db.get().withLease(key, ttl, o.holder, o.stealIfExpired, stateFn, o.wait, o.every, body, o.signal));
}

/** Package-private: a handle's `signal` catches up with the core (see `withLease`). */
const FOLLOW_END = Symbol("fencepost.followEnd");

const live = (/** @type {(core: CoreLease) => unknown} */ read) => ({
  enumerable: true,
  get() {
    return read(/** @type {any} */ (this)[CORE]());
  },
});
const LIVE_FIELDS = {
  state: live((c) => JSON.parse(c.stateJson)),
  deadlineAt: live((c) => new Date(c.deadlineMs)),
  etag: live((c) => c.etag ?? undefined),
  released: live((c) => c.released),
};

/** One ownership period `(key, epoch, holder)`. Every write is guarded; `LeaseLost` means stop. */
export class Lease {
  /** @type {CoreLease} */
  #core;
  #holder;
  /** Made when `signal` is first asked for (an AbortController per lease is not free). */
  /** @type {AbortController | undefined} */
  #ended;
  /** @type {{stop(): Promise<void>} | undefined} */
  #keeper;

  /** @internal */
  constructor(/** @type {CoreLease} */ inner) {
    if (inner === undefined) throw new InvalidArgument("a Lease is made by db.lease() or db.attachLease()");
    this.#core = inner;
    /** @readonly @type {string} */
    this.key = inner.key;
    this.#holder = inner.holder;
    /** The fence token: strictly increases with each acquisition. @readonly @type {number} */
    this.epoch = inner.epoch;
    /** @readonly @type {number} */
    this.ttl = inner.ttl;
    /** The state this handle last saw or wrote. @readonly @type {any} */
    this.state;
    /** @readonly @type {Date} */
    this.deadlineAt;
    /** @readonly @type {string | undefined} */
    this.etag;
    /** @readonly @type {boolean} */
    this.released;
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
    this.#ended ??= new AbortController();
    this.#follow();
    return this.#ended.signal;
  }

  /** The core handle, whose getters give what changes with each write (see LIVE_FIELDS). */
  [CORE]() {
    return this.#core;
  }

  /** The core says the period is over: abort `signal`. */
  [FOLLOW_END]() {
    this.#follow();
  }

  /**
   * Abort `signal` (if anyone asked for it) once the core says the period is over. `lost`: the
   * `LeaseLost` a call just rejected with, which is the core's reason then (the first one wins).
   * A reason is only made when a signal is there to carry it: an Error's stack is costly.
   * @param {unknown} [lost]
   */
  #follow(lost) {
    if (!this.#ended || this.#ended.signal.aborted) return;
    const reason = this.#core.ended;
    if (reason !== undefined) this.#ended.abort(lost instanceof LeaseLost ? lost : fromFailure(reason));
  }

  /**
   * One call through the handle; the period may be over after it, which aborts `signal`.
   * @template T @param {() => Promise<T>} call @returns {Promise<T>}
   */
  async #call(call) {
    try {
      return await run(call);
    } catch (e) {
      this.#follow(e);
      throw e;
    } finally {
      this.#follow();
    }
  }

  /** deadline = now + ttl; the state is kept (cooperative writes absorbed). */
  async renew(/** @type {any} */ opts) {
    const { signal } = options(opts, SIGNAL_ONLY, "renew options");
    await this.#call(() => this.#core.renew(signal));
  }

  /** Guarded read-modify-write of the state; resolves to the state written. */
  async updateState(/** @type {Function} */ fn, /** @type {any} */ opts) {
    func(fn, "updateState's argument");
    const { signal } = options(opts, SIGNAL_ONLY, "updateState options");
    const transition = jsonCallback(fn, "updateState's result");
    return JSON.parse(await this.#call(() => this.#core.updateState(transition, signal)));
  }

  /** Guarded replace of the state (unseen cooperative writes are discarded). */
  async write(/** @type {unknown} */ state, /** @type {any} */ opts) {
    const { signal } = options(opts, SIGNAL_ONLY, "write options");
    const json = toJson(state, "state");
    return JSON.parse(await this.#call(() => this.#core.write(json, signal)));
  }

  /** holder = null, deadline = now; `{state}` optionally sets a final state. @param {any} [opts] */
  async release(opts) {
    const o = options(opts, { state: "any", signal: "signal" }, "release options");
    const hasState = opts != null && Object.hasOwn(opts, "state") && opts.state !== undefined;
    const json = hasState ? toJson(o.state, "release options.state") : undefined;
    await this.#call(() => this.#core.release(json, o.signal));
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
    const over = this.#core.ended;
    if (over !== undefined) throw fromFailure(over);
    const stop = new AbortController();
    const running = attempt(() => this.#core.keepAlive(every, stop.signal));
    // However it ends (stopped, released, lost), the core knows whether the period is over.
    const done = Promise.resolve(running).then(() => this.#follow(), (e) => this.#follow(fromFailure(e)));
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
    if (this.#core.ended !== undefined) return;
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
pinNames({ Lease });
inspectable(Lease, (l) => {
  const { key, epoch, ttl, state, deadlineAt, etag, released } = l;
  return { key, epoch, holder: "[redacted]", ttl, state, deadlineAt, etag, released };
});
