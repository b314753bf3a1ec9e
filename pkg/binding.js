// The one way the classes above reach the wasm core: `call(op, id, target, args, callbacks, signal)`.
// `target` is the handle's recipe — plain data (ids, settings, options) — never a wasm object, and
// `id` its id beside it (the core reads the recipe itself only when it builds from it);
// `args` are the call's named arguments, sent as JSON text; replies come back as JSON text (with
// bytes or a failure record beside it when needed). Failures become typed errors in the caller's
// own stack (`run`, `attempt`).
//
// No handle owns wasm memory (the memory rule, docs/api.md): what the core keeps between calls is
// bounded or freed at a known moment, so a program that drops its handles without a garbage
// collection ever running keeps a flat wasm memory.

import { core, isReady, whenReady } from "./runtime.js";
import { fromFailure, pinNames } from "./errors.js";
import { callEventsHeard, refused } from "./events.js";

export { isReady };

const INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");
const EDGE_INSPECT = Symbol.for("edge-runtime.inspect.custom");
/** `Symbol.asyncDispose`, or the name TypeScript's `await using` falls back to where there is none. @type {typeof Symbol.asyncDispose} */
export const ASYNC_DISPOSE = /** @type {typeof Symbol.asyncDispose} */ (Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose"));
/** Package-private access to a handle's recipe (not exported by the package's entries). */
export const RECIPE = Symbol("fencepost.recipe");
/** Package-private brand of `fencepost/testing`'s manual clocks. */
export const MANUAL_CLOCK = Symbol("fencepost.manualClock");

/**
 * A `Fencepost` as the core builds it: plain data and the user's functions, nothing of the core's.
 * @typedef {{id: number, store: object, now?: Function, storeClock: boolean, manual?: object,
 *   onEvent?: Function, maxAttempts?: number, baseDelay?: number, maxDelay?: number}} Recipe
 */

let lastId = 0;
/** A fresh id for a handle's recipe (the core's tables are keyed by it). */
export function nextId() {
  return ++lastId;
}

/**
 * Handles whose recipe names state the core holds for them (a memory store's objects, a fault
 * store's faults, a manual clock's time): when the runtime collects the handle, the core forgets
 * the state. Only these test doubles hold anything, and it is the user's own data, as a `Map` of
 * theirs would be; every other handle is plain data.
 */
const forget = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry((/** @type {number} */ id) => {
    if (isReady()) core.call("drop", 0, undefined, JSON.stringify({ id }), undefined, undefined);
  })
  : undefined;

/** Forget `id`'s state in the core once `handle` is collected. @param {object} handle @param {number} id */
export function holdsState(handle, id) {
  forget?.register(handle, id);
}

/**
 * The JSON text of a call's named arguments: `args` (plain values) and `raw` (JSON text already
 * checked by `toJson`: a user's value), absent ones left out.
 * @param {Record<string, unknown>} args @param {Record<string, string | undefined>} [raw]
 */
function encode(args, raw) {
  const head = JSON.stringify(args);
  if (raw === undefined) return head;
  let out = head.slice(0, -1);
  let comma = head.length > 2;
  for (const name in raw) {
    const text = raw[name];
    if (text === undefined) continue;
    out += `${comma ? "," : ""}${JSON.stringify(name)}:${text}`;
    comma = true;
  }
  return out + "}";
}

/**
 * The core's `call` for `op` on `target` (its id beside it, 0 for none): its raw reply, or a throw.
 * @param {string} op @param {unknown} target @param {Call} c
 */
function send(op, target, c) {
  const id = /** @type {{id?: number} | undefined} */ (target)?.id ?? 0;
  return core.call(op, id, target, encode(c.args ?? {}, c.raw), c.callbacks, c.signal ?? undefined);
}

/**
 * @typedef {{json: any, bytes?: Uint8Array, ended?: unknown, failure?: unknown, lease?: string, kept?: number}} Reply
 * @typedef {{args?: Record<string, unknown>, raw?: Record<string, string | undefined>,
 *   callbacks?: {fn?: Function, stateFn?: Function, data?: Uint8Array, lease?: string, stop?: AbortSignal}, signal?: AbortSignal | null}} Call
 */

/** A reply from the core: JSON text alone, or `{json, bytes?, ended?, failure?, lease?, kept?}` (`lease` stays text). @returns {Reply} */
function decode(/** @type {any} */ r) {
  if (typeof r === "string") return { json: JSON.parse(r) };
  r.json = JSON.parse(r.json);
  return r;
}

/**
 * Run one core call for an API method: wait for the wasm if needed, and turn the core's failure
 * records into typed errors here — in the async chain of the caller, so their stack shows the
 * caller's own frame. (`signal`s are passed through to the core, which stops waits and retries
 * and settles a write in flight before it rejects.)
 * @param {string} op @param {unknown} target @param {Call} [c]
 * @returns {Promise<Reply>}
 */
export async function run(op, target, c = {}) {
  if (!isReady()) await whenReady();
  const heard = callEventsHeard();
  /** @type {unknown} */
  let sent;
  try {
    sent = send(op, target, c);
  } catch (e) {
    const error = fromFailure(e, c.args?.key);
    // Refused synchronously with no call event: the binding refused it before the core's API did.
    throw callEventsHeard() === heard ? refused(/** @type {any} */ (target), METHODS[op] ?? op, c.args?.key, error) : error;
  }
  try {
    return decode(await sent);
  } catch (e) {
    throw fromFailure(e, c.args?.key);
  }
}

/** The API method a core op reports its call events under, where the two names differ. @type {Record<string, string>} */
const METHODS = { "objects.entriesPage": "objects.entries", "watch.next": "watch" };

/**
 * A core call that answers at once (settings checks, counts, a manual clock), its failure record
 * thrown as the typed error.
 * @param {string} op @param {unknown} target @param {Call} [c] @returns {Reply}
 */
export function runSync(op, target, c = {}) {
  try {
    return decode(send(op, target, c));
  } catch (e) {
    throw fromFailure(e, c.args?.key);
  }
}

/**
 * A core call that starts at once and settles later (keep-alive): the Promise of its reply.
 * @param {string} op @param {unknown} target @param {Call} c @returns {Promise<Reply>}
 */
export function start(op, target, c) {
  let started;
  try {
    started = send(op, target, c);
  } catch (e) {
    throw fromFailure(e, c.args?.key);
  }
  return Promise.resolve(started).then(decode, (e) => {
    throw fromFailure(e, c.args?.key);
  });
}

/**
 * Give `handle` these fields, read-only (as its type says they are: a handle's key or epoch
 * assigned by mistake would show one thing while its calls act on another) and enumerable (shown
 * as fields). Defined new: making an assigned field read-only afterwards costs V8 a map change,
 * about 1 µs per handle.
 * @param {object} handle @param {Record<string, unknown>} values
 */
export function fixedFields(handle, values) {
  for (const name in values) Object.defineProperty(handle, name, { value: values[name], enumerable: true });
}

/**
 * The handle classes: their names pinned, and inspection showing their own fields (as Node and Deno
 * do by default; Bun would list the prototype's methods and package-private getters too).
 * @param {Record<string, Function>} classes
 */
export function handleClasses(classes) {
  pinNames(classes);
  for (const C of Object.values(classes)) inspectable(C, (self) => ({ ...self }));
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
  // Vercel's Edge Runtime console formats what this returns once more, as a format string: a `%`
  // in a field is doubled so that it prints as itself.
  Object.defineProperty(Class.prototype, EDGE_INSPECT, {
    value(/** @type {{format: (v: unknown) => string}} */ { format }) {
      return `${Class.name} ${format(fields(this))}`.replaceAll("%", "%%");
    },
  });
}
