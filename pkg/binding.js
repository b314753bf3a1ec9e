// The one way the classes above reach the wasm core: core objects made on first use (`Lazy`), core
// calls whose failures become typed errors in the caller's own stack (`run`, `attempt`), the
// package-private symbols that reach a handle's core object, and how handles show in inspectors.
//
// Handles never expose wasm objects: memory is reclaimed by the garbage collector (no `free()`), and
// a handle whose period is over rejects with a typed error, never a null-pointer message.

import { core, initWasm, isReady } from "./runtime.js";
import { fromFailure } from "./errors.js";

export { core, isReady };

const INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");
/** `Symbol.asyncDispose`, or the name TypeScript's `await using` falls back to where there is none. @type {typeof Symbol.asyncDispose} */
export const ASYNC_DISPOSE = /** @type {typeof Symbol.asyncDispose} */ (Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose"));
/** Package-private access to a handle's core object (not exported by the package's entries). */
export const CORE = Symbol("fencepost.core");
/** Package-private brand of `fencepost/testing`'s manual clocks (other handles have a CORE too). */
export const MANUAL_CLOCK = Symbol("fencepost.manualClock");

/**
 * A synchronous core call, its failure record thrown as the typed error.
 * @template T @param {() => T} call @returns {T}
 */
export function attempt(call) {
  try {
    return call();
  } catch (e) {
    throw fromFailure(e);
  }
}

/**
 * A core object made on first use: at once where the wasm is already instantiated (so bad settings
 * throw from the constructor), on the first call otherwise (the browser entry loads the wasm then).
 * @template T
 */
export class Lazy {
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
      this.value = attempt(this.make);
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
export async function run(call) {
  if (!isReady()) await initWasm();
  try {
    return await call();
  } catch (e) {
    throw fromFailure(e);
  }
}

/**
 * `util.inspect` / Deno inspect / `console.log` of a handle: its class's (pinned) name and `fields`.
 * @param {Function} Class @param {(self: any) => object} fields
 */
export function inspectable(Class, fields) {
  Object.defineProperty(Class.prototype, INSPECT, {
    value(/** @type {number} */ _depth, /** @type {any} */ opts, /** @type {any} */ inspect) {
      return `${Class.name} ${inspect ? inspect(fields(this), opts) : JSON.stringify(fields(this))}`;
    },
  });
  Object.defineProperty(Class.prototype, DENO_INSPECT, {
    value(/** @type {any} */ inspect, /** @type {any} */ opts) {
      return `${Class.name} ${inspect(fields(this), opts)}`;
    },
  });
}
