// semaphore: at most `limit` holders of a key at once, each permit a fenced lease on one of the
// slots `key/0` … `key/<limit - 1>` (the core's `Semaphore`). The handle is plain data.

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, func, options, string } from "./options.js";
import { fixedFields, handleClasses, isReady, run, runSync } from "./binding.js";
import { leaseHandle, withHeld } from "./lease.js";
import { checked } from "./events.js";

const SEMAPHORE_OPTIONS = /** @type {const} */ ({ limit: "number", ttl: "number" });
const ACQUIRE_OPTIONS = /** @type {const} */ ({ holder: "string", wait: "number", signal: "signal" });
const WITH_PERMIT_OPTIONS = /** @type {const} */ ({ ...ACQUIRE_OPTIONS, every: "number" });

/**
 * `db.semaphore(key, {limit, ttl})`: the handle (no request). The core judges the key, `limit`
 * and `ttl` here where the wasm is loaded (else on the first call, in a browser before it is).
 * @param {import("./binding.js").Recipe} db @param {string} key @param {any} opts
 */
export function openSemaphore(db, key, opts) {
  // A refusal is reported as a call's is (one event, no requests), though nothing is sent.
  return checked(db, "semaphore", key, () => {
    string(key, "key");
    if (opts === undefined || opts === null) throw new InvalidArgument("semaphore options {limit, ttl} are required");
    const { limit, ttl } = options(opts, SEMAPHORE_OPTIONS, "semaphore options");
    if (limit === undefined || limit === null) throw new InvalidArgument("semaphore options.limit is required");
    if (ttl === undefined || ttl === null) throw new InvalidArgument("semaphore options.ttl (seconds) is required");
    if (isReady()) runSync("semaphore.open", db, { args: { key, limit, ttl } });
    return new Semaphore(db, key, limit, ttl);
  });
}

/** At most `limit` unexpired permits at once; each permit a `Lease` whose `epoch` fences its holder. */
export class Semaphore {
  #db;

  /** @internal */
  constructor(/** @type {import("./binding.js").Recipe} */ db, /** @type {string} */ key, /** @type {number} */ limit, /** @type {number} */ ttl) {
    if (key === undefined) throw new InvalidArgument("a Semaphore is made by db.semaphore(key, {limit, ttl})");
    this.#db = db;
    /** @readonly @type {string} */
    this.key;
    /** @readonly @type {number} */
    this.limit;
    /** @readonly @type {number} */
    this.ttl;
    fixedFields(this, { key, limit, ttl });
  }

  /** The named arguments naming this semaphore. */
  #args() {
    return { key: this.key, limit: this.limit, ttl: this.ttl };
  }

  /** A permit (a `Lease` on a free or expired slot), or null when all are held (after `wait` seconds). */
  async acquire(/** @type {any} */ opts) {
    const o = checked(this.#db, "semaphore.acquire", this.key, () => options(opts, ACQUIRE_OPTIONS, "acquire options"));
    const args = { ...this.#args(), holder: o.holder ?? undefined, wait: o.wait ?? undefined };
    return leaseHandle(this.#db, await run("semaphore.acquire", this.#db, { args, signal: o.signal }));
  }

  /**
   * Run `fn(permit, signal)` holding a permit kept alive meanwhile, released when `fn` settles (as
   * `withLease`); `withPermit(fn)` without options.
   * @param {any} opts @param {Function} [fn]
   */
  async withPermit(opts, fn) {
    if (typeof opts === "function" && fn === undefined) [opts, fn] = [undefined, opts];
    const o = checked(this.#db, "semaphore.withPermit", this.key, () => {
      func(fn, "withPermit's function");
      return options(opts, WITH_PERMIT_OPTIONS, "withPermit options");
    });
    const args = { ...this.#args(), holder: o.holder ?? undefined, wait: o.wait ?? undefined, every: o.every ?? undefined };
    return await withHeld(this.#db, "semaphore.withPermit", { args, signal: o.signal }, /** @type {Function} */ (fn));
  }

  /** The unexpired permits: `[{slot, epoch, holder, deadlineAt}]`, by slot. */
  async holders(/** @type {any} */ opts) {
    const { signal } = checked(this.#db, "semaphore.holders", this.key, () => options(opts, SIGNAL_ONLY, "holders options"));
    /** @type {{slot: number, epoch: number, holder: string, deadlineMs: number}[]} */
    const permits = (await run("semaphore.holders", this.#db, { args: this.#args(), signal })).json;
    return permits.map(({ slot, epoch, holder, deadlineMs }) => ({ slot, epoch, holder, deadlineAt: new Date(deadlineMs) }));
  }
}
handleClasses({ Semaphore });
