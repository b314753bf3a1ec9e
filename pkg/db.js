// The `Fencepost` class: the whole API on one store, each method handing over to the module that
// does it (claim.js, lease.js, doc.js, inspect.js, objects.js). Its own work is its options: retries, the
// clock and the event listener, kept as its recipe (plain data the core builds its `Fencepost`
// from, and keeps built in a bounded table).

import { InvalidArgument } from "./errors.js";
import { options } from "./options.js";
import { listener } from "./events.js";
import { MANUAL_CLOCK, RECIPE, handleClasses, isReady, nextId, runSync } from "./binding.js";
import { toStore } from "./stores.js";
import { claim } from "./claim.js";
import { acquire, attach, breakLease, cooperativeWrite, withLease } from "./lease.js";
import { inspect, prune } from "./inspect.js";
import { openDoc } from "./doc.js";
import { openCounter } from "./counter.js";
import { Objects } from "./objects.js";
import { once } from "./once.js";
import { openSemaphore } from "./semaphore.js";
import { watch } from "./watch.js";

const FENCEPOST_OPTIONS = /** @type {const} */ ({ retry: "object", now: "function", clock: "any", onEvent: "function" });
const RETRY_OPTIONS = /** @type {const} */ ({ maxAttempts: "number", baseDelay: "number", maxDelay: "number" });

/** `new Fencepost(store, options?)`: claim, lease, doc and objects on one store. */
export class Fencepost {
  /** What the core builds this `Fencepost` from. @type {import("./binding.js").Recipe} */
  #recipe;
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
    /** The store this instance talks to. @type {import("./stores.js").Store} */
    this.store = toStore(store);
    const onEvent = o.onEvent ? listener(/** @type {any} */ (o.onEvent)) : undefined;
    this.#recipe = {
      id: nextId(), store: this.store[RECIPE], now: o.now ?? undefined, storeClock, manual: manual?.[RECIPE],
      onEvent, maxAttempts: r.maxAttempts ?? undefined, baseDelay: r.baseDelay ?? undefined, maxDelay: r.maxDelay ?? undefined,
    };
    // Bad settings throw from the constructor where the wasm is loaded (else from the first call).
    if (isReady()) runSync("open", this.#recipe);
  }

  /** Put-if-absent: `{won, key, value, etag}`; losers get the winner's value. */
  claim(/** @type {string} */ key, /** @type {unknown} */ value, /** @type {any} */ opts) {
    return claim(this.#recipe, key, value, opts);
  }

  /** Acquire a lease: a `Lease`, or null when held by someone else. */
  lease(/** @type {string} */ key, /** @type {any} */ opts) {
    return acquire(this.#recipe, key, opts);
  }

  /** Run `fn(lease, signal)` under a lease kept alive meanwhile, released when `fn` settles. */
  withLease(/** @type {string} */ key, /** @type {any} */ opts, /** @type {Function} */ fn) {
    return withLease(this.#recipe, key, opts, fn);
  }

  /** Change a lease's state from outside (not fenced): the new state, or null if there is no lease. */
  cooperativeWrite(/** @type {string} */ key, /** @type {Function} */ fn, /** @type {any} */ opts) {
    return cooperativeWrite(this.#recipe, key, fn, opts);
  }

  /** Re-attach to the holder's current period: a `Lease`, or null. One read, no write. */
  attachLease(/** @type {string} */ key, /** @type {any} */ opts) {
    return attach(this.#recipe, key, opts);
  }

  /** What `key` holds (a lease with its period, JSON, or bytes), or null. One request, nothing written. */
  inspect(/** @type {string} */ key, /** @type {any} */ opts) {
    return inspect(this.#recipe, key, opts);
  }

  /** Delete what is older than `olderThan` seconds under `prefix`, never a held lease: `{deleted, kept, keys}`. */
  prune(/** @type {string} */ prefix, /** @type {any} */ opts) {
    return prune(this.#recipe, prefix, opts);
  }

  /** Break a lease, fencing-safe: the next epoch, released; `{key, epoch, previous}`, or null. */
  breakLease(/** @type {string} */ key, /** @type {any} */ opts) {
    return breakLease(this.#recipe, key, opts);
  }

  /** Run `fn(signal)` once per key, its result recorded: `{status: "done", value, ran}` or `{status: "running", deadlineAt}`. */
  once(/** @type {string} */ key, /** @type {Function} */ fn, /** @type {any} */ opts) {
    return once(this.#recipe, key, fn, opts);
  }

  /** At most `limit` holders at once, each permit a fenced lease: `{acquire, withPermit, holders}`. */
  semaphore(/** @type {string} */ key, /** @type {any} */ opts) {
    return openSemaphore(this.#recipe, key, opts);
  }

  /** The key's state, then each change of it, as an async iterable (polled with conditional reads). */
  watch(/** @type {string} */ key, /** @type {any} */ opts) {
    return watch(this.#recipe, key, opts);
  }

  /** A handle on a JSON document; `{schema}`: any Standard Schema (zod, valibot, arktype…). */
  doc(/** @type {string} */ key, /** @type {any} */ opts) {
    return openDoc(this.#recipe, key, opts);
  }

  /** A sharded counter: `{add(n = 1), value()}` over `shards` (default 16) docs at `key/<i>`. */
  counter(/** @type {string} */ key, /** @type {any} */ opts) {
    return openCounter(this.#recipe, key, opts);
  }

  /** Layer 0 (get / conditional put / delete / list / waitFor) on the same store. */
  get objects() {
    return (this.#objects ??= new Objects(this.store, this.#recipe));
  }
}
handleClasses({ Fencepost });


/** `objects(store, options?)`: layer 0 on its own (the same as `new Fencepost(store, options).objects`). */
export function objects(/** @type {any} */ store, /** @type {any} */ settings) {
  return new Fencepost(store, settings).objects;
}
