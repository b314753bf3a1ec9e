// The testing toolkit's fault store and manual clock (re-exported by fencepost/testing): thin
// handles on the core's FaultStore and ManualClock, which judge every fault and a clock's start.

import { InvalidArgument, TimeoutError } from "./errors.js";
import { finite, options } from "./options.js";
import { MANUAL_CLOCK, RECIPE, handleClasses, holdsState, isReady, nextId, runSync } from "./binding.js";
import { Store, toStore } from "./stores.js";

const INJECT_OPTIONS = /** @type {const} */ ({ op: "string", key: "string", times: "number" });
const FAULT_OPTIONS = /** @type {const} */ ({ status: "number", code: "string", delay: "number" });

/** Only `faultStore()` makes fault stores (their options are judged there). */
const FAULT_TOKEN = Symbol("fencepost.faultStore");

/** A store wrapper that injects faults and counts requests. */
export class FaultStore extends Store {
  /** @internal */
  constructor(/** @type {Store} */ inner, /** @type {ManualClock | undefined} */ clock, /** @type {number | undefined} */ timeout,
    /** @type {symbol} */ token) {
    if (token !== FAULT_TOKEN || !(inner instanceof Store)) throw new InvalidArgument("a FaultStore is made by faultStore(store)");
    super("fault", { inner: inner[RECIPE], clock: clock?.[RECIPE], timeout }, { inner });
    /** @type {"fault"} */
    this.kind;
  }

  /**
   * Apply `fault` to the next `times` (default 1) requests matching `op` (get | put | delete | list;
   * any when omitted — a lost response: puts) and `key` (a key prefix):
   * `"lostResponse"` (the request is carried out, its answer lost), `"transport"` (nothing is
   * sent), `"conflict"` (a competing write of the same bytes lands just before a put), `"hang"`
   * (never answered: it fails after the store's `timeout`, 30 s by default, nothing applied), `{status}`
   * (e.g. 500, 503, 429, 409; optional S3 `code`), `{delay: seconds}` (on the manual clock when
   * the store was made with one).
   */
  inject(/** @type {any} */ fault, /** @type {any} */ opts) {
    const o = options(opts, INJECT_OPTIONS, "inject options");
    const f = fault !== null && typeof fault === "object" ? options(fault, FAULT_OPTIONS, "fault") : null;
    const kind = typeof fault === "string" ? fault : undefined;
    this.#bound("store.inject", { kind, status: f?.status ?? undefined, code: f?.code ?? undefined, delay: f?.delay ?? undefined,
      op: o.op ?? undefined, key: o.key ?? undefined, times: o.times ?? undefined });
    return this;
  }

  /**
   * Answer 429 (`SlowDown`) to writes (PUT, DELETE) past `perKey` to one key within a second, as
   * R2 does past one write per second per key; `null` lifts the limit. Seconds are the manual
   * clock's when the store was made with one.
   */
  limitWrites(/** @type {any} */ opts) {
    const perKey = opts === null ? null : options(opts, { perKey: "number" }, "limitWrites options").perKey;
    if (opts !== null && perKey == null) throw new InvalidArgument("limitWrites needs {perKey}, or null to lift the limit");
    this.#bound("store.limitWrites", { perKey: perKey ?? undefined });
    return this;
  }

  /**
   * Answer nothing for `seconds` from now (on the manual clock when the store was made with one),
   * then resume: a request made meanwhile waits for the pause to end, or fails as unanswered
   * after the store's `timeout` when the pause outlasts it.
   */
  pause(/** @type {number} */ seconds) {
    finite(seconds, "pause(seconds)");
    this.#bound("store.pause", { seconds });
    return this;
  }

  /** Forget every fault not yet applied. */
  clearFaults() {
    if (isReady()) this.#bound("store.clearFaults", {});
  }

  /** A call on this store's rules. @param {string} op @param {Record<string, unknown>} args */
  #bound(op, args) {
    if (!isReady()) throw new InvalidArgument("fencepost is not loaded yet: await initWasm() before injecting faults");
    runSync(op, this[RECIPE], { args });
  }
}

/**
 * Wrap any store (or an R2 binding) to inject faults; `{clock}` makes injected delays, hangs and
 * pauses manual; `{timeout}` (seconds, default 30) is how long a hung or paused request waits
 * before it fails as unanswered.
 */
export function faultStore(/** @type {any} */ store, /** @type {any} */ opts) {
  const { clock, timeout } = options(opts, { clock: "object", timeout: "number" }, "faultStore options");
  if (clock != null && !(clock instanceof ManualClock)) throw new InvalidArgument("faultStore options.clock must be a manualClock()");
  return new FaultStore(toStore(store), clock ?? undefined, timeout ?? undefined, FAULT_TOKEN);
}

/** A clock that moves only when told to; pass it as `new Fencepost(store, {clock})`. */
export class ManualClock {
  /** The clock as the core knows it (its time is held there, under this id). */
  #recipe;
  /** Where the latest `advance()` takes time to (ms). */
  #target = -Infinity;

  /** @internal */
  constructor(/** @type {number | undefined} */ startMs) {
    if (!isReady()) {
      throw new InvalidArgument("fencepost is not loaded yet: await initWasm() before creating a manualClock (browsers)");
    }
    const id = nextId();
    this.#recipe = { id, start: startMs };
    holdsState(this, id);
    this.now(); // made at once: the core's message names manualClock(start) itself
  }

  /** @internal */
  get [RECIPE]() {
    return this.#recipe;
  }

  /** @internal */
  get [MANUAL_CLOCK]() {
    return true;
  }

  /** Milliseconds since the epoch, as `Date.now()`. */
  now() {
    return /** @type {number} */ (runSync("clock.now", this.#recipe).json);
  }

  /**
   * Move time forward by `seconds`, running every wait fencepost made that falls due, in due order
   * (backoff, keep-alive, `waitFor` polls, `lease({wait})`, a fault store's delays when it was given
   * this clock): each one's continuation runs before time moves on. Resolves once they have. Advances made while another
   * runs add up (`advance(5)` and `advance(3)` together take time 8 s on), and time never goes back.
   */
  async advance(/** @type {number} */ seconds) {
    if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) {
      throw new InvalidArgument("advance(seconds) needs a finite number of seconds >= 0");
    }
    // Advances add up: one made while another runs moves time on from where that one is going.
    const target = (this.#target = Math.max(this.now(), this.#target) + seconds * 1000);
    // Calls made just before (`const p = db.claim(…); await clock.advance(1)`) have not started
    // their waits yet: let them, then fire timers one due instant at a time. Bounded, so a task
    // that keeps re-arming a due timer cannot hang the test, nor a request that never settles.
    const ioDeadline = Date.now() + 60_000;
    await this.#settle(ioDeadline);
    let steps = 0;
    for (; runSync("clock.stepUntil", this.#recipe, { args: { until: target } }).json && steps < MAX_STEPS; steps++) {
      await this.#settle(ioDeadline);
    }
    await this.#settle(ioDeadline);
    if (steps < MAX_STEPS) return;
    // Stopped short (a task re-arming a due timer forever, or waits too many for one advance): the
    // next advance starts from now, and this one says so rather than resolving as if time had come.
    const reached = this.now();
    if (this.#target === target) this.#target = reached;
    const left = (target - reached) / 1000;
    if (left > 0) {
      throw new TimeoutError(`advance(${seconds}) stopped ${left} s short of its end: ${MAX_STEPS} due instants ran (a wait re-armed as it fell due, or too many waits for one advance: advance in smaller steps)`, { timeout: seconds });
    }
  }

  /**
   * Let woken tasks run: a macrotask drains what they queue on the memory store; against a real
   * store (S3, R2) also wait, in real time until `ioDeadline`, for the requests made since this
   * clock was to be answered.
   */
  async #settle(/** @type {number} */ ioDeadline) {
    await macrotask();
    while (runSync("clock.ioInFlight", this.#recipe).json > 0 && Date.now() < ioDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      await macrotask();
    }
  }

  toJSON() {
    return { now: new Date(this.now()).toISOString() };
  }
}
handleClasses({ FaultStore, ManualClock });

/** `manualClock(start?)`: start is a Date or ms since the epoch (the core's default when not given). */
export function manualClock(/** @type {Date | number | undefined} */ start) {
  const ms = start instanceof Date ? start.getTime() : start;
  if (ms !== undefined) finite(ms, "manualClock(start) (a Date or ms since the epoch)");
  return new ManualClock(ms);
}

/** One macrotask: every microtask queued before it has run. */
/** Due instants one `advance` runs at most: a task that re-arms a due timer cannot hang a test. */
const MAX_STEPS = 100_000;

function macrotask() {
  // `setImmediate` where the host has it (Node, Bun): `setTimeout(0)` waits at least 1 ms there,
  // which a long `advance` pays once per due instant.
  const { setImmediate } = /** @type {any} */ (globalThis);
  return new Promise((resolve) => (setImmediate ? setImmediate(resolve) : setTimeout(resolve, 0)));
}
